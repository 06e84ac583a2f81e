// Discovery rules from issues 9 and 15: relative ETRT_PLUGIN_PATH entries are
// refused (never resolved against the working directory), and only the file
// named schema.json is skipped in a manifest directory, not every path that
// contains "schema".
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::HasSubstr;
using namespace etrt_test;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("etrt_discovery_rules_" + std::to_string(getpid())) / name;
  fs::create_directories(dir);
  return dir;
}

std::string manifest_text(const std::string& name, const std::string& library, const std::string& op) {
  return R"({"manifest_version": 1, "name": ")" + name + R"(", "version": "1", "library": ")" + library +
         R"(", "abi": {"major": 1, "minor": 1}, "provides": {"operators": [")" + op + R"("]}})";
}

bool declared(const std::string& name) {
  for (const auto& plugin : etrt::Runtime::get().plugins())
    if (plugin.name == name) return true;
  return false;
}

std::string rejection_of(const std::string& path) {
  for (const auto& rejection : etrt::Runtime::get().rejections())
    if (rejection.path == path) return rejection.reason;
  return "";
}

// Runs first: discovery reads the environment once.
TEST(DiscoveryRules, RelativePluginPathEntryIsRefusedNotResolvedAgainstTheWorkingDirectory) {
  fs::path cwd = scratch("cwd");
  fs::create_directories(cwd / "relative");
  fs::copy_file(plugin_path("lazy"), cwd / "relative" / "liblazy_copy.so", fs::copy_options::overwrite_existing);
  std::ofstream(cwd / "relative" / "lazy.json") << manifest_text("test_lazy", "liblazy_copy.so", "test::lazy_op");
  ASSERT_EQ(chdir(cwd.c_str()), 0);
  setenv("ETRT_PLUGIN_PATH", "relative", 1);

  auto manifests = etrt::Runtime::get().manifests();  // first use: discovery runs
  for (const std::string& manifest : manifests) EXPECT_THAT(manifest, ::testing::Not(HasSubstr("relative")));
  EXPECT_FALSE(declared("test_lazy"));
  EXPECT_THAT(rejection_of("relative"), HasSubstr("relative ETRT_PLUGIN_PATH entry refused"));
}

TEST(DiscoveryRules, ManifestsInADirectoryNamedSchemasAreRead) {
  fs::path dir = scratch("schemas");
  fs::copy_file(plugin_path("concurrent"), dir / "libconcurrent_copy.so", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "concurrent.json")
      << manifest_text("test_concurrent", "libconcurrent_copy.so", "test::concurrent_op");
  std::ofstream(dir / "schema_notes.json") << manifest_text("test_good", "libmissing.so", "test::good_op");
  std::ofstream(dir / "schema.json") << "{\"title\": \"the schema itself, not a manifest\"}";
  etrt::Runtime::get().add_manifest(dir.string());
  EXPECT_TRUE(declared("test_concurrent"));
  EXPECT_TRUE(declared("test_good"));  // schema_notes.json is a manifest like any other
  EXPECT_EQ(rejection_of((dir / "schema.json").string()), "");
  EXPECT_EQ(call_reporting_kernel("test::concurrent_op"), 1);
}

}  // namespace
