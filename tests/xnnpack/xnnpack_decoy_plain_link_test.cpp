// What the decoy does to a library that links libXNNPACK the ordinary way
// (DT_NEEDED) and is dlopen'ed RTLD_LOCAL: its calls resolve through the global
// scope first, so they reach the decoy. This is why the xnnpack plugin does
// not link libXNNPACK but opens it with RTLD_DEEPBIND. And because the plugin
// opens its own private copy of libXNNPACK (on etrt's pthreadpool shim), a
// libXNNPACK mapped that way by someone else does not touch it: the plugin
// still runs, with correct results, and never reaches the decoy. Built with ETRT_XNNPACK_FROM_SOURCE,
// the plugin links its XNNPACK statically with hidden symbols, which no global scope can interpose.
#include <dlfcn.h>

#include <gtest/gtest.h>

#include "test_support.h"
#include "xnnpack_test_util.h"

namespace {

TEST(XnnpackDecoy, OrdinaryLinkingIsInterposedButThePluginsPrivateCopyIsNot) {
  if (std::string why = xnnpack_test::decoy_unsupported(); !why.empty()) GTEST_SKIP() << why;
  void* decoy = dlopen(ETRT_DECOY_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(decoy, nullptr) << dlerror();
  auto* calls = static_cast<int*>(dlsym(decoy, "etrt_decoy_calls"));
  void* naive = dlopen(ETRT_NAIVE_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(naive, nullptr) << dlerror();
  auto initialize = reinterpret_cast<int (*)()>(dlsym(naive, "etrt_naive_initialize"));
  ASSERT_NE(initialize, nullptr);
  EXPECT_EQ(initialize(), 2) << "expected the decoy's status (2), got XNNPACK's";
  EXPECT_EQ(*calls, 1) << "RTLD_LOCAL did not stop the global decoy from taking the call";

  // Debian's libXNNPACK is now mapped with its PLT bound to the global scope.
  ASSERT_TRUE(etrt_test::is_mapped("libXNNPACK.so.0"));
  etrt::Program delegated = etrt::Program::load(xnnpack_test::model_path("mlp", "xnnpack.pte"));
  etrt::Program portable = etrt::Program::load(xnnpack_test::model_path("mlp", "portable.pte"));
  EXPECT_EQ(xnnpack_test::compare(xnnpack_test::run(delegated, "forward"), xnnpack_test::run(portable, "forward")), "");
  EXPECT_EQ(*calls, 1) << "the plugin's XNNPACK reached the decoy";
  if (ETRT_XNNPACK_LINKED_STATICALLY)  // XNNPACK linked into the plugin, hidden: nothing else to open.
    EXPECT_FALSE(etrt_test::is_mapped("xnnpack_private/")) << "the statically linked plugin opened a private copy";
  else
    EXPECT_TRUE(etrt_test::is_mapped("xnnpack_private/libXNNPACK.so.0.etrt")) << "the plugin did not open its private copy";
}

}  // namespace
