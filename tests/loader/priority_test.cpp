// Two plugins provide one operator: manifest priority decides, deterministically,
// whichever is loaded first, and the loser is visible with the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace etrt_test;

namespace {

std::vector<etrt::RegistryEntry> providers_of(const std::string& name) {
  std::vector<etrt::RegistryEntry> out;
  for (const auto& entry : etrt::Runtime::get().operators())
    if (entry.name == name) out.push_back(entry);
  return out;
}

TEST(Priority, LazyLookupLoadsOnlyTheHighestPriorityProvider) {
  etrt::Runtime::get().add_manifest(ETRT_TEST_MANIFEST_DIR);
  EXPECT_EQ(call_reporting_kernel("test::dup_op"), 50);
  EXPECT_TRUE(is_mapped("libetrt_test_dup_high"));
  EXPECT_FALSE(is_mapped("libetrt_test_dup_low"));
}

TEST(Priority, LowerPriorityLoadedLaterLosesAndSaysWhy) {
  etrt::Runtime::get().load_plugin(manifest_path("dup_low"));
  EXPECT_EQ(call_reporting_kernel("test::dup_op"), 50);
  auto providers = providers_of("test::dup_op");
  ASSERT_EQ(providers.size(), 2u);
  EXPECT_TRUE(providers[0].is_winner);
  EXPECT_EQ(providers[0].plugin, "test_dup_high");
  EXPECT_FALSE(providers[1].is_winner);
  EXPECT_EQ(providers[1].plugin, "test_dup_low");
  EXPECT_THAT(providers[1].reason, AllOf(HasSubstr("priority 10 is lower than 50"), HasSubstr("test_dup_high")));
  EXPECT_THAT(etrt::Runtime::get().report_json(), HasSubstr("\"selected\":false"));
}

TEST(Priority, LoadingEitherAgainChangesNothing) {
  etrt::Runtime::get().load_plugin(manifest_path("dup_high"));
  etrt::Runtime::get().load_plugin(plugin_path("dup_low"));
  EXPECT_EQ(providers_of("test::dup_op").size(), 2u);
  for (const auto& plugin : etrt::Runtime::get().plugins()) {
    if (plugin.name == "test_dup_high" || plugin.name == "test_dup_low") {
      EXPECT_EQ(plugin.load_count, 1u) << plugin.library_path << " " << plugin.manifest_path << " " << plugin.state
                                       << " " << plugin.failure;
    }
  }
  EXPECT_EQ(call_reporting_kernel("test::dup_op"), 50);
}

}  // namespace
