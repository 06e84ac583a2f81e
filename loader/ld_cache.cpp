#include "loader/ld_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>

namespace etrt::loader {
namespace {

// Layout of the format ldconfig writes since glibc 2.32 (and alongside the old one before):
//   header (48 bytes): magic "glibc-ld.so.cache" + version "1.1" (20 bytes), u32 library count,
//     u32 string table size, u8 byte order (0 unknown, 2 little-endian, 3 big-endian), 3 bytes
//     padding, u32 extension offset, 3 u32 unused;
//   then one 24-byte entry per library: i32 flags, u32 soname offset, u32 path offset,
//     u32 OS version (unused), u64 hardware capabilities;
// string offsets count from the start of this header.
constexpr char kNewMagic[] = "glibc-ld.so.cache1.1";
constexpr size_t kNewMagicSize = sizeof kNewMagic - 1;
constexpr size_t kNewHeaderSize = 48;
constexpr size_t kNewEntrySize = 24;
// The old format: magic "ld.so-1.7.0", u32 count at offset 12, 12-byte entries; the new
// header follows it, aligned as the new header's structure is.
constexpr char kOldMagic[] = "ld.so-1.7.0";
constexpr size_t kOldMagicSize = sizeof kOldMagic - 1;
constexpr size_t kOldEntrySize = 12;

// Entry flags: the low byte is the library's kind, the high byte its ABI variant.
constexpr uint32_t kKindMask = 0x00ff;
constexpr uint32_t kKindElfLibc6 = 0x0003;
constexpr uint32_t kVariantMask = 0xff00;
#if defined(__x86_64__) && defined(__LP64__)
constexpr int64_t kHostVariant = 0x0300;  // x86-64
#elif defined(__x86_64__)
constexpr int64_t kHostVariant = 0x0800;  // x32
#elif defined(__aarch64__)
constexpr int64_t kHostVariant = 0x0a00;
#elif defined(__i386__)
constexpr int64_t kHostVariant = 0x0000;
#else
constexpr int64_t kHostVariant = -1;  // not known here: the ELF check after the lookup sorts entries out
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr uint8_t kHostOrder = 2;
#else
constexpr uint8_t kHostOrder = 3;
#endif

uint32_t u32_at(const uint8_t* data) {
  uint32_t value;
  std::memcpy(&value, data, sizeof value);
  return value;
}

uint64_t u64_at(const uint8_t* data) {
  uint64_t value;
  std::memcpy(&value, data, sizeof value);
  return value;
}

// The NUL-terminated string at `offset` of [base, base + size), or false.
bool string_at(const uint8_t* base, size_t size, uint32_t offset, std::string* out) {
  if (offset >= size) return false;
  const void* end = std::memchr(base + offset, '\0', size - offset);
  if (end == nullptr) return false;
  out->assign(reinterpret_cast<const char*>(base + offset), static_cast<const uint8_t*>(end) - (base + offset));
  return true;
}

// Where the new-format header starts, or false with *error set.
bool find_new_header(const uint8_t* data, size_t size, size_t* start, std::string* error) {
  if (size >= kNewMagicSize && std::memcmp(data, kNewMagic, kNewMagicSize) == 0) {
    *start = 0;
    return true;
  }
  if (size < kOldMagicSize + 5 || std::memcmp(data, kOldMagic, kOldMagicSize) != 0) {
    *error = "not an ld.so.cache file (unknown magic)";
    return false;
  }
  uint64_t old_end = 16 + uint64_t{u32_at(data + 12)} * kOldEntrySize;
  for (uint64_t alignment : {8, 4}) {  // the new header's alignment: 8, or 4 where a u64 aligns to 4 (i386)
    uint64_t aligned = (old_end + alignment - 1) & ~(alignment - 1);
    if (aligned + kNewMagicSize <= size && std::memcmp(data + aligned, kNewMagic, kNewMagicSize) == 0) {
      *start = static_cast<size_t>(aligned);
      return true;
    }
  }
  *error = "only the old ld.so.cache format (ld.so-1.7.0), which this loader does not read";
  return false;
}

}  // namespace

bool parse_ld_cache(const uint8_t* data, size_t size, LdCache* out) {
  out->libraries.clear();
  out->error.clear();
  size_t start = 0;
  if (!find_new_header(data, size, &start, &out->error)) return false;
  const uint8_t* header = data + start;
  size_t available = size - start;
  if (available < kNewHeaderSize) {
    out->error = "truncated: the header needs " + std::to_string(kNewHeaderSize) + " bytes";
    return false;
  }
  uint8_t order = header[28];
  if (order != 0 && order != kHostOrder) {
    out->error = "written for the other byte order";
    return false;
  }
  uint64_t count = u32_at(header + 20);
  if (count > (available - kNewHeaderSize) / kNewEntrySize) {
    out->error = "truncated: " + std::to_string(count) + " entries do not fit in " + std::to_string(available) +
                 " bytes";
    return false;
  }
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* entry = header + kNewHeaderSize + i * kNewEntrySize;
    uint32_t flags = u32_at(entry);
    if ((flags & kKindMask) != kKindElfLibc6) continue;
    if (kHostVariant >= 0 && (flags & kVariantMask) != static_cast<uint32_t>(kHostVariant)) continue;
    std::string soname;
    LdCacheEntry library;
    if (!string_at(header, available, u32_at(entry + 4), &soname) ||
        !string_at(header, available, u32_at(entry + 8), &library.path)) {
      out->error = "corrupt: entry " + std::to_string(i) + " has a string outside the file";
      out->libraries.clear();
      return false;
    }
    library.cpu_specific = u64_at(entry + 16) != 0;
    out->libraries[soname].push_back(std::move(library));
  }
  return true;
}

namespace {

struct CachedFile {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = -1;
  struct timespec modified {};
  LdCache cache;
};

bool same_file(const CachedFile& cached, const struct stat& st) {
  return cached.device == st.st_dev && cached.inode == st.st_ino && cached.size == st.st_size &&
         cached.modified.tv_sec == st.st_mtim.tv_sec && cached.modified.tv_nsec == st.st_mtim.tv_nsec;
}

}  // namespace

LdCacheAnswer ld_cache_lookup(const std::string& soname, const std::string& path) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<const CachedFile>> files;
  LdCacheAnswer answer;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) answer.unreadable = "cannot examine " + path + ": " + std::strerror(errno);
    return answer;
  }
  if (!S_ISREG(st.st_mode)) return answer;
  std::shared_ptr<const CachedFile> file;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = files.find(path);
    if (found != files.end() && same_file(*found->second, st)) file = found->second;
  }
  if (file == nullptr) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || ::fstat(fd, &st) != 0) {
      answer.unreadable = "cannot open " + path + ": " + std::strerror(errno);
      if (fd >= 0) ::close(fd);
      return answer;
    }
    auto fresh = std::make_shared<CachedFile>();
    fresh->device = st.st_dev;
    fresh->inode = st.st_ino;
    fresh->size = st.st_size;
    fresh->modified = st.st_mtim;
    size_t size = static_cast<size_t>(st.st_size);
    if (size == 0) {
      fresh->cache.error = "the file is empty";
    } else {
      void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (map == MAP_FAILED) {  // not remembered: it may work next time
        answer.unreadable = "cannot map " + path + ": " + std::strerror(errno);
        ::close(fd);
        return answer;
      }
      parse_ld_cache(static_cast<const uint8_t*>(map), size, &fresh->cache);
      ::munmap(map, size);
    }
    ::close(fd);
    std::lock_guard<std::mutex> lock(mutex);
    files[path] = fresh;
    file = std::move(fresh);
  }
  if (!file->cache.error.empty()) {
    answer.unusable = path + ": " + file->cache.error;
    return answer;
  }
  auto found = file->cache.libraries.find(soname);
  if (found != file->cache.libraries.end()) answer.entries = found->second;
  return answer;
}

}  // namespace etrt::loader
