// Two separately built shared objects that each link libetrt, loaded with
// RTLD_LOCAL into a process that does not link libetrt itself, see one
// registry and one thread pool: libetrt is mapped once.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

using namespace etrt_test;

namespace {

struct Probe {
  void* handle = nullptr;
  const void* (*registry_identity)() = nullptr;
  const void* (*threadpool_identity)() = nullptr;
  size_t (*threadpool_size)() = nullptr;
  int (*load_plugin)(const char*) = nullptr;
  int (*set_threads)(size_t) = nullptr;
  int (*has_kernel)(const char*) = nullptr;

  explicit Probe(const std::string& name) {
    std::string path = std::string(ETRT_TEST_PLUGIN_DIR) + "/libetrt_probe_" + name + ".so";
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) throw std::runtime_error(dlerror());
    bind(registry_identity, "probe_registry_identity");
    bind(threadpool_identity, "probe_threadpool_identity");
    bind(threadpool_size, "probe_threadpool_size");
    bind(load_plugin, "probe_load_plugin");
    bind(set_threads, "probe_set_threads");
    bind(has_kernel, "probe_has_kernel");
  }
  template <typename Fn>
  void bind(Fn& fn, const char* symbol) {
    fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (fn == nullptr) throw std::runtime_error(std::string("missing ") + symbol);
  }
};

TEST(OneRegistry, TwoModulesShareOneRegistryAndOnePool) {
  EXPECT_FALSE(is_mapped("/libetrt.so.1"));  // this executable does not link it
  Probe a("a"), b("b");
  EXPECT_EQ(mapped_files_containing("/libetrt.so.1").size(), 1u);
  EXPECT_EQ(a.registry_identity(), b.registry_identity());
  EXPECT_EQ(a.threadpool_identity(), b.threadpool_identity());

  EXPECT_EQ(b.has_kernel("test::good_op"), 0);
  ASSERT_EQ(a.load_plugin(plugin_path("good").c_str()), 0);
  EXPECT_EQ(a.has_kernel("test::good_op"), 1);
  EXPECT_EQ(b.has_kernel("test::good_op"), 1);  // registered through a, seen by b

  ASSERT_EQ(a.set_threads(3), 0);
  EXPECT_EQ(b.threadpool_size(), 3u);
  ASSERT_EQ(b.set_threads(1), 0);
  EXPECT_EQ(a.threadpool_size(), 1u);
}

}  // namespace
