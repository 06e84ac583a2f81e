// A plugin library opened once. The descriptor that was checked (a regular,
// trusted file), inspected as ELF and hashed is the one the dynamic loader
// gets, through /proc/self/fd/N: the file that was checked is the file loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace etrt::loader {

class PluginFile {
 public:
  PluginFile() = default;
  PluginFile(const PluginFile&) = delete;
  PluginFile& operator=(const PluginFile&) = delete;
  ~PluginFile();

  // Resolves symlinks, opens without blocking (a FIFO never hangs), refuses
  // anything but a regular file and files or directories others may write
  // (trust.h), then maps it. False with *error set ("not a regular file ...").
  bool open(const std::string& path, std::string* error);

  const uint8_t* data() const { return static_cast<const uint8_t*>(map_); }
  size_t size() const { return size_; }
  const std::string& resolved_path() const { return resolved_; }

  // What to hand dlopen: "/proc/self/fd/N" naming this descriptor, or, when
  // /proc is not mounted, the resolved path (*pinned = false: a race is possible).
  std::string load_path(bool* pinned) const;
  // Call once dlopen succeeded. The descriptor then stays open for good: the
  // dynamic loader knows the library by "/proc/self/fd/N", and a reused number
  // would make a later dlopen of another plugin return this one.
  void keep_descriptor_open() { keep_open_ = true; }

 private:
  int fd_ = -1;
  void* map_ = nullptr;
  size_t size_ = 0;
  bool keep_open_ = false;
  std::string resolved_;
};

// Reads a small regular file (a manifest, an allow-list) through one
// non-blocking descriptor, refusing non-regular, oversized or (when
// `check_trust`) untrusted files. False with *error set.
bool read_regular_file(const std::string& path, size_t max_bytes, bool check_trust, std::string* text,
                       std::string* error);

}  // namespace etrt::loader
