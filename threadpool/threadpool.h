// The one thread pool of the process: a pthreadpool owned by libetrt (opened
// privately, see pthreadpool_library.h), created
// on first use, sized to the physical cores (cpuinfo) unless ETRT_NUM_THREADS
// or et_threadpool_set_size says otherwise. Plugins borrow it through
// parallel_for or a lease on the raw pthreadpool handle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <shared_mutex>

#include "etrt/plugin_api.h"

struct pthreadpool;

namespace etrt {

struct PthreadpoolLibrary;

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

 private:
  ThreadPool() = default;
  void create_locked(size_t threads);
  void ensure_created();

  std::shared_mutex mutex_;  // shared: users of pool_; exclusive: (re)creation
  bool created_ = false;
  const PthreadpoolLibrary* library_ = nullptr;  // libetrt's private pthreadpool
  pthreadpool* pool_ = nullptr;                   // null when the library is unavailable
  size_t threads_ = 0;
  uint64_t generation_ = 0;
};

// The size the pool gets when nobody asked for one.
size_t default_thread_count();

}  // namespace etrt
