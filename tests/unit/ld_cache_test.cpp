// The dynamic loader's cache file, read as the loader reads it: built caches in
// both layouts, corrupt ones, and this system's /etc/ld.so.cache against what
// ldconfig -p lists.
#include "loader/ld_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace etrt::loader {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

#if defined(__x86_64__)
constexpr uint32_t kHostFlags = 0x0303;  // an ELF libc6 library, x86-64
constexpr const char* kLdconfigTag = "(libc6,x86-64";
#elif defined(__aarch64__)
constexpr uint32_t kHostFlags = 0x0a03;
constexpr const char* kLdconfigTag = "(libc6,AArch64";
#else
#error "add this machine's cache flags"
#endif

struct Entry {
  uint32_t flags;
  std::string soname, path;
  uint64_t hwcap = 0;
};

template <typename T>
void append(Bytes* out, T value) {
  size_t at = out->size();
  out->resize(at + sizeof value);
  std::memcpy(out->data() + at, &value, sizeof value);
}

// A cache in the new layout; string offsets count from its first byte.
Bytes new_format(const std::vector<Entry>& entries) {
  const char magic[] = "glibc-ld.so.cache1.1";
  Bytes out(magic, magic + 20);
  std::string strings;
  std::vector<std::pair<uint32_t, uint32_t>> offsets;
  size_t strings_start = 48 + 24 * entries.size();
  for (const Entry& e : entries) {
    uint32_t key = static_cast<uint32_t>(strings_start + strings.size());
    strings += e.soname + '\0';
    uint32_t value = static_cast<uint32_t>(strings_start + strings.size());
    strings += e.path + '\0';
    offsets.emplace_back(key, value);
  }
  append<uint32_t>(&out, static_cast<uint32_t>(entries.size()));
  append<uint32_t>(&out, static_cast<uint32_t>(strings.size()));
  append<uint8_t>(&out, 2);  // little-endian
  out.insert(out.end(), 3, 0);
  append<uint32_t>(&out, 0);  // no extension
  out.insert(out.end(), 12, 0);
  for (size_t i = 0; i < entries.size(); ++i) {
    append<int32_t>(&out, static_cast<int32_t>(entries[i].flags));
    append<uint32_t>(&out, offsets[i].first);
    append<uint32_t>(&out, offsets[i].second);
    append<uint32_t>(&out, 0);
    append<uint64_t>(&out, entries[i].hwcap);
  }
  out.insert(out.end(), strings.begin(), strings.end());
  return out;
}

const std::vector<Entry> kEntries = {
    {kHostFlags, "libz.so.1", "/lib/test/libz.so.1"},
    {kHostFlags, "libfoo.so.2", "/lib/test/glibc-hwcaps/x86-64-v3/libfoo.so.2", (1ull << 62) | 1},
    {kHostFlags, "libfoo.so.2", "/lib/test/libfoo.so.2"},
    {0x0003, "libfoo.so.2", "/lib32/libfoo.so.2"},  // another ABI of the machine
    {0x0001, "libold.so.1", "/lib/old/libold.so.1"},  // not a libc6 library
};

TEST(LdCache, ReadsTheNewFormat) {
  Bytes bytes = new_format(kEntries);
  LdCache cache;
  ASSERT_TRUE(parse_ld_cache(bytes.data(), bytes.size(), &cache)) << cache.error;
  ASSERT_EQ(cache.libraries.count("libz.so.1"), 1u);
  EXPECT_EQ(cache.libraries["libz.so.1"].size(), 1u);
  EXPECT_EQ(cache.libraries["libz.so.1"][0].path, "/lib/test/libz.so.1");
  EXPECT_FALSE(cache.libraries["libz.so.1"][0].cpu_specific);
  const std::vector<LdCacheEntry>& foo = cache.libraries["libfoo.so.2"];
  ASSERT_EQ(foo.size(), 2u);  // not the /lib32 one
  EXPECT_EQ(foo[0].path, "/lib/test/glibc-hwcaps/x86-64-v3/libfoo.so.2");
  EXPECT_TRUE(foo[0].cpu_specific);
  EXPECT_EQ(foo[1].path, "/lib/test/libfoo.so.2");
  EXPECT_FALSE(foo[1].cpu_specific);
  EXPECT_EQ(cache.libraries.count("libold.so.1"), 0u);
}

TEST(LdCache, ReadsTheNewFormatAfterTheOldOne) {
  const char magic[] = "ld.so-1.7.0";
  Bytes bytes(magic, magic + 11);
  bytes.push_back(0);
  append<uint32_t>(&bytes, 2);
  bytes.insert(bytes.end(), 2 * 12, 0xee);  // two old entries, never read
  while (bytes.size() % 8 != 0) bytes.push_back(0);
  Bytes tail = new_format(kEntries);
  bytes.insert(bytes.end(), tail.begin(), tail.end());
  LdCache cache;
  ASSERT_TRUE(parse_ld_cache(bytes.data(), bytes.size(), &cache)) << cache.error;
  EXPECT_EQ(cache.libraries["libz.so.1"].at(0).path, "/lib/test/libz.so.1");
}

TEST(LdCache, CorruptCachesAreErrorsNotCrashes) {
  LdCache cache;
  std::string text = "not a cache";
  EXPECT_FALSE(parse_ld_cache(reinterpret_cast<const uint8_t*>(text.data()), text.size(), &cache));
  EXPECT_THAT(cache.error, HasSubstr("unknown magic"));

  Bytes bytes = new_format(kEntries);
  Bytes truncated(bytes.begin(), bytes.begin() + 30);
  EXPECT_FALSE(parse_ld_cache(truncated.data(), truncated.size(), &cache));
  EXPECT_THAT(cache.error, HasSubstr("truncated: the header"));

  Bytes many = bytes;
  uint32_t huge = 1u << 30;
  std::memcpy(many.data() + 20, &huge, 4);
  EXPECT_FALSE(parse_ld_cache(many.data(), many.size(), &cache));
  EXPECT_THAT(cache.error, HasSubstr("entries do not fit"));

  Bytes outside = bytes;
  uint32_t far = static_cast<uint32_t>(bytes.size() + 100);
  std::memcpy(outside.data() + 48 + 8, &far, 4);  // the first entry's path
  EXPECT_FALSE(parse_ld_cache(outside.data(), outside.size(), &cache));
  EXPECT_THAT(cache.error, HasSubstr("entry 0 has a string outside the file"));
  EXPECT_TRUE(cache.libraries.empty());

  Bytes unterminated = new_format({kEntries[0]});
  unterminated.pop_back();  // the path loses its NUL
  EXPECT_FALSE(parse_ld_cache(unterminated.data(), unterminated.size(), &cache));

  Bytes big_endian = bytes;
  big_endian[28] = 3;
  EXPECT_FALSE(parse_ld_cache(big_endian.data(), big_endian.size(), &cache));
  EXPECT_THAT(cache.error, HasSubstr("other byte order"));

  std::mt19937 rng(32);
  for (int iter = 0; iter < 20000; ++iter) {
    Bytes b = bytes;
    for (int e = 0; e < 4; ++e) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    if (iter % 7 == 0) b.resize(rng() % b.size());
    LdCache mutated;
    if (!parse_ld_cache(b.data(), b.size(), &mutated)) {
      EXPECT_FALSE(mutated.error.empty());
    }
  }
}

TEST(LdCache, LookupOfAMissingFileFindsNothingWithoutError) {
  LdCacheAnswer answer = ld_cache_lookup("libc.so.6", "/nonexistent/etrt/ld.so.cache");
  EXPECT_TRUE(answer.entries.empty());
  EXPECT_EQ(answer.unusable, "");
  EXPECT_EQ(answer.unreadable, "");
}

TEST(LdCache, LookupRereadsAChangedFile) {
  char path[] = "/tmp/etrt_ld_cache_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  Bytes first = new_format({{kHostFlags, "libz.so.1", "/first/libz.so.1"}});
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(first.data()), first.size());
  LdCacheAnswer first_answer = ld_cache_lookup("libz.so.1", path);
  ASSERT_EQ(first_answer.entries.size(), 1u) << first_answer.unusable << first_answer.unreadable;
  EXPECT_EQ(first_answer.entries[0].path, "/first/libz.so.1");
  Bytes second = new_format({{kHostFlags, "libz.so.1", "/second/longer/libz.so.1"}});
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(second.data()), second.size());
  EXPECT_EQ(ld_cache_lookup("libz.so.1", path).entries.at(0).path, "/second/longer/libz.so.1");
  std::ofstream(path, std::ios::trunc) << "garbage";
  LdCacheAnswer garbage = ld_cache_lookup("libz.so.1", path);
  EXPECT_TRUE(garbage.entries.empty());
  EXPECT_THAT(garbage.unusable, HasSubstr("unknown magic"));
  EXPECT_EQ(garbage.unreadable, "");
  unlink(path);
}

TEST(LdCacheDeathTest, FileThatCannotBeOpenedNowIsUnreadableNotEmpty) {
  char path[] = "/tmp/etrt_ld_cache_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  Bytes bytes = new_format(kEntries);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  EXPECT_EXIT(
      {
        int next = dup(0);  // the lowest free descriptor: none at or above it may be opened
        close(next);
        struct rlimit limit;
        limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(next);
        setrlimit(RLIMIT_NOFILE, &limit);
        LdCacheAnswer answer = ld_cache_lookup("libz.so.1", path);
        bool said = answer.entries.empty() && answer.unusable.empty() &&
                    answer.unreadable.find(std::strerror(EMFILE)) != std::string::npos;
        if (!said) std::fprintf(stderr, "unreadable: '%s'\n", answer.unreadable.c_str());
        std::_Exit(said ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  unlink(path);
}

TEST(LdCache, AgreesWithLdconfigOnThisSystem) {
  FILE* pipe = popen("ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null", "r");
  ASSERT_NE(pipe, nullptr);
  std::string listing;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) listing.append(buffer, n);
  pclose(pipe);
  if (listing.empty()) GTEST_SKIP() << "ldconfig -p lists nothing here";
  size_t compared = 0;
  size_t start = 0;
  while (start < listing.size()) {
    size_t end = listing.find('\n', start);
    if (end == std::string::npos) end = listing.size();
    std::string line = listing.substr(start, end - start);
    start = end + 1;
    size_t tag = line.find(kLdconfigTag), arrow = line.find(" => ");
    if (tag == std::string::npos || arrow == std::string::npos) continue;
    size_t name_start = line.find_first_not_of(" \t");
    std::string soname = line.substr(name_start, tag - 1 - name_start);
    std::string path = line.substr(arrow + 4);
    LdCacheAnswer answer = ld_cache_lookup(soname, "/etc/ld.so.cache");
    ASSERT_EQ(answer.unusable + answer.unreadable, "");
    bool listed = false;
    for (const LdCacheEntry& entry : answer.entries) listed |= entry.path == path;
    EXPECT_TRUE(listed) << soname << " => " << path << " is not in what this reader found";
    ++compared;
  }
  // Under user-mode emulation (the aarch64 stage runs this under qemu on an x86_64 machine) the
  // cache is the host's: it lists no library of this process's architecture, so there is nothing
  // to compare, and the reader rightly finds nothing.
  if (compared == 0 && listing.find(kLdconfigTag) == std::string::npos)
    GTEST_SKIP() << "ldconfig -p lists no library tagged " << kLdconfigTag << " (an emulated run: the cache is the host's)";
  EXPECT_GT(compared, 10u);
  EXPECT_FALSE(ld_cache_lookup("libc.so.6", "/etc/ld.so.cache").entries.empty());
}

}  // namespace
}  // namespace etrt::loader
