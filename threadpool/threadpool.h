// The one thread pool of the process: etrt's own WorkerPool (worker_pool.h),
// created at first use with its workers started, sized to the physical cores
// (cpuinfo) unless ETRT_NUM_THREADS or et_threadpool_set_size says otherwise.
// Plugins borrow it through parallel_for, or through a "pthreadpool" lease whose
// handle etrt's pthreadpool shim accepts (pthreadpool_handle.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "etrt/plugin_api.h"
#include "pthreadpool_handle.h"

namespace etrt {

class WorkerPool;

class ThreadPool {
 public:
  static ThreadPool& instance();

  size_t size();
  et_error* resize(size_t threads);
  void parallel_for(size_t range, size_t grain, et_parallel_body body, void* context);

  // A lease keeps the pool from being replaced until released. Leases are
  // counted, not locks: one may be released on any thread, and a resize waits
  // for them at most resize_lease_wait() before it gives up with an error (a
  // lease held across calls never blocks it for good). Releasing a lease twice,
  // or one never acquired, does nothing.
  et_error* acquire(et_service_lease* lease);
  void release(et_service_lease* lease);
  static std::chrono::milliseconds resize_lease_wait();
  static void set_resize_lease_wait_for_testing(std::chrono::milliseconds wait);

  const void* identity() const { return this; }

  // The pool's size without creating it or calling into the library: 0 until
  // the pool exists (header-only, for code built without the pool's sources).
  static size_t published_size() { return published_threads_.load(std::memory_order_acquire); }

 private:
  ThreadPool() = default;
  void ensure_created();

  // Replaces the workers (under the exclusive lock); a pool that cannot start
  // its threads falls back to running everything on the caller. The reason, or "".
  std::string replace_workers_locked(size_t threads);
  // Waits (lease_mutex_ held by `lock`) until no lease is held, or the wait ends; false then.
  bool wait_for_leases(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds* oldest);

  std::shared_mutex mutex_;  // shared: users of workers_; exclusive: (re)creation
  bool created_ = false;
  std::unique_ptr<WorkerPool> workers_;
  size_t threads_ = 1;

  // Leases held: ids (kept in the lease's `reserved`), the thread that took each
  // (resizing on it would wait for itself) and when.
  struct Lease {
    uint64_t id;
    std::thread::id holder;
    std::chrono::steady_clock::time_point since;
  };
  std::mutex lease_mutex_;
  std::condition_variable lease_changed_;  // a lease ended, or a resize did
  std::vector<Lease> leases_;
  uint64_t next_lease_id_ = 1;
  bool resizing_ = false;  // new leases wait (a steady stream of them must not starve a resize)
  // threads_ published for size() and ensure_created() without the lock (kernels ask on every call; a
  // shared lock costs ~100 instructions); 0 until the pool exists.
  // Static: there is one pool (instance() is a leaked singleton).
  static inline std::atomic<size_t> published_threads_{0};
  std::atomic<uint64_t> generation_{0};
  pthreadpool lease_handle_{};  // what a "pthreadpool" lease hands out
};

// The size the pool gets when nobody asked for one.
size_t default_thread_count();

}  // namespace etrt
