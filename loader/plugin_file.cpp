#include "loader/plugin_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "loader/trust.h"

namespace etrt::loader {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Symlinks resolved, so the checks below apply to the file that will be read.
bool resolve(const std::string& path, std::string* resolved, std::string* error) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) {
    *error = errno_text("cannot open");
    return false;
  }
  *resolved = buffer;
  return true;
}

// The path as the process reaches it: a relative one through the working directory.
std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  return ::getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) + "/" + path : path;
}

std::string symlink_note(const std::string& path, const std::string& resolved) {
  return resolved == path ? std::string() : " (" + path + " resolves to " + resolved + ")";
}

// O_NONBLOCK: opening a FIFO without a writer returns at once instead of
// blocking; S_ISREG then refuses it before any read.
int open_regular(const std::string& path, const std::string& resolved, bool check_trust, struct stat* st,
                 std::string* error) {
  int fd = ::open(resolved.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = errno_text("cannot open");
    return -1;
  }
  std::string problem;
  if (::fstat(fd, st) != 0) problem = errno_text("cannot stat");
  else if (!S_ISREG(st->st_mode)) problem = "not a regular file (a FIFO, device, socket or directory is never read)";
  else if (check_trust) {
    problem = untrusted_file_reason(*st);
    if (problem.empty()) problem = check_path(absolute(path)).problem;  // every directory on the way, symlinks too
  }
  if (!problem.empty()) {
    ::close(fd);
    *error = problem + symlink_note(path, resolved);
    return -1;
  }
  return fd;
}

}  // namespace

PluginFile::~PluginFile() {
  if (map_ != nullptr) ::munmap(map_, size_);
  if (fd_ >= 0 && !keep_open_) ::close(fd_);
}

bool PluginFile::open(const std::string& path, std::string* error) {
  if (!resolve(path, &resolved_, error)) return false;
  struct stat st;
  fd_ = open_regular(path, resolved_, /*check_trust=*/true, &st, error);
  if (fd_ < 0) return false;
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return true;  // the ELF check names the problem
  void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
  if (map == MAP_FAILED) {
    *error = errno_text("cannot map");
    return false;
  }
  map_ = map;
  return true;
}

std::string PluginFile::load_path(bool* pinned) const {
  std::string by_descriptor = "/proc/self/fd/" + std::to_string(fd_);
  struct stat through_proc, direct;
  *pinned = ::stat(by_descriptor.c_str(), &through_proc) == 0 && ::fstat(fd_, &direct) == 0 &&
            through_proc.st_ino == direct.st_ino && through_proc.st_dev == direct.st_dev;
  return *pinned ? by_descriptor : resolved_;
}

bool read_regular_file(const std::string& path, size_t max_bytes, bool check_trust, std::string* text,
                       std::string* error) {
  std::string resolved;
  if (!resolve(path, &resolved, error)) return false;
  struct stat st;
  int fd = open_regular(path, resolved, check_trust, &st, error);
  if (fd < 0) return false;
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    *error = "file is " + std::to_string(st.st_size) + " bytes, larger than the " + std::to_string(max_bytes) +
             "-byte limit";
    return false;
  }
  text->assign(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text->size()) {
    ssize_t n = ::read(fd, text->data() + done, text->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != text->size()) {
    *error = "cannot read (the file changed size while being read)";
    return false;
  }
  return true;
}

}  // namespace etrt::loader
