// What ABI 1.2 promises, checked through a plugin built against it
// (abi_1_2_plugin.c) and through the host table itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::HasSubstr;
using namespace etrt_test;

namespace {

et_kernel_descriptor kernel_named(const std::string& name) {
  etrt::Runtime::get().load_plugin(manifest_path("abi_1_2"));
  return etrt::Runtime::get().find_kernel(name);
}

et_value empty_value() {
  et_value value{};
  value.struct_size = sizeof value;
  return value;
}

// What test_abi::setting returns for `name`: nullptr when the host refused or it is unset.
const char* setting_through_plugin(const std::string& name, std::string* value) {
  et_kernel_descriptor kernel = kernel_named("test_abi::setting");
  et_value in = empty_value(), out = empty_value();
  in.tag = ET_VALUE_STRING;
  in.items = name.data();
  in.count = name.size();
  et_value* args[] = {&in, &out};
  et_error* error = kernel.fn(kernel.user_data, nullptr, args, 2);
  EXPECT_EQ(error, nullptr);
  if (out.tag != ET_VALUE_STRING) return nullptr;
  value->assign(static_cast<const char*>(out.items), out.count);
  return value->c_str();
}

TEST(Abi12, HostSpeaksTheNewMinorAndFillsTheNewEntries) {
  const et_host_api* host = et_host_api_get();
  EXPECT_GE(host->abi_minor, 2u);  // 1.3 hosts keep every 1.2 entry
  EXPECT_TRUE(ET_HOST_HAS(host, setting));
  EXPECT_NE(host->error_code, nullptr);
  EXPECT_NE(host->error_message, nullptr);
  EXPECT_NE(host->scratch_alloc, nullptr);
  EXPECT_NE(host->setting, nullptr);
}

TEST(Abi12, ABackendLeavingItsOptionalEntriesNullIsAccepted) {
  etrt::Runtime::get().load_plugin(manifest_path("abi_1_2"));
  et_backend_descriptor backend = etrt::Runtime::get().find_backend("TestMinimalBackend");
  EXPECT_EQ(backend.is_available, nullptr);
  EXPECT_EQ(backend.destroy, nullptr);
  EXPECT_NE(backend.init, nullptr);
  EXPECT_EQ(plugin_named("test_abi_1_2").failure, "");
}

TEST(Abi12, SettingsAreOnlyEtrtNamesReadThroughTheHost) {
  setenv("ETRT_ABI_TEST_SETTING", "forty-two", 1);
  setenv("ABI_TEST_NOT_OURS", "secret", 1);
  std::string value;
  ASSERT_NE(setting_through_plugin("ETRT_ABI_TEST_SETTING", &value), nullptr);
  EXPECT_EQ(value, "forty-two");
  EXPECT_EQ(setting_through_plugin("ABI_TEST_NOT_OURS", &value), nullptr);  // not an ETRT_ name
  EXPECT_EQ(setting_through_plugin("PATH", &value), nullptr);
  EXPECT_EQ(setting_through_plugin("ETRT_ABI_TEST_UNSET", &value), nullptr);
  EXPECT_EQ(et_host_api_get()->setting(nullptr, nullptr), nullptr);
}

TEST(Abi12, PluginsReadTheHostsErrorCodeAndMessage) {
  et_kernel_descriptor kernel = kernel_named("test_abi::error");
  et_value code = empty_value(), message = empty_value();
  et_value* args[] = {&code, &message};
  ASSERT_EQ(kernel.fn(kernel.user_data, nullptr, args, 2), nullptr);
  EXPECT_EQ(code.as_int, ET_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(std::string(static_cast<const char*>(message.items), message.count), HasSubstr("named_data_get"));
  const et_host_api* host = et_host_api_get();
  EXPECT_EQ(host->error_code(nullptr), ET_OK);
  EXPECT_STREQ(host->error_message(nullptr), "");
}

TEST(Abi12, ScratchNeedsTheCallsContext) {
  et_kernel_descriptor kernel = kernel_named("test_abi::scratch_null");
  et_value out = empty_value();
  et_value* args[] = {&out};
  ASSERT_EQ(kernel.fn(kernel.user_data, nullptr, args, 1), nullptr);
  EXPECT_EQ(out.as_int, 1);
}

// A plugin built for 1.2 on an older host: the inline helpers check struct_size.
TEST(Abi12, HelpersReturnTheirFallbackOnAHostWithoutTheEntries) {
  et_host_api old_host = *et_host_api_get();
  old_host.struct_size = offsetof(et_host_api, error_code);  // a 1.1 table
  old_host.abi_minor = 1;
  setenv("ETRT_ABI_TEST_SETTING", "x", 1);
  EXPECT_EQ(et_host_setting(&old_host, nullptr, "ETRT_ABI_TEST_SETTING"), nullptr);
  EXPECT_STREQ(et_host_error_message(&old_host, nullptr, "fallback"), "fallback");
  EXPECT_EQ(et_host_scratch_alloc(&old_host, nullptr, 16, 16), nullptr);
  EXPECT_STREQ(et_host_setting(et_host_api_get(), nullptr, "ETRT_ABI_TEST_SETTING"), "x");
}

}  // namespace
