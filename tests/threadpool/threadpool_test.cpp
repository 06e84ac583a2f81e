// The one pool: its size, parallel_for coverage, nesting, a bounded number of
// threads after loading every plugin, and resizing while others submit work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "etrt/etrt.hpp"
#include "test_support.h"

using namespace etrt_test;

namespace {

struct Coverage {
  std::vector<std::atomic<int>> hits;
  explicit Coverage(size_t n) : hits(n) {}
};

void mark(void* context, size_t begin, size_t end) {
  auto* coverage = static_cast<Coverage*>(context);
  for (size_t i = begin; i < end; ++i) coverage->hits[i].fetch_add(1);
}

TEST(ThreadPool, SizeComesFromEnvironmentOrPhysicalCores) {
  const char* env = std::getenv("ETRT_NUM_THREADS");
  size_t size = et_threadpool_size();
  if (env != nullptr && *env != '\0') {
    EXPECT_EQ(size, static_cast<size_t>(std::atoi(env)));
  } else {
    EXPECT_GE(size, 1u);
    EXPECT_LE(size, std::thread::hardware_concurrency());
  }
}

TEST(ThreadPool, ParallelForCoversEveryIndexExactlyOnce) {
  for (size_t range : {0, 1, 7, 1000, 100003}) {
    for (size_t grain : {1, 16, 4096}) {
      Coverage coverage(range);
      et_parallel_for(range, grain, mark, &coverage);
      for (size_t i = 0; i < range; ++i) ASSERT_EQ(coverage.hits[i].load(), 1) << range << "/" << grain << " at " << i;
    }
  }
}

TEST(ThreadPool, NestedParallelForRunsInline) {
  std::atomic<size_t> total{0};
  struct Outer {
    std::atomic<size_t>* total;
  } outer{&total};
  et_parallel_for(64, 1, [](void* ctx, size_t begin, size_t end) {
    auto* o = static_cast<Outer*>(ctx);
    for (size_t i = begin; i < end; ++i) {
      et_parallel_for(100, 1, [](void* c, size_t b, size_t e) {
        static_cast<std::atomic<size_t>*>(c)->fetch_add(e - b);
      }, o->total);
    }
  }, &outer);
  EXPECT_EQ(total.load(), 6400u);
}

TEST(ThreadPool, NoMoreThreadsThanThePoolAfterLoadingEveryPlugin) {
  etrt::Runtime::get().add_manifest(ETRT_TEST_MANIFEST_DIR);
  etrt::Runtime::get().load_all_plugins();  // the broken test plugins fail; that is fine here
  size_t loaded = 0;
  for (const auto& plugin : etrt::Runtime::get().plugins()) loaded += plugin.loaded();
  EXPECT_GE(loaded, 8u);
  Coverage coverage(1 << 16);
  et_parallel_for(coverage.hits.size(), 64, mark, &coverage);
  // The pool counts the calling thread; the main thread is that caller.
  size_t threads = thread_count();
  EXPECT_LE(threads, et_threadpool_size() + 1) << "threads: " << threads << ", pool: " << et_threadpool_size();
}

TEST(ThreadPool, ResizingWhileAnotherThreadSubmitsIsSafe) {
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, rounds{0};
  std::thread submitter([&] {
    while (!stop.load()) {
      Coverage coverage(20000);
      et_parallel_for(coverage.hits.size(), 100, mark, &coverage);
      for (auto& hit : coverage.hits) bad += hit.load() != 1;
      ++rounds;
    }
  });
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(et_threadpool_set_size(1 + i % 4, nullptr), ET_OK);
    ASSERT_EQ(et_threadpool_size(), static_cast<size_t>(1 + i % 4));
  }
  stop = true;
  submitter.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(rounds.load(), 0);
}

TEST(ThreadPool, LeaseGenerationChangesOnResizeAndBadSizesAreRefused) {
  const et_host_api* host = et_host_api_get();
  et_service_lease lease{};
  lease.struct_size = sizeof lease;
  ASSERT_EQ(host->service_acquire("pthreadpool", &lease), nullptr);
  uint64_t before = lease.generation;
  host->service_release(&lease);
  ASSERT_EQ(et_threadpool_set_size(2, nullptr), ET_OK);
  ASSERT_EQ(host->service_acquire("pthreadpool", &lease), nullptr);
  EXPECT_GT(lease.generation, before);
  host->service_release(&lease);
  std::string error = error_of([](et_error** e) { return et_threadpool_set_size(0, e); });
  EXPECT_THAT(error, ::testing::HasSubstr("between 1 and 1024"));
}

// A body that throws (a plugin's kernel breaking the rule) reaches the thread
// that called parallel_for, as if it had run there; the run ends first (no
// worker is left in it) and the pool keeps its workers.
struct Thrower {
  std::thread::id caller;
  bool on_caller = false;  // throw on the calling thread's chunks, else on the workers'
  std::atomic<int> thrown{0};
};

void throwing_body(void* context, size_t, size_t) {
  auto* thrower = static_cast<Thrower*>(context);
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  if ((std::this_thread::get_id() == thrower->caller) == thrower->on_caller) {
    thrower->thrown.fetch_add(1);
    throw std::runtime_error("body boom");
  }
}

struct Helped {
  std::thread::id caller;
  std::atomic<size_t> by_others{0};
};

void helped_body(void* context, size_t begin, size_t end) {
  auto* helped = static_cast<Helped*>(context);
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  if (std::this_thread::get_id() != helped->caller) helped->by_others.fetch_add(end - begin);
}

TEST(ThreadPool, AnExceptionFromABodyReachesTheCallerAndThePoolGoesOn) {
  ASSERT_EQ(et_threadpool_set_size(3, nullptr), ET_OK);
  for (bool on_caller : {false, true}) {
    Thrower thrower;
    thrower.caller = std::this_thread::get_id();
    thrower.on_caller = on_caller;
    int caught = 0;
    for (int round = 0; round < 100 && thrower.thrown.load() == 0; ++round) {
      try {
        et_parallel_for(64, 1, throwing_body, &thrower);
      } catch (const std::runtime_error& error) {
        EXPECT_STREQ(error.what(), "body boom");
        ++caught;
      }
    }
    ASSERT_GT(thrower.thrown.load(), 0) << (on_caller ? "the caller" : "no worker") << " ran a chunk";
    EXPECT_EQ(caught, 1);
    Coverage coverage(20000);
    et_parallel_for(coverage.hits.size(), 100, mark, &coverage);
    for (size_t i = 0; i < coverage.hits.size(); ++i) ASSERT_EQ(coverage.hits[i].load(), 1) << i;
    Helped helped{std::this_thread::get_id()};
    for (int round = 0; round < 50 && helped.by_others.load() == 0; ++round)
      et_parallel_for(64, 1, helped_body, &helped);
    EXPECT_GT(helped.by_others.load(), 0u) << "the workers no longer help after a body threw";
  }
}

}  // namespace
