// The loader's own decisions: which failures may pass (is_temporary_failure),
// and registering many names costs in proportion to their number (the handle's
// duplicate check and the comparison with the manifest were quadratic: 40,000
// registrations took seconds), counted by callgrind on register_many.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "loader/plugin_loader.h"

using etrt::loader::is_temporary_failure;

namespace {

TEST(PluginLoader, RunningOutOfDescriptorsOrMemoryIsTemporary) {
  for (int code : {EMFILE, ENFILE, ENOMEM})
    EXPECT_TRUE(is_temporary_failure(std::string("cannot open: ") + std::strerror(code))) << std::strerror(code);
  EXPECT_TRUE(is_temporary_failure("dlopen failed: /proc/self/fd/7: cannot open shared object file: " +
                                   std::string(std::strerror(EMFILE))));
  EXPECT_TRUE(is_temporary_failure("dlopen failed: /proc/self/fd/7: failed to map segment from shared object"));
}

TEST(PluginLoader, EverythingElseIsFinal) {
  for (int code : {ENOENT, EACCES, EISDIR, ELOOP, EIO})
    EXPECT_FALSE(is_temporary_failure(std::string("cannot open: ") + std::strerror(code))) << std::strerror(code);
  EXPECT_FALSE(is_temporary_failure("SHA-256 mismatch: manifest x expects a, file has b"));
  EXPECT_FALSE(is_temporary_failure("dlopen failed: libfoo.so: cannot open shared object file: " +
                                    std::string(std::strerror(ENOENT))));
  EXPECT_FALSE(is_temporary_failure("init failed: " + std::string(std::strerror(ENOMEM)) + " in the plugin"));
}

// Instructions callgrind counts in load_plugin_library while register_many
// (tests/loader/register_many.cpp) loads the plugin registering `count` kernels,
// its manifest declaring each: deterministic, unlike time on a shared machine.
uint64_t instructions_to_register(size_t count) {
  const std::string out = testing::TempDir() + "register_many." + std::to_string(count) + ".callgrind";
  const std::string command = "valgrind --tool=callgrind --toggle-collect='*load_plugin_library*' "
                              "--callgrind-out-file=" + out + " " ETRT_REGISTER_MANY " " + std::to_string(count) +
                              " > " + out + ".log 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command << " failed; see " << out << ".log";
  uint64_t counted = 0;
  std::ifstream file(out);
  for (std::string line; counted == 0 && std::getline(file, line);)
    if (line.rfind("summary: ", 0) == 0) counted = std::stoull(line.substr(9));
  if (counted == 0) return ADD_FAILURE() << out << " has no summary line", 0;
  std::remove(out.c_str());
  std::remove((out + ".log").c_str());
  return counted;
}

TEST(PluginLoader, RegisteringManyNamesCostsInProportion) {
  if (std::system("valgrind --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "valgrind is not installed";
  const uint64_t small = instructions_to_register(1000);
  const uint64_t large = instructions_to_register(8000);
  // Eight times the names: about eight times the instructions; a quadratic cost takes about 64 times as many.
  EXPECT_LT(large, 16 * small) << "1,000 names: " << small << " instructions, 8,000 names: " << large;
}

}  // namespace
