// ETRT_PLUGIN (plugin.hpp) writes a plugin's entry point: the plugin loads with
// the name, version and description it gave, reports the minor it was built
// for (ET_ABI_TARGET_MINOR, not the header's), registers through its init, and
// an exception from init fails the load as the plugin's fenced error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::HasSubstr;
using namespace etrt_test;

namespace {

std::string sdk_manifest(const std::string& name) { return std::string(ETRT_SDK_MANIFEST_DIR) + "/" + name + ".json"; }

TEST(EntryMacro, APluginBuiltForAnOlderMinorSaysSoAndRegisters) {
  etrt::Runtime::get().load_plugin(sdk_manifest("test_entry_macro"));
  etrt::PluginInfo info = plugin_named("test_entry_macro");
  ASSERT_TRUE(info.loaded()) << info.failure;
  EXPECT_EQ(info.version, "2.0.0");
  EXPECT_EQ(info.description, "a plugin whose entry point is ETRT_PLUGIN");
  EXPECT_EQ(info.built_abi_major, static_cast<uint32_t>(ET_ABI_MAJOR));
  EXPECT_EQ(info.built_abi_minor, 3u);  // built with ET_ABI_TARGET_MINOR=3
  EXPECT_EQ(info.abi_minor, 3u);
  et_kernel_descriptor kernel = etrt::Runtime::get().find_kernel("test_entry_macro::probe");
  et_value value{};
  value.struct_size = sizeof value;
  value.tag = ET_VALUE_INT;
  et_value* args[] = {&value};
  EXPECT_EQ(kernel.fn(kernel.user_data, nullptr, args, 1), nullptr);
}

TEST(EntryMacro, AnExceptionFromInitIsTheLoadsErrorWordedByThePlugin) {
  std::string message;
  try {
    etrt::Runtime::get().load_plugin(sdk_manifest("test_entry_macro_throws"));
  } catch (const etrt::Error& error) {
    message = error.what();
  }
  // fence() in the plugin words it; the host's own fence would say "init threw std::runtime_error".
  EXPECT_THAT(message, HasSubstr("init: internal error: no registration today"));
  etrt::PluginInfo info = plugin_named("test_entry_macro_throws");
  EXPECT_EQ(info.state, ET_PLUGIN_FAILED);
  EXPECT_THAT(info.failure, HasSubstr("init: internal error: no registration today"));
  EXPECT_EQ(info.built_abi_minor, static_cast<uint32_t>(ET_ABI_MINOR));
}

}  // namespace
