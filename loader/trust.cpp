#include "loader/trust.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>

#include "loader/plugin_file.h"

namespace etrt::loader {
namespace {

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

bool is_hex_digest(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool running_as_root() { return ::geteuid() == 0; }

// Who besides the owner and root may write: "every user" or "group N".
std::string other_writers(const struct stat& st) {
  if ((st.st_mode & S_IWOTH) != 0) return "every user";
  return "group " + std::to_string(st.st_gid);
}

// Only they may rename an entry of a sticky directory (besides the directory's owner).
bool trusted_owner(uid_t uid, uid_t self) { return uid == 0 || uid == self; }

// The problem with directory `dir` for a lookup in it, or "". `role` says which
// directory it is ("its directory D", "the directory D on its path").
std::string untrusted_directory(const std::string& role, const struct stat& st, bool others_may_write, uid_t self) {
  if (self == 0 && st.st_uid != 0)
    return "refused: " + role + " is owned by uid " + std::to_string(st.st_uid) +
           ", not root, and this process runs as root";
  if (!others_may_write && writable_by_others(st))
    return "refused: " + role + " is writable by " + other_writers(st) + " (mode " + mode_text(st.st_mode) + ")";
  return "";
}

std::deque<std::string> components_of(const std::string& path) {
  std::deque<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

std::string parent_of(const std::string& dir) {
  size_t slash = dir.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
}

std::string join(const std::string& dir, const std::string& name) { return dir == "/" ? "/" + name : dir + "/" + name; }

}  // namespace

bool writable_by_others(const struct stat& st) {
  return (st.st_mode & S_IWOTH) != 0 || ((st.st_mode & S_IWGRP) != 0 && st.st_gid != 0);
}

std::string untrusted_file_reason(const struct stat& st) {
  if ((st.st_mode & S_IWOTH) != 0)
    return "refused: the file is writable by every user (mode " + mode_text(st.st_mode) + ")";
  if (writable_by_others(st))
    return "refused: the file is writable by group " + std::to_string(st.st_gid) + " (mode " + mode_text(st.st_mode) +
           "); only root's group (gid 0) may share write access to a trusted file";
  if (running_as_root() && st.st_uid != 0)
    return "refused: the file is owned by uid " + std::to_string(st.st_uid) +
           ", not root, and this process runs as root";
  return "";
}

PathCheck check_path(const std::string& path) {
  PathCheck check;
  if (path.empty() || path[0] != '/') {
    check.problem = "refused: '" + path + "' is a relative path, resolved against the working directory, which is "
                    "never trusted";
    return check;
  }
  constexpr int kMaxSymlinks = 40;  // the kernel's own limit
  const uid_t self = ::geteuid();
  int symlinks = 0;
  std::string current = "/";
  struct stat current_status;
  if (::stat("/", &current_status) != 0) {
    check.problem = "refused: cannot stat /";
    return check;
  }
  std::deque<std::string> rest = components_of(path);
  while (!rest.empty()) {
    std::string name = std::move(rest.front());
    rest.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      current = parent_of(current);
      if (::stat(current.c_str(), &current_status) != 0) {
        check.problem = "refused: cannot stat " + current + " on the way to " + path;
        return check;
      }
      continue;
    }
    std::string entry = join(current, name);
    struct stat entry_status;
    if (::lstat(entry.c_str(), &entry_status) != 0) {
      if (errno != ENOENT && errno != ENOTDIR && errno != EACCES) {
        check.problem = "refused: cannot examine " + entry + ": " + std::strerror(errno);
        return check;
      }
      // Missing (or hidden from this user, and so from the dynamic loader): whoever may write `current` could add it.
      check.resolved = entry;
      for (const std::string& part : rest) check.resolved = join(check.resolved, part);
      std::string problem = untrusted_directory("the directory " + current + ", where " + name +
                                                    " does not exist yet,", current_status, false, self);
      if (!problem.empty()) check.problem = problem + ": anyone who may write it could create " + entry;
      return check;
    }
    bool last = rest.empty();
    bool sticky_passage = !last && (current_status.st_mode & S_ISVTX) != 0 &&
                          trusted_owner(current_status.st_uid, self) && trusted_owner(entry_status.st_uid, self);
    check.problem = untrusted_directory(last ? "its directory " + current : "the directory " + current + " on its path",
                                        current_status, sticky_passage, self);
    if (!check.problem.empty()) {
      check.exists = last && !S_ISLNK(entry_status.st_mode);
      return check;
    }
    if (S_ISLNK(entry_status.st_mode)) {
      if (++symlinks > kMaxSymlinks) {
        check.problem = "refused: more than " + std::to_string(kMaxSymlinks) + " symbolic links on the way to " + path;
        return check;
      }
      char target[PATH_MAX];
      ssize_t length = ::readlink(entry.c_str(), target, sizeof target - 1);
      if (length < 0) {
        check.problem = "refused: cannot read the symbolic link " + entry;
        return check;
      }
      std::deque<std::string> target_parts = components_of(std::string(target, static_cast<size_t>(length)));
      rest.insert(rest.begin(), target_parts.begin(), target_parts.end());
      if (target[0] == '/') {
        current = "/";
        ::stat("/", &current_status);
      }
      continue;
    }
    current = std::move(entry);
    current_status = entry_status;
  }
  check.resolved = current;
  check.exists = true;
  check.status = current_status;
  return check;
}

AllowList allowlist_from_env() {
  AllowList list;
  const char* file = secure_getenv("ETRT_PLUGIN_ALLOWLIST");
  if (file == nullptr || *file == '\0') return list;
  list.active = true;
  list.source = file;
  std::string text, error;
  if (!read_regular_file(file, 1 << 20, /*check_trust=*/true, &text, &error)) {
    list.error = "ETRT_PLUGIN_ALLOWLIST " + list.source + ": " + error;
    return list;
  }
  size_t line_number = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    size_t first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, last - first + 1);
    if (!is_hex_digest(line)) {
      list.error = "ETRT_PLUGIN_ALLOWLIST " + list.source + ":" + std::to_string(line_number) +
                   ": not a lowercase SHA-256 hex digest: '" + line + "'";
      list.digests.clear();
      return list;
    }
    list.digests.insert(line);
  }
  return list;
}

}  // namespace etrt::loader
