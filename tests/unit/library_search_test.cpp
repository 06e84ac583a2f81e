// The dynamic loader's search for a needed library, as library_search.h models
// it: search lists, substitution tokens, the order of the steps and what makes
// a step uncertain, the CPU subdirectories, and this process's environment.
#include "loader/library_search.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace etrt::loader {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using Strings = std::vector<std::string>;
namespace fs = std::filesystem;

TEST(LibrarySearch, SearchListsKeepEmptyEntries) {
  EXPECT_EQ(split_search_list("/a::b", ":"), (Strings{"/a", "", "b"}));
  EXPECT_EQ(split_search_list("/a;/b:/c", ":;"), (Strings{"/a", "/b", "/c"}));
  EXPECT_EQ(split_search_list("/a;/b", ":"), (Strings{"/a;/b"}));
  EXPECT_EQ(split_search_list("", ":"), (Strings{""}));
  EXPECT_EQ(split_search_list("/a:", ":"), (Strings{"/a", ""}));
}

SearchEnvironment test_environment() {
  SearchEnvironment env;
  env.lib_values = {"lib/x86_64-linux-gnu"};
  env.platform_values = {"x86_64", "haswell"};
  env.default_dirs = {"/lib/x86_64-linux-gnu", "/lib"};
  env.ld_cache = "/nonexistent/ld.so.cache";
  return env;
}

TEST(LibrarySearch, SubstitutionTokens) {
  SearchEnvironment env = test_environment();
  EXPECT_EQ(expand_entry("$ORIGIN/../lib", "/opt/p", env), (Strings{"/opt/p/../lib"}));
  EXPECT_EQ(expand_entry("${ORIGIN}", "/o", env), (Strings{"/o"}));
  EXPECT_EQ(expand_entry("$ORIGINAL/x", "/o", env), (Strings{"$ORIGINAL/x"}));  // not a token: kept
  EXPECT_EQ(expand_entry("${ORIGIN/x", "/o", env), (Strings{"${ORIGIN/x"}));
  EXPECT_EQ(expand_entry("/usr/$LIB", "/o", env), (Strings{"/usr/lib/x86_64-linux-gnu"}));
  EXPECT_EQ(expand_entry("/p/$PLATFORM/${LIB}", "/o", env),
            (Strings{"/p/x86_64/lib/x86_64-linux-gnu", "/p/haswell/lib/x86_64-linux-gnu"}));
  EXPECT_EQ(expand_entry("", "/o", env), (Strings{"."}));
  EXPECT_EQ(expand_entry("rel/$ORIGIN", "/o", env), (Strings{"rel//o"}));
  EXPECT_TRUE(uses_origin("$ORIGIN/x"));
  EXPECT_TRUE(uses_origin("/x/${ORIGIN}"));
  EXPECT_FALSE(uses_origin("$ORIGINX"));
  EXPECT_FALSE(uses_origin("/usr/$LIB"));
}

Strings directories(const std::vector<SearchStep>& steps) {
  Strings out;
  for (const SearchStep& step : steps) out.push_back(step.kind == SearchStep::kLdCache ? "<cache>" : step.directory);
  return out;
}

TEST(LibrarySearch, StepsInTheLoadersOrder) {
  SearchEnvironment env = test_environment();
  env.has_library_path = true;
  env.library_path = "/llp1;/llp2";
  LoadedObject program;
  program.is_program = true;
  program.search.name = "the program";
  program.search.has_rpath = true;
  program.search.rpath = "/program_rpath";
  env.loaded = {program};
  SearchPaths plugin;
  plugin.name = "the plugin";
  plugin.origin = "/proc/self/fd";
  plugin.has_rpath = true;
  plugin.rpath = "$ORIGIN/r";
  SearchPaths dependency;
  dependency.name = "/d/libdep.so";
  dependency.origin = "/d";
  dependency.has_rpath = true;
  dependency.rpath = "/dep_rpath";

  // Without DT_RUNPATH: its DT_RPATH, its loader's, the program's, LD_LIBRARY_PATH, cache, defaults.
  std::vector<SearchStep> steps = search_steps({&dependency, &plugin}, env);
  EXPECT_EQ(directories(steps), (Strings{"/dep_rpath", "/proc/self/fd/r", "/program_rpath", "/llp1", "/llp2",
                                         "<cache>", "/lib/x86_64-linux-gnu", "/lib"}));
  EXPECT_EQ(steps[0].source, "DT_RPATH of /d/libdep.so");
  EXPECT_EQ(steps[1].source, "DT_RPATH of the plugin");
  EXPECT_EQ(steps[2].source, "DT_RPATH of the program");
  EXPECT_EQ(steps[3].source, "LD_LIBRARY_PATH");
  EXPECT_TRUE(steps[0].certain);
  EXPECT_FALSE(steps.back().certain);  // the default directories' set and order are the loader's own

  // With DT_RUNPATH: no DT_RPATH at all, not even the loaders'; DT_RUNPATH after LD_LIBRARY_PATH.
  dependency.has_runpath = true;
  dependency.runpath = "/dep_runpath:/p/$PLATFORM";
  steps = search_steps({&dependency, &plugin}, env);
  EXPECT_EQ(directories(steps), (Strings{"/llp1", "/llp2", "/dep_runpath", "/p/x86_64", "/p/haswell", "<cache>",
                                         "/lib/x86_64-linux-gnu", "/lib"}));
  EXPECT_EQ(steps[2].source, "DT_RUNPATH of /d/libdep.so");
  EXPECT_TRUE(steps[2].certain);
  EXPECT_FALSE(steps[3].certain);  // $PLATFORM may stand for either

  // Secure mode: no LD_LIBRARY_PATH. DF_1_NODEFLIB: no cache, no default directories.
  env.secure = true;
  dependency.no_default_libraries = true;
  EXPECT_EQ(directories(search_steps({&dependency, &plugin}, env)), (Strings{"/dep_runpath", "/p/x86_64", "/p/haswell"}));
}

TEST(LibrarySearch, CpuSubdirectoriesThatExist) {
  fs::path dir = fs::temp_directory_path() / ("etrt_search_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "glibc-hwcaps" / "x86-64-v3");
  fs::create_directories(dir / "glibc-hwcaps" / "x86-64-v2");
  fs::create_directories(dir / "tls" / "haswell");
  fs::create_directories(dir / "unrelated");
  SearchEnvironment env = test_environment();
  env.legacy_subdirs = {"tls", "haswell"};
  Strings found = cpu_subdirectories(dir.string(), env);
  std::string d = dir.string();
  EXPECT_EQ(found, (Strings{d + "/glibc-hwcaps/x86-64-v2", d + "/glibc-hwcaps/x86-64-v3", d + "/tls/haswell",
                            d + "/tls"}));
  EXPECT_TRUE(cpu_subdirectories(d + "/missing", env).empty());
  fs::remove_all(dir);
}

TEST(LibrarySearch, ThisProcess) {
  SearchEnvironment env = process_search_environment();
  ASSERT_FALSE(env.loaded.empty());
  EXPECT_TRUE(env.loaded.front().is_program);
  bool libc = false;
  for (const LoadedObject& object : env.loaded) libc |= object.soname.rfind("libc.so.", 0) == 0;
  EXPECT_TRUE(libc) << "the C library's soname was not read from memory";
  EXPECT_FALSE(env.lib_values.empty());
  EXPECT_FALSE(env.default_dirs.empty());
  EXPECT_THAT(env.default_dirs, Contains("/usr/lib"));
  EXPECT_FALSE(env.program_origin.empty());
}

}  // namespace
}  // namespace etrt::loader
