// Lazy loading: manifests are read at start-up but no plugin is mapped until
// a lookup needs one; then exactly that plugin is loaded, once, even when many
// threads ask at the same moment.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <mutex>
#include <thread>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using namespace etrt_test;

namespace {

// Plugins are the files called libetrt_<name>.so.N; libetrt itself has no '_'.
const char* kPluginMarker = "/libetrt_";

TEST(LazyLoading, StartUpMapsNoPlugin) {
  etrt::Runtime::get().add_manifest(ETRT_TEST_MANIFEST_DIR);
  EXPECT_GT(et_plugin_count(), 10u);  // every manifest was read
  EXPECT_TRUE(is_mapped("/libetrt.so.1"));
  EXPECT_THAT(mapped_files_containing(kPluginMarker), ElementsAre());
  for (const auto& plugin : etrt::Runtime::get().plugins()) EXPECT_FALSE(plugin.loaded()) << plugin.name;
}

TEST(LazyLoading, FirstLookupLoadsExactlyThePluginThatProvidesTheName) {
  EXPECT_EQ(call_reporting_kernel("test::lazy_op"), 1);
  EXPECT_THAT(mapped_files_containing(kPluginMarker), ElementsAre(EndsWith("/libetrt_test_lazy.so.1")));
  EXPECT_EQ(plugin_named("test_lazy").load_count, 1u);
  // Its backend and tracer came with it; looking them up loads nothing more.
  EXPECT_STREQ(etrt::Runtime::get().find_backend("TestLazyBackend").id, "TestLazyBackend");
  EXPECT_THAT(mapped_files_containing(kPluginMarker), ElementsAre(EndsWith("/libetrt_test_lazy.so.1")));
}

TEST(LazyLoading, SixteenThreadsLookingUpOneNameLoadItOnce) {
  constexpr int kThreads = 16;
  std::barrier start(kThreads);
  std::atomic<int> found{0};
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      et_kernel_descriptor kernel{};
      kernel.struct_size = sizeof kernel;
      std::string error = error_of([&](et_error** e) { return et_find_kernel("test::concurrent_op", &kernel, e); });
      if (error.empty() && kernel.fn != nullptr) {
        ++found;
      } else {
        std::lock_guard lock(errors_mutex);
        errors.push_back(error);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(found.load(), kThreads) << ::testing::PrintToString(errors);
  EXPECT_EQ(plugin_named("test_concurrent").load_count, 1u);
  EXPECT_EQ(call_reporting_kernel("test::concurrent_op"), 1);  // the plugin's own count of init calls
  EXPECT_EQ(mapped_files_containing("libetrt_test_concurrent").size(), 1u);
  EXPECT_EQ(mapped_files_containing(kPluginMarker).size(), 2u);  // lazy + concurrent, nothing else
}

TEST(LazyLoading, UnknownNameFailsNamingItAndTheManifestsSearched) {
  std::string error = error_of([](et_error** e) { return et_find_kernel("test::nobody_provides", nullptr, e); });
  EXPECT_THAT(error, AllOf(HasSubstr("operator 'test::nobody_provides' is not provided by any plugin"),
                           HasSubstr(ETRT_TEST_MANIFEST_DIR), HasSubstr("manifests searched")));
  std::string backend = error_of([](et_error** e) { return et_find_backend("NoSuchBackend", nullptr, e); });
  EXPECT_THAT(backend, HasSubstr("backend 'NoSuchBackend' is not provided by any plugin"));
  EXPECT_EQ(mapped_files_containing(kPluginMarker).size(), 2u);
}

}  // namespace
