// The pthreadpool entry points the current XNNPACK adds to those of etrt's shim
// (plugins/xnnpack/platform/pthreadpool/pthreadpool_extensions.c), on a host whose
// parallel_for really runs bodies on several threads at once: every point of each
// index space runs exactly once with the right tile extents; _with_uarch forms pass
// the default uarch index; _with_thread forms pass a thread index below the pool's
// thread count that no two running tasks share; NULL runs inline on thread 0.
#include <gtest/gtest.h>

#include <pthreadpool.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "threaded_test_host.h"

namespace {

using xnnpack_test::ThreadedHost;
constexpr size_t kThreads = xnnpack_test::kTestThreads;
std::atomic<int>& g_parallel_for_calls = xnnpack_test::parallel_for_calls();

using Index = std::array<size_t, 3>;

// Hits over a 3-d space, the uarch indices seen, and which thread indices are in use right now.
struct Space {
  Index range;
  std::vector<std::atomic<int>> hits;
  std::atomic<int> wrong_uarch{0}, thread_out_of_range{0}, thread_shared{0}, tasks{0};
  std::array<std::atomic<bool>, 64> thread_busy{};
  std::array<std::atomic<int>, 64> thread_used{};
  size_t threads_count;

  Space(Index r, size_t threads) : range(r), hits(r[0] * r[1] * r[2]), threads_count(threads) {}

  void mark(Index start, Index extent) {
    ++tasks;
    for (size_t i = start[0]; i < start[0] + extent[0]; ++i)
      for (size_t j = start[1]; j < start[1] + extent[1]; ++j)
        for (size_t k = start[2]; k < start[2] + extent[2]; ++k) {
          ASSERT_TRUE(i < range[0] && j < range[1] && k < range[2]) << "task outside its range";
          hits[(i * range[1] + j) * range[2] + k].fetch_add(1);
        }
  }
  void uarch(uint32_t u) { wrong_uarch += u != 7; }
  // Runs mark() as a task of thread `t`, noting when another running task holds the same index.
  // wait_for_company: hold the index until a task with another index has started (at most 10 s),
  // so tasks overlap for certain however the machine schedules the threads.
  void mark_on_thread(size_t t, Index start, Index extent, bool wait_for_company = false) {
    if (t >= threads_count) {
      ++thread_out_of_range;
      return;
    }
    if (thread_busy[t].exchange(true)) ++thread_shared;
    ++thread_used[t];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (wait_for_company && threads_that_ran() < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::this_thread::sleep_for(std::chrono::microseconds(100));  // overlap with the other threads' tasks
    mark(start, extent);
    thread_busy[t] = false;
  }
  size_t wrong() const {
    size_t bad = 0;
    for (const auto& h : hits) bad += h.load() != 1;
    return bad;
  }
  int threads_that_ran() const {
    int n = 0;
    for (const auto& u : thread_used) n += u.load() > 0;
    return n;
  }
};

TEST(PthreadpoolExtensions, TiledFormsCoverTheirSpaceExactlyOnce) {
  ThreadedHost host;
  int before = g_parallel_for_calls.load();
  {
    Space s({4, 5, 7}, kThreads);
    pthreadpool_parallelize_3d_tile_1d(&host.handle, +[](void* c, size_t i, size_t j, size_t k, size_t tk) {
      static_cast<Space*>(c)->mark({i, j, k}, {1, 1, tk});
    }, &s, 4, 5, 7, 3, 0);
    EXPECT_EQ(s.wrong(), 0u) << "3d_tile_1d";
    EXPECT_EQ(s.tasks.load(), 4 * 5 * 3) << "k tiles of 3, 3, 1";
  }
  {
    Space s({6, 7, 1}, kThreads);
    pthreadpool_parallelize_2d_tile_1d_with_uarch(&host.handle, +[](void* c, uint32_t u, size_t i, size_t j, size_t tj) {
      static_cast<Space*>(c)->uarch(u);
      static_cast<Space*>(c)->mark({i, j, 0}, {1, tj, 1});
    }, &s, 7, 9, 6, 7, 4, 0);
    EXPECT_EQ(s.wrong(), 0u) << "2d_tile_1d_with_uarch";
    EXPECT_EQ(s.wrong_uarch.load(), 0);
  }
  {
    Space s({3, 4, 9}, kThreads);
    pthreadpool_parallelize_3d_tile_1d_with_uarch(&host.handle, +[](void* c, uint32_t u, size_t i, size_t j, size_t k,
                                                                    size_t tk) {
      static_cast<Space*>(c)->uarch(u);
      static_cast<Space*>(c)->mark({i, j, k}, {1, 1, tk});
    }, &s, 7, 9, 3, 4, 9, 4, 0);
    EXPECT_EQ(s.wrong(), 0u) << "3d_tile_1d_with_uarch";
    EXPECT_EQ(s.wrong_uarch.load(), 0);
  }
  EXPECT_EQ(g_parallel_for_calls.load() - before, 3) << "every call goes through the host's parallel_for";
}

TEST(PthreadpoolExtensions, WithThreadFormsGiveEachRunningTaskItsOwnThreadIndex) {
  ThreadedHost host;
  int before = g_parallel_for_calls.load();
  {
    Space s({23, 1, 1}, kThreads);
    pthreadpool_parallelize_1d_with_thread(&host.handle, +[](void* c, size_t t, size_t i) {
      static_cast<Space*>(c)->mark_on_thread(t, {i, 0, 0}, {1, 1, 1}, /*wait_for_company=*/i == 0);
    }, &s, 23, 0);
    EXPECT_EQ(s.wrong(), 0u) << "1d_with_thread";
    EXPECT_EQ(s.thread_out_of_range.load(), 0);
    EXPECT_EQ(s.thread_shared.load(), 0);
    EXPECT_GT(s.threads_that_ran(), 1) << "tasks ran under more than one thread index at once";
  }
  {
    Space s({5, 6, 1}, kThreads);
    pthreadpool_parallelize_2d_with_thread(&host.handle, +[](void* c, size_t t, size_t i, size_t j) {
      static_cast<Space*>(c)->mark_on_thread(t, {i, j, 0}, {1, 1, 1});
    }, &s, 5, 6, 0);
    EXPECT_EQ(s.wrong(), 0u) << "2d_with_thread";
    EXPECT_EQ(s.thread_out_of_range.load(), 0);
    EXPECT_EQ(s.thread_shared.load(), 0);
  }
  {
    Space s({3, 4, 10}, kThreads);
    pthreadpool_parallelize_3d_tile_1d_with_thread(&host.handle, +[](void* c, size_t t, size_t i, size_t j, size_t k,
                                                                     size_t tk) {
      static_cast<Space*>(c)->mark_on_thread(t, {i, j, k}, {1, 1, tk});
    }, &s, 3, 4, 10, 4, 0);
    EXPECT_EQ(s.wrong(), 0u) << "3d_tile_1d_with_thread";
    EXPECT_EQ(s.tasks.load(), 3 * 4 * 3) << "k tiles of 4, 4, 2";
    EXPECT_EQ(s.thread_out_of_range.load(), 0);
    EXPECT_EQ(s.thread_shared.load(), 0);
  }
  {
    Space s({2, 5, 11}, kThreads);
    pthreadpool_parallelize_3d_tile_1d_with_uarch_with_thread(&host.handle, +[](void* c, uint32_t u, size_t t, size_t i,
                                                                                size_t j, size_t k, size_t tk) {
      static_cast<Space*>(c)->uarch(u);
      static_cast<Space*>(c)->mark_on_thread(t, {i, j, k}, {1, 1, tk});
    }, &s, 7, 9, 2, 5, 11, 5, 0);
    EXPECT_EQ(s.wrong(), 0u) << "3d_tile_1d_with_uarch_with_thread";
    EXPECT_EQ(s.wrong_uarch.load(), 0);
    EXPECT_EQ(s.thread_out_of_range.load(), 0);
    EXPECT_EQ(s.thread_shared.load(), 0);
  }
  EXPECT_EQ(g_parallel_for_calls.load() - before, 4);
}

TEST(PthreadpoolExtensions, NullPoolRunsInlineOnThreadZeroAndEmptySpacesRunNothing) {
  ThreadedHost host;
  int before = g_parallel_for_calls.load();
  Space s({4, 3, 5}, 1);
  pthreadpool_parallelize_3d_tile_1d_with_thread(nullptr, +[](void* c, size_t t, size_t i, size_t j, size_t k,
                                                              size_t tk) {
    static_cast<Space*>(c)->mark_on_thread(t, {i, j, k}, {1, 1, tk});
  }, &s, 4, 3, 5, 2, 0);
  EXPECT_EQ(s.wrong(), 0u);
  EXPECT_EQ(s.thread_out_of_range.load(), 0) << "a NULL pool has one thread, index 0";

  int calls = 0;
  pthreadpool_parallelize_2d_with_thread(&host.handle, +[](void* c, size_t, size_t, size_t) {
    ++*static_cast<int*>(c);
  }, &calls, 4, 0, 0);
  pthreadpool_parallelize_3d_tile_1d(&host.handle, +[](void* c, size_t, size_t, size_t, size_t) {
    ++*static_cast<int*>(c);
  }, &calls, 0, 3, 3, 1, 0);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(g_parallel_for_calls.load(), before) << "no pool and empty work never reach the host";
}

}  // namespace
