#include "output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

namespace etrt::tools {
namespace {

std::string system_error(int error) { return std::strerror(error); }

// A name no other writer guesses: the tool may write several files at once into one directory.
std::string temporary_name(const std::string& name) {
  static std::atomic<unsigned> counter{0};
  static const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed ^ static_cast<unsigned>(getpid()) ^ (counter.fetch_add(1) * 2654435761u));
  static const char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string suffix(8, '0');
  for (char& c : suffix) c = kDigits[rng() % (sizeof kDigits - 1)];
  return "." + name + ".partial-" + suffix;
}

bool write_all(int fd, std::string_view bytes, int* error) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      *error = errno;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

// `path` without trailing "/" and "/." : with them, lstat and O_NOFOLLOW would follow a link in the last
// component ("planted/"), which is what the owner check looks at.
std::string without_trailing_separators(std::string path) {
  while (path.size() > 1 && (path.back() == '/' || (path.size() > 2 && path.ends_with("/.")))) path.pop_back();
  return path;
}

}  // namespace

OutputDirectory::~OutputDirectory() {
  if (fd_ >= 0) ::close(fd_);
}

bool OutputDirectory::open(const std::string& given, bool create_missing, std::string* error) {
  const std::string path = without_trailing_separators(given);
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    if (!create_missing) {
      *error = path + ": cannot open the directory: " + system_error(errno);
      return false;
    }
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) {
      *error = path + ": cannot create the directory: " + ec.message();
      return false;
    }
    if (::lstat(path.c_str(), &link) != 0) {
      *error = path + ": cannot open the directory: " + system_error(errno);
      return false;
    }
  }
  const bool symlink = S_ISLNK(link.st_mode);
  if (symlink && link.st_uid != ::geteuid() && link.st_uid != 0) {
    *error = path + ": is a symbolic link owned by another user (uid " + std::to_string(link.st_uid) +
             "), who could point it anywhere; refusing to follow it (name the directory it points to if you trust it)";
    return false;
  }
  // O_NOFOLLOW: a link swapped in after the check above is refused, not followed.
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (symlink ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    const int open_error = errno;
    struct stat target {};
    if (open_error == ENOTDIR || (::stat(path.c_str(), &target) == 0 && !S_ISDIR(target.st_mode)))
      *error = path + ": exists and is not a directory";
    else if (open_error == ELOOP && !symlink)
      *error = path + ": became a symbolic link while it was opened; refusing to follow it";
    else
      *error = path + ": cannot open the directory: " + system_error(open_error);
    return false;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  path_ = path;
  return true;
}

std::string OutputDirectory::file_path(const std::string& name) const {
  if (path_ == ".") return name;
  return path_.back() == '/' ? path_ + name : path_ + "/" + name;
}

bool OutputDirectory::write(const std::string& name, std::string_view bytes, std::string* error) const {
  const std::string shown = file_path(name);
  if (fd_ < 0) {
    *error = shown + ": the directory is not open";
    return false;
  }
  struct stat existing {};
  const bool exists = ::fstatat(fd_, name.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0;
  if (exists) {
    if (S_ISLNK(existing.st_mode)) {
      *error = shown + ": is a symbolic link; refusing to write through it (it may point anywhere): remove it "
                       "or write elsewhere";
      return false;
    }
    if (!S_ISREG(existing.st_mode)) {
      *error = shown + ": exists and is not a regular file";
      return false;
    }
  } else if (errno != ENOENT) {
    *error = shown + ": cannot write: " + system_error(errno);
    return false;
  }

  std::string temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temporary = temporary_name(name);
    fd = ::openat(fd_, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    *error = shown + ": cannot create a temporary file beside it: " + system_error(errno);
    return false;
  }
  int write_error = 0;
  bool ok = write_all(fd, bytes, &write_error);
  // Some file systems (NFS) report a full disk only when the file is closed.
  if (::close(fd) != 0 && ok) {
    ok = false;
    write_error = errno;
  }
  const char* step = "cannot write";
  if (ok && ::renameat(fd_, temporary.c_str(), fd_, name.c_str()) != 0) {
    ok = false;
    write_error = errno;
    step = "cannot rename the temporary file over it";
  }
  if (!ok) {
    ::unlinkat(fd_, temporary.c_str(), 0);
    *error = shown + ": " + step + ": " + system_error(write_error) + " (nothing written: " +
             (exists ? "its old contents are kept)" : "no file left behind)");
    return false;
  }
  return true;
}

bool write_output_file(const std::string& path, std::string_view bytes, std::string* error) {
  const std::filesystem::path file(path);
  const std::string name = file.filename().string();
  if (name.empty() || name == "." || name == "..") {
    *error = path + ": names a directory, not a file";
    return false;
  }
  const std::string directory = file.has_parent_path() ? file.parent_path().string() : ".";
  OutputDirectory parent;
  std::string problem;
  if (!parent.open(directory, false, &problem)) {
    *error = path + ": " + problem;
    return false;
  }
  return parent.write(name, bytes, error);
}

}  // namespace etrt::tools
