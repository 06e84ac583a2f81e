// etrt's WorkerPool on its own: every index exactly once, concurrent callers,
// nested runs, and the property the pool exists for: a caller whose workers
// cannot run still finishes, by itself, and a late worker never touches it.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "worker_pool.h"

namespace etrt {
namespace {

struct Coverage {
  std::vector<std::atomic<int>> hits;
  explicit Coverage(size_t n) : hits(n) {}
  static void mark(void* context, size_t begin, size_t end) {
    auto* coverage = static_cast<Coverage*>(context);
    for (size_t i = begin; i < end; ++i) coverage->hits[i].fetch_add(1, std::memory_order_relaxed);
  }
  size_t wrong() const {
    size_t bad = 0;
    for (const auto& hit : hits) bad += hit.load() != 1;
    return bad;
  }
};

TEST(WorkerPool, StartsItsWorkersAtConstruction) {
  WorkerPool pool(3);
  EXPECT_EQ(pool.threads(), 3u);
  WorkerPool single(1);
  EXPECT_EQ(single.threads(), 1u);
  Coverage coverage(100);
  single.run(coverage.hits.size(), 1, Coverage::mark, &coverage);
  EXPECT_EQ(coverage.wrong(), 0u);
}

TEST(WorkerPool, EveryIndexExactlyOnceForManySizesAndChunks) {
  for (size_t threads : {2, 3, 5}) {
    WorkerPool pool(threads);
    for (size_t range : {0, 1, 2, 3, 7, 64, 1000, 4097, 100003, 300000}) {
      for (size_t chunk : {0, 1, 3, 16, 4096, 1000000}) {
        Coverage coverage(range);
        pool.run(range, chunk, Coverage::mark, &coverage);
        ASSERT_EQ(coverage.wrong(), 0u) << threads << " threads, range " << range << ", chunk " << chunk;
      }
    }
  }
}

TEST(WorkerPool, ConcurrentCallersEachGetTheirWholeRange) {
  WorkerPool pool(3);
  std::atomic<size_t> bad{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      for (int round = 0; round < 300; ++round) {
        Coverage coverage(257 + 13 * t + round);
        pool.run(coverage.hits.size(), 1 + round % 7, Coverage::mark, &coverage);
        bad += coverage.wrong();
      }
    });
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(bad.load(), 0u);
}

TEST(WorkerPool, NestedRunFromInsideABodyRunsInline) {
  WorkerPool pool(3);
  struct Outer {
    WorkerPool* pool;
    std::atomic<size_t> total{0};
  } outer{&pool};
  pool.run(32, 1, [](void* context, size_t begin, size_t end) {
    auto* o = static_cast<Outer*>(context);
    for (size_t i = begin; i < end; ++i)
      o->pool->run(100, 1, [](void* c, size_t b, size_t e) {
        static_cast<Outer*>(c)->total.fetch_add(e - b);
      }, o);
  }, &outer);
  EXPECT_EQ(outer.total.load(), 3200u);
}

// Blocks every worker as it wakes for a run until the test opens the gate.
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  int blocked = 0;
};
Gate* g_gate = nullptr;

void block_at_gate(size_t) {
  std::unique_lock lock(g_gate->mutex);
  ++g_gate->blocked;
  g_gate->changed.notify_all();
  g_gate->changed.wait(lock, [] { return g_gate->open; });
  --g_gate->blocked;
}

struct Recorder {
  std::thread::id caller;
  std::atomic<size_t> by_caller{0}, by_others{0};
  static void body(void* context, size_t begin, size_t end) {
    auto* r = static_cast<Recorder*>(context);
    (std::this_thread::get_id() == r->caller ? r->by_caller : r->by_others).fetch_add(end - begin);
  }
};

TEST(WorkerPool, CallerFinishesAloneWhileEveryWorkerIsBlocked) {
  Gate gate;
  g_gate = &gate;
  WorkerPool::set_wake_hook_for_testing(block_at_gate);
  {
    WorkerPool pool(3);
    // Wake the workers into the gate: the first runs dispatch to them, they block there.
    {
      std::unique_lock lock(gate.mutex);
      while (gate.blocked < 2) {
        lock.unlock();
        Coverage warm(64);
        pool.run(warm.hits.size(), 1, Coverage::mark, &warm);
        ASSERT_EQ(warm.wrong(), 0u);
        lock.lock();
        gate.changed.wait_for(lock, std::chrono::milliseconds(1));
      }
    }
    // Both workers are held at the gate (they cannot claim anything). Many runs
    // still complete, every index on the caller, and none waits for a worker.
    uint64_t worker_chunks_before = pool.chunks_run_by_workers();
    for (int round = 0; round < 200; ++round) {
      Recorder recorder;
      recorder.caller = std::this_thread::get_id();
      pool.run(1000, 10, Recorder::body, &recorder);
      ASSERT_EQ(recorder.by_caller.load(), 1000u);
      ASSERT_EQ(recorder.by_others.load(), 0u);
    }
    EXPECT_EQ(pool.chunks_run_by_workers(), worker_chunks_before);
    {
      std::lock_guard lock(gate.mutex);
      EXPECT_EQ(gate.blocked, 2) << "the workers left the gate: the test proved nothing";
      gate.open = true;
    }
    gate.changed.notify_all();
    // Released late, the workers find their runs finished (their Recorders are gone:
    // touching one would be caught by ASan) and serve the next runs normally.
    for (int round = 0; round < 200; ++round) {
      Coverage coverage(5000);
      pool.run(coverage.hits.size(), 1, Coverage::mark, &coverage);
      ASSERT_EQ(coverage.wrong(), 0u);
    }
  }  // joins the workers
  WorkerPool::set_wake_hook_for_testing(nullptr);
  g_gate = nullptr;
}

TEST(WorkerPool, WorkersHelpWhenTheyCanRun) {
  WorkerPool pool(2);
  // A body slow enough that a running worker always gets to claim some of it.
  struct Slow {
    std::thread::id caller;
    std::atomic<size_t> by_others{0};
  } slow{std::this_thread::get_id()};
  for (int round = 0; round < 50 && slow.by_others.load() == 0; ++round)
    pool.run(64, 1, [](void* context, size_t begin, size_t end) {
      auto* s = static_cast<Slow*>(context);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      if (std::this_thread::get_id() != s->caller) s->by_others.fetch_add(end - begin);
    }, &slow);
  EXPECT_GT(slow.by_others.load(), 0u) << "the worker never helped";
  EXPECT_GT(pool.chunks_run_by_workers(), 0u);
}

}  // namespace
}  // namespace etrt
