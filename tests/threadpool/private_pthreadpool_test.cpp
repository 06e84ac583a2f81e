// libetrt's pool must be its own, and use its own cpuinfo, even when another
// library exporting the same names sits in the global scope first (PyTorch
// imported with TORCH_USE_RTLD_GLOBAL=1, ExecuTorch's threadpool library).
// Like Python importing an extension after torch, this test loads the decoy
// RTLD_GLOBAL and only then opens libetrt (it does not link it).
#include <dlfcn.h>

#include <atomic>
#include <vector>

#include <gtest/gtest.h>

#include "etrt/etrt.h"
#include "test_support.h"

namespace {

template <typename Function>
Function symbol(void* library, const char* name) {
  return reinterpret_cast<Function>(dlsym(library, name));
}

TEST(PrivatePthreadpool, PoolIgnoresGlobalDecoys) {
  void* decoy = dlopen(ETRT_PTHREADPOOL_DECOY, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(decoy, nullptr) << dlerror();
  ASSERT_EQ(dlsym(RTLD_DEFAULT, "pthreadpool_create"), dlsym(decoy, "pthreadpool_create"));
  ASSERT_EQ(dlsym(RTLD_DEFAULT, "cpuinfo_initialize"), dlsym(decoy, "cpuinfo_initialize"));
  auto* calls = static_cast<int*>(dlsym(decoy, "etrt_decoy_calls"));
  auto* last = static_cast<const char**>(dlsym(decoy, "etrt_decoy_last"));
  ASSERT_NE(calls, nullptr);

  void* etrt = dlopen(ETRT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(etrt, nullptr) << dlerror();
  EXPECT_FALSE(etrt_test::is_mapped("libpthreadpool")) << "libetrt must open pthreadpool itself, not link it";
  auto pool_size = symbol<size_t (*)()>(etrt, "et_threadpool_size");
  auto set_pool_size = symbol<int32_t (*)(size_t, et_error**)>(etrt, "et_threadpool_set_size");
  auto parallel_for = symbol<void (*)(size_t, size_t, et_parallel_body, void*)>(etrt, "et_parallel_for");
  ASSERT_TRUE(pool_size && set_pool_size && parallel_for);

  EXPECT_GE(pool_size(), 1u);  // first use: sized by cpuinfo
  ASSERT_EQ(set_pool_size(3, nullptr), ET_OK);
  EXPECT_EQ(pool_size(), 3u);  // the decoy's pool would report 0 threads

  std::vector<std::atomic<int>> hits(10000);
  parallel_for(hits.size(), 16, [](void* context, size_t begin, size_t end) {
    auto& h = *static_cast<std::vector<std::atomic<int>>*>(context);
    for (size_t i = begin; i < end; ++i) h[i].fetch_add(1);
  }, &hits);
  for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << i;

  EXPECT_EQ(*calls, 0) << "the decoy's " << *last << " was called";
  // etrt's pool is its own (threadpool/worker_pool.h): no pthreadpool library is opened at all.
  EXPECT_FALSE(etrt_test::is_mapped("libpthreadpool.so")) << "libetrt opened a pthreadpool beside its own pool";
  EXPECT_TRUE(etrt_test::is_mapped("libcpuinfo.so"));
}

}  // namespace
