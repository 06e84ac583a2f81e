// The one thread pool of the process: etrt's own WorkerPool (worker_pool.h),
// created at first use with its workers started, sized to the physical cores
// (cpuinfo) unless ETRT_NUM_THREADS or et_threadpool_set_size says otherwise.
// Plugins borrow it through parallel_for, or through a "pthreadpool" lease whose
// handle etrt's pthreadpool shim accepts (pthreadpool_handle.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>

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

  // A lease keeps the pool from being replaced until released.
  et_error* acquire(et_service_lease* lease);
  void release(et_service_lease* lease);

  const void* identity() const { return this; }

  // The pool's size without creating it or calling into the library: 0 until
  // the pool exists (header-only, for code built without the pool's sources).
  static size_t published_size() { return published_threads_.load(std::memory_order_acquire); }

 private:
  ThreadPool() = default;
  void create_locked(size_t threads);
  void ensure_created();

  std::shared_mutex mutex_;  // shared: users of workers_; exclusive: (re)creation
  bool created_ = false;
  std::unique_ptr<WorkerPool> workers_;
  size_t threads_ = 1;
  // threads_ published for size() and ensure_created() without the lock (kernels ask on every call; a
  // shared lock costs ~100 instructions); 0 until the pool exists.
  // Static: there is one pool (instance() is a leaked singleton).
  static inline std::atomic<size_t> published_threads_{0};
  uint64_t generation_ = 0;
  pthreadpool lease_handle_{};  // what a "pthreadpool" lease hands out
};

// The size the pool gets when nobody asked for one.
size_t default_thread_count();

}  // namespace etrt
