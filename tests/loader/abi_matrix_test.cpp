// Host x plugin ABI matrix: an older minor loads (smaller structs), a newer
// minor loads speaking the host's minor (extras ignored), a newer major is
// refused naming both versions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace etrt_test;

namespace {

TEST(AbiMatrix, OlderMinorLoadsWithItsSmallerStructs) {
  etrt::Runtime::get().load_plugin(manifest_path("old_minor"));
  auto plugin = plugin_named("test_old_minor");
  EXPECT_EQ(plugin.built_abi_minor, 0u);
  EXPECT_EQ(plugin.abi_major, static_cast<uint32_t>(ET_ABI_MAJOR));
  EXPECT_EQ(plugin.abi_minor, 0u);  // spoken level: the plugin's
  // The plugin registered a 1.0-sized kernel descriptor (no `variant` field).
  EXPECT_EQ(call_reporting_kernel("test::old_minor_op"), static_cast<int64_t>(offsetof(et_kernel_descriptor, variant)));
  et_kernel_descriptor kernel = etrt::Runtime::get().find_kernel("test::old_minor_op");
  EXPECT_STREQ(kernel.variant, "");  // the host filled what 1.0 lacks
}

TEST(AbiMatrix, NewerMinorLoadsSpeakingTheHostsMinor) {
  etrt::Runtime::get().load_plugin(manifest_path("new_minor"));
  auto plugin = plugin_named("test_new_minor");
  EXPECT_EQ(plugin.built_abi_minor, static_cast<uint32_t>(ET_ABI_MINOR + 1));
  EXPECT_EQ(plugin.abi_minor, static_cast<uint32_t>(ET_ABI_MINOR));
  EXPECT_EQ(call_reporting_kernel("test::new_minor_op"), ET_ABI_MINOR);
  EXPECT_EQ(plugin.failure, "");
}

TEST(AbiMatrix, NewerMajorIsRefusedWithBothVersions) {
  std::string error = error_of([](et_error** e) {
    return et_load_plugin(plugin_path("newer_major").c_str(), e);
  });
  EXPECT_THAT(error, AllOf(HasSubstr("plugin speaks ABI " + std::to_string(ET_ABI_MAJOR + 1) + ".0"),
                           HasSubstr("this host speaks ABI 1.0-1." + std::to_string(ET_ABI_MINOR))));
}

TEST(AbiMatrix, HostOffersItsRange) {
  uint32_t major = 0, min_minor = 9, max_minor = 0;
  et_host_abi_version(&major, &min_minor, &max_minor);
  EXPECT_EQ(major, static_cast<uint32_t>(ET_ABI_MAJOR));
  EXPECT_EQ(min_minor, 0u);
  EXPECT_EQ(max_minor, static_cast<uint32_t>(ET_ABI_MINOR));
  const et_host_api* host = et_host_api_get();
  EXPECT_EQ(host->struct_size, sizeof(et_host_api));
  EXPECT_EQ(host->abi_minor, static_cast<uint32_t>(ET_ABI_MINOR));
}

}  // namespace
