#include "loader/trust.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

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

}  // namespace

std::string untrusted_file_reason(const struct stat& st) {
  if ((st.st_mode & S_IWOTH) != 0)
    return "refused: the file is writable by every user (mode " + mode_text(st.st_mode) + ")";
  if (::geteuid() == 0 && st.st_uid != 0)
    return "refused: the file is owned by uid " + std::to_string(st.st_uid) +
           ", not root, and this process runs as root";
  return "";
}

std::string untrusted_directory_reason(const std::string& resolved_path) {
  std::string dir = std::filesystem::path(resolved_path).parent_path().string();
  struct stat st;
  if (::stat(dir.empty() ? "/" : dir.c_str(), &st) != 0) return "";  // the open itself reports the problem
  // Anyone may replace a file in such a directory (sticky or not: they may add one).
  if ((st.st_mode & S_IWOTH) != 0)
    return "refused: its directory " + dir + " is writable by every user (mode " + mode_text(st.st_mode) + ")";
  if (::geteuid() == 0 && st.st_uid != 0)
    return "refused: its directory " + dir + " is owned by uid " + std::to_string(st.st_uid) +
           ", not root, and this process runs as root";
  return "";
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
