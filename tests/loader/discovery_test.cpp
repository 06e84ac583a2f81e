// Search order: explicit loads, host-given manifests, ETRT_PLUGIN_PATH, then
// the default manifests found relative to libetrt (never the working
// directory); drop-in .so files without a manifest are accepted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace etrt_test;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("etrt_discovery_" + std::to_string(getpid())) / name;
  fs::create_directories(dir);
  return dir;
}

etrt::PluginInfo plugin_with_library_containing(const std::string& needle) {
  for (const auto& plugin : etrt::Runtime::get().plugins())
    if (plugin.library_path.find(needle) != std::string::npos) return plugin;
  ADD_FAILURE() << "no plugin with library " << needle;
  return {};
}

fs::path env_dir, cwd_dir;

TEST(Discovery, EnvironmentAndDefaultsAreReadOnFirstUseNotTheWorkingDirectory) {
  // ETRT_PLUGIN_PATH: a directory with a second "test_good" (a copy of the
  // library), and a drop-in .so given directly.
  env_dir = scratch("env");
  fs::copy_file(plugin_path("good"), env_dir / "libcopy_of_good.so", fs::copy_options::overwrite_existing);
  std::ofstream(env_dir / "good_copy.json") << R"({"manifest_version": 1, "name": "test_good", "version": "2.0",
    "library": "libcopy_of_good.so", "abi": {"major": 1, "minor": 1}, "priority": 1000,
    "provides": {"operators": ["test::good_op"]}})";
  std::string env = env_dir.string() + ":" + plugin_path("dropin");
  setenv("ETRT_PLUGIN_PATH", env.c_str(), 1);

  // A manifest where a loader that looked in the working directory would find it.
  cwd_dir = scratch("cwd");
  fs::create_directories(cwd_dir / "etrt" / "manifests");
  std::ofstream(cwd_dir / "etrt" / "manifests" / "cwd.json") << R"({"manifest_version": 1, "name": "test_cwd",
    "version": "1", "library": "x.so", "abi": {"major": 1, "minor": 1}, "provides": {"operators": ["test::cwd_op"]}})";
  ASSERT_EQ(chdir(cwd_dir.c_str()), 0);

  auto manifests = etrt::Runtime::get().manifests();
  std::string defaults = fs::canonical(ETRT_DEFAULT_MANIFEST_DIR).string();
  EXPECT_THAT(manifests, ElementsAre(env_dir.string(), plugin_path("dropin"), defaults));
  for (const auto& plugin : etrt::Runtime::get().plugins()) EXPECT_NE(plugin.name, "test_cwd");
}

TEST(Discovery, HostGivenManifestShadowsTheEnvironmentsEvenWhenAddedLater) {
  etrt::Runtime::get().add_manifest(manifest_path("good"));
  auto manifests = etrt::Runtime::get().manifests();
  ASSERT_FALSE(manifests.empty());
  EXPECT_EQ(manifests.front(), manifest_path("good"));  // listed in search order
  EXPECT_EQ(call_reporting_kernel("test::good_op"), 1);
  EXPECT_TRUE(is_mapped("libetrt_test_good.so.1"));
  EXPECT_FALSE(is_mapped("libcopy_of_good.so"));
  auto shadowed = plugin_with_library_containing("libcopy_of_good.so");
  EXPECT_EQ(shadowed.state, ET_PLUGIN_FAILED);
  EXPECT_THAT(shadowed.failure, AllOf(HasSubstr("shadowed by " + manifest_path("good")),
                                      HasSubstr("earlier in the search order")));
}

TEST(Discovery, DropInWithoutManifestServesWhatNoManifestDeclares) {
  EXPECT_FALSE(is_mapped("libetrt_test_dropin"));
  EXPECT_EQ(call_reporting_kernel("test::dropin_op"), 1);
  auto dropin = plugin_with_library_containing("libetrt_test_dropin");
  EXPECT_EQ(dropin.name, "test_dropin");
  EXPECT_EQ(dropin.source, ET_SOURCE_ENV);
  EXPECT_EQ(dropin.manifest_path, "");
}

TEST(Discovery, DefaultManifestsServeTheShippedKernels) {
  et_kernel_descriptor kernel = etrt::Runtime::get().find_kernel("aten::add.out");
  EXPECT_NE(kernel.fn, nullptr);
  auto plugin = plugin_with_library_containing("libetrt_kernels_optimized");
  EXPECT_EQ(plugin.source, ET_SOURCE_DEFAULT);
  EXPECT_EQ(plugin.state, ET_PLUGIN_LOADED);
}

TEST(Discovery, ExplicitLoadComesFirst) {
  // An explicit load of a file no manifest mentions: source "explicit".
  etrt::Runtime::get().load_plugin(plugin_path("extra_exports"));
  auto plugin = plugin_with_library_containing("libetrt_test_extra_exports");
  EXPECT_EQ(plugin.source, ET_SOURCE_EXPLICIT);
  EXPECT_EQ(plugin.state, ET_PLUGIN_LOADED);
}

}  // namespace
