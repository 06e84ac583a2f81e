// What the decoy does to a library that links libXNNPACK the ordinary way
// (DT_NEEDED) and is dlopen'ed RTLD_LOCAL: its calls resolve through the global
// scope first, so they reach the decoy. This is why the xnnpack plugin does
// not link libXNNPACK but opens it with RTLD_DEEPBIND. And once libXNNPACK has
// been mapped that way, the plugin cannot isolate it any more: it must then
// fail with a clear error, not crash or compute garbage.
#include <dlfcn.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "xnnpack_test_util.h"

namespace {

TEST(XnnpackDecoy, OrdinaryLinkingIsInterposedAndThePluginFailsCleanly) {
  void* decoy = dlopen(ETRT_DECOY_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(decoy, nullptr) << dlerror();
  auto* calls = static_cast<int*>(dlsym(decoy, "etrt_decoy_calls"));
  void* naive = dlopen(ETRT_NAIVE_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(naive, nullptr) << dlerror();
  auto initialize = reinterpret_cast<int (*)()>(dlsym(naive, "etrt_naive_initialize"));
  ASSERT_NE(initialize, nullptr);
  EXPECT_EQ(initialize(), 2) << "expected the decoy's status (2), got XNNPACK's";
  EXPECT_EQ(*calls, 1) << "RTLD_LOCAL did not stop the global decoy from taking the call";

  // libXNNPACK is now mapped with its PLT bound to the global scope.
  ASSERT_TRUE(etrt_test::is_mapped("libXNNPACK.so"));
  try {
    etrt::Program program = etrt::Program::load(xnnpack_test::model_path("mlp", "xnnpack.pte"));
    etrt::Method method = program.load_method("forward");
    FAIL() << "the method loaded although XNNPACK's internal calls reach the decoy";
  } catch (const etrt::Error& error) {
    EXPECT_THAT(error.what(), ::testing::HasSubstr("XnnpackBackend"));
    EXPECT_EQ(error.plugin(), "xnnpack");
  }
  EXPECT_GT(*calls, 1);
  // The process stays usable: the portable program still runs.
  etrt::Program portable = etrt::Program::load(xnnpack_test::model_path("mlp", "portable.pte"));
  EXPECT_EQ(xnnpack_test::run(portable, "forward").size(), 1u);
}

}  // namespace
