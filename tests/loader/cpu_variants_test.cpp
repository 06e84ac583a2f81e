// kernels_optimized's CPU variants as the loader sees them: the best level this
// CPU runs is chosen before dlopen, ETRT_CPU_LEVEL forces a lower one, and the
// file that ends up mapped is the chosen one. CTest runs this executable once
// per setting of ETRT_CPU_LEVEL (tests/CMakeLists.txt): the choice is made when
// the manifests are first read, once per process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace etrt_test;
namespace fs = std::filesystem;

namespace {

const std::string kFile = "libetrt_kernels_optimized.so.1";

std::string plugin_dir() { return fs::path(ETRT_DEFAULT_MANIFEST_DIR).parent_path().string() + "/plugins"; }
std::string baseline_file() { return plugin_dir() + "/" + kFile; }
std::string v3_file() { return plugin_dir() + "/x86-64-v3/" + kFile; }

std::string forced_level() {
  const char* value = std::getenv("ETRT_CPU_LEVEL");
  return value != nullptr ? value : "";
}

// Judged independently of the loader's own CPUID code (every CPU with AVX2, FMA
// and BMI1/2 has the rest of x86-64-v3).
bool host_runs_v3() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2");
}

// Loads kernels_optimized by looking up one of its operators.
std::string load_kernels() {
  return error_of([](et_error** e) {
    et_kernel_descriptor kernel{};
    kernel.struct_size = sizeof kernel;
    return et_find_kernel("aten::add.out", &kernel, e);
  });
}

#if defined(__x86_64__)

TEST(CpuVariants, TheChosenLibraryIsTheOneMapped) {
  std::string forced = forced_level();
  ASSERT_TRUE(forced.empty() || forced == "x86-64" || forced == "x86-64-v3") << "run with another setting: " << forced;
  bool want_v3 = forced.empty() ? host_runs_v3() : forced == "x86-64-v3";
  if (want_v3 && !host_runs_v3()) {
    // Forcing a level this CPU cannot run is refused, naming the variable.
    etrt::PluginInfo plugin = plugin_named("kernels_optimized");
    EXPECT_EQ(plugin.state, ET_PLUGIN_FAILED);
    EXPECT_THAT(plugin.failure, AllOf(HasSubstr("ETRT_CPU_LEVEL=x86-64-v3"), HasSubstr("cannot run")));
    return;
  }
  etrt::PluginInfo declared = plugin_named("kernels_optimized");
  EXPECT_EQ(declared.state, ET_PLUGIN_DECLARED);
  EXPECT_EQ(declared.cpu_level, want_v3 ? "x86-64-v3" : "x86-64");
  EXPECT_EQ(declared.library_path, want_v3 ? v3_file() : baseline_file());
  EXPECT_THAT(declared.cpu_level_reason, HasSubstr("chosen from x86-64, x86-64-v3"));
  if (!forced.empty()) {
    EXPECT_THAT(declared.cpu_level_reason, HasSubstr("ETRT_CPU_LEVEL=" + forced));
  }
  EXPECT_FALSE(is_mapped(kFile)) << "nothing is loaded before a kernel is needed";

  ASSERT_EQ(load_kernels(), "");
  // The dynamic loader got /proc/self/fd/N; the kernel maps the file itself, by its real path.
  std::vector<std::string> mapped = mapped_files_containing(kFile);
  ASSERT_EQ(mapped.size(), 1u) << ::testing::PrintToString(mapped);
  EXPECT_EQ(mapped[0], want_v3 ? v3_file() : baseline_file());
  etrt::PluginInfo loaded = plugin_named("kernels_optimized");
  EXPECT_EQ(loaded.state, ET_PLUGIN_LOADED);
  EXPECT_EQ(loaded.library_path, mapped[0]);
}

TEST(CpuVariants, TheReportShowsTheChoice) {
  std::string report = etrt::Runtime::get().report_json();
  EXPECT_THAT(report, HasSubstr("\"cpu_level\""));
  EXPECT_THAT(report, HasSubstr("chosen from x86-64, x86-64-v3"));
}

// The forced setting fails kernels_optimized with `reason`, naming the variable;
// a program needing its kernels is told why, and no library of it is mapped.
void expect_setting_refused(const std::string& reason) {
  std::string setting = "ETRT_CPU_LEVEL=" + forced_level();
  etrt::PluginInfo plugin = plugin_named("kernels_optimized");
  EXPECT_EQ(plugin.state, ET_PLUGIN_FAILED);
  EXPECT_THAT(plugin.failure, AllOf(HasSubstr(setting), HasSubstr(reason)));
  EXPECT_THAT(load_kernels(), HasSubstr(setting));
  EXPECT_FALSE(is_mapped(kFile));
}

// ETRT_CPU_LEVEL=haswell: a -march name that is not a level.
TEST(CpuVariantsBadSetting, UnknownLevelIsAnErrorNamingTheVariable) {
  ASSERT_EQ(forced_level(), "haswell");
  expect_setting_refused("unknown CPU level");
}

// ETRT_CPU_LEVEL=x86-64-v4 on a CPU without AVX-512 must never pick a library.
TEST(CpuVariantsBadSetting, LevelAboveTheHostIsRefused) {
  ASSERT_EQ(forced_level(), "x86-64-v4");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
    EXPECT_EQ(plugin_named("kernels_optimized").cpu_level, "x86-64-v3");  // the best declared at or below v4
    return;
  }
  expect_setting_refused("this CPU cannot run it");
}

// ETRT_PLUGIN_PATH names the x86-64-v3 directory (read before the default
// manifests) and ETRT_CPU_LEVEL=x86-64: the variant there is kernels_optimized's,
// not a drop-in of its own, and only the baseline is loaded.
TEST(CpuVariantsOnPluginPath, AVariantDirectoryIsNotADropIn) {
  ASSERT_EQ(forced_level(), "x86-64");
  bool seen = false;
  for (const etrt::PluginInfo& plugin : etrt::Runtime::get().plugins()) {
    if (plugin.library_path != v3_file()) continue;
    seen = true;
    EXPECT_EQ(plugin.state, ET_PLUGIN_FAILED);
    EXPECT_THAT(plugin.failure, HasSubstr("a CPU variant of plugin 'kernels_optimized'"));
  }
  EXPECT_TRUE(seen) << "the drop-in directory was not read";
  etrt::Runtime::get().load_all_plugins();
  EXPECT_EQ(mapped_files_containing(kFile), std::vector<std::string>{baseline_file()});
}

#endif  // __x86_64__

// A caller built before et_plugin_record gained the CPU level fields passes the
// shorter struct: it gets that prefix and nothing is written past it.
TEST(CpuVariants, ARecordFromBeforeTheLevelFieldsStillWorks) {
  ASSERT_GT(et_plugin_count(), 0u);
  const char* untouched = "untouched";
  et_plugin_record old{};
  old.struct_size = offsetof(et_plugin_record, cpu_level);
  old.cpu_level = untouched;
  ASSERT_EQ(et_plugin_at(0, &old), ET_OK);
  EXPECT_EQ(old.struct_size, offsetof(et_plugin_record, cpu_level));
  EXPECT_NE(old.name, nullptr);
  EXPECT_EQ(old.cpu_level, untouched);
  et_plugin_record too_small{};
  too_small.struct_size = offsetof(et_plugin_record, warnings);
  EXPECT_EQ(et_plugin_at(0, &too_small), ET_ERR_INVALID_ARGUMENT);
}

// A variant the manifest declares but whose file is missing: a clear error
// naming the level and the file, and nothing else of that manifest loads.
TEST(CpuVariants, MissingVariantLibraryIsAnError) {
  fs::path dir = fs::temp_directory_path() / ("etrt_cpu_variants_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string manifest = (dir / "variant_missing.json").string();
  std::ofstream(manifest) << R"({
  "manifest_version": 1,
  "name": "variant_missing",
  "version": "1",
  "library": ")" << baseline_file() << R"(",
  "abi": {"major": 1, "minor": 4},
  "cpu_level": "x86-64",
  "variants": [{"cpu_level": "x86-64-v3", "library": "x86-64-v3/libnothing.so.1"}],
  "provides": {"operators": ["test::variant_missing"]}
})";
  std::string error = error_of([&](et_error** e) { return et_add_manifest(manifest.c_str(), e); });
  std::string missing = (dir / "x86-64-v3" / "libnothing.so.1").string();
  EXPECT_THAT(error, AllOf(HasSubstr(manifest), HasSubstr("CPU level 'x86-64-v3'"), HasSubstr(missing),
                           HasSubstr("does not exist")));
  etrt::PluginInfo plugin = plugin_named("variant_missing");
  EXPECT_EQ(plugin.state, ET_PLUGIN_FAILED);
  EXPECT_THAT(plugin.failure, HasSubstr(missing));
  fs::remove_all(dir);
}

}  // namespace
