// The dynamic loader's index of libraries, /etc/ld.so.cache (written by
// ldconfig): where the loader looks for a library by soname after the search
// paths a library names and LD_LIBRARY_PATH, before its default directories.
// Read so the trust check finds the file the loader would load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace etrt::loader {

struct LdCacheEntry {
  std::string path;
  // A glibc-hwcaps or hardware-capability variant: the loader takes it only on
  // a CPU that has the capability, so it may or may not be the one loaded.
  bool cpu_specific = false;
};

struct LdCache {
  std::string error;  // set when the file cannot be used
  // soname -> the entries for this host's kind of library, in file order.
  std::unordered_map<std::string, std::vector<LdCacheEntry>> libraries;
};

// Parses the "glibc-ld.so.cache1.1" format (alone, or after the old
// "ld.so-1.7.0" table, which is skipped). Every offset is bounds-checked; a
// corrupt file gives an error, never a crash. False with out->error set.
bool parse_ld_cache(const uint8_t* data, size_t size, LdCache* out);

struct LdCacheAnswer {
  std::vector<LdCacheEntry> entries;
  // The file exists but is not a cache this reader understands: the dynamic
  // loader passes over such a file, and so may the search.
  std::string unusable;
  // The file could not be read now (opening or mapping it failed, e.g. no file
  // descriptor or memory left): what the loader would find is not known.
  std::string unreadable;
};

// The entries for `soname` in the cache file at `path`, which is read again only
// when it changes (device, inode, size, modification time). A missing file has
// no entries and no error (the loader then uses its default directories).
LdCacheAnswer ld_cache_lookup(const std::string& soname, const std::string& path);

}  // namespace etrt::loader
