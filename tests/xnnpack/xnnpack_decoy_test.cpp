// A library exporting every xnn_* function of xnnpack.h (each fails and counts
// its calls) is loaded RTLD_GLOBAL before etrt. The xnnpack plugin, loaded by
// libetrt with RTLD_NOW | RTLD_LOCAL, must still run its own XNNPACK: no decoy
// call, outputs equal to the kernels plugin's on the portable programs.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "xnnpack_test_util.h"

using ::testing::HasSubstr;

namespace {

TEST(XnnpackDecoy, PluginBindsItsOwnXnnpackDespiteAGlobalDecoy) {
  if (std::string why = xnnpack_test::decoy_unsupported(); !why.empty()) GTEST_SKIP() << why;
  std::string stats = "/tmp/etrt_xnnpack_decoy_" + std::to_string(getpid()) + ".jsonl";
  std::remove(stats.c_str());
  setenv("ETRT_XNNPACK_STATS", stats.c_str(), 1);

  ASSERT_FALSE(etrt_test::is_mapped("libXNNPACK")) << "XNNPACK must not be mapped before the plugin loads it";
  void* decoy = dlopen(ETRT_DECOY_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(decoy, nullptr) << dlerror();
  // The process' global scope now answers xnn_* with the decoy.
  ASSERT_EQ(dlsym(RTLD_DEFAULT, "xnn_initialize"), dlsym(decoy, "xnn_initialize"));
  ASSERT_EQ(dlsym(RTLD_DEFAULT, "xnn_create_convolution2d_nhwc_f32"),
            dlsym(decoy, "xnn_create_convolution2d_nhwc_f32"));
  auto* calls = static_cast<int*>(dlsym(decoy, "etrt_decoy_calls"));
  auto* last = static_cast<const char**>(dlsym(decoy, "etrt_decoy_last"));
  ASSERT_NE(calls, nullptr);

  // Fully connected, convolutions, pooling, depthwise, residual adds, dynamic shapes.
  for (const char* model : {"mlp", "small_cnn", "resnet_basic", "mobilenet_v2_block", "dynamic_mlp", "two_methods"}) {
    SCOPED_TRACE(model);
    etrt::Program delegated = etrt::Program::load(xnnpack_test::model_path(model, "xnnpack.pte"));
    etrt::Program portable = etrt::Program::load(xnnpack_test::model_path(model, "portable.pte"));
    auto ids = delegated.delegates("forward");
    ASSERT_FALSE(ids.empty());
    for (const std::string& id : ids) EXPECT_EQ(id, "XnnpackBackend");
    auto got = xnnpack_test::run(delegated, "forward");
    auto want = xnnpack_test::run(portable, "forward");
    EXPECT_EQ(xnnpack_test::compare(got, want), "");
    EXPECT_EQ(*calls, 0) << "the decoy's " << *last << " was called";
  }
  EXPECT_EQ(*calls, 0) << "the decoy's " << *last << " was called";
  if (ETRT_XNNPACK_LINKED_STATICALLY) {
    // XNNPACK and the shim are linked into the plugin: no XNNPACK library is mapped at all.
    EXPECT_FALSE(etrt_test::is_mapped("libXNNPACK.so")) << "the statically linked plugin opened a libXNNPACK";
    EXPECT_FALSE(etrt_test::is_mapped("libetrt_pthreadpool_shim.so"));
  } else {
    EXPECT_TRUE(etrt_test::is_mapped("libXNNPACK.so")) << "the plugin did not load Debian's libXNNPACK";
    // One pool in the process: XNNPACK runs on etrt's, through the shim.
    EXPECT_TRUE(etrt_test::is_mapped("libetrt_pthreadpool_shim.so"));
  }
  // No pthreadpool library is mapped.
  EXPECT_FALSE(etrt_test::is_mapped("libpthreadpool.so")) << "XNNPACK brought a second thread pool";

  // The backend that ran is the xnnpack plugin's.
  bool found = false;
  for (const auto& entry : etrt::Runtime::get().backends())
    if (entry.name == "XnnpackBackend" && entry.is_winner) {
      found = true;
      EXPECT_EQ(entry.plugin, "xnnpack");
    }
  EXPECT_TRUE(found);
  // Every delegate handle (destroyed with its method) reported its work.
  std::string report = xnnpack_test::read_file(stats);
  // Hidden symbols bind inside the plugin at link time: the static build needs no RTLD_DEEPBIND.
  EXPECT_THAT(report, HasSubstr(ETRT_XNNPACK_LINKED_STATICALLY ? "\"deep_bind\": false" : "\"deep_bind\": true"));
  EXPECT_THAT(report, HasSubstr("\"plugin\": \"xnnpack\""));
  EXPECT_THAT(report, ::testing::Not(HasSubstr("\"xnnpack_invocations\": 0,")));
  std::remove(stats.c_str());
}

}  // namespace
