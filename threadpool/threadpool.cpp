#include "threadpool.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>

#include "../core/src/error.h"
#include "../core/src/logging.h"
#include "pthreadpool_library.h"

namespace etrt {
namespace {

// Depth of pool use on this thread: nested parallel_for runs inline (the pool
// is not reentrant), and nested leases must not re-take the lock.
thread_local int pool_use_depth = 0;

struct TileThunk {
  et_parallel_body body;
  void* context;
  size_t range;
};

void run_tile(void* arg, size_t start, size_t tile) {
  auto* thunk = static_cast<TileThunk*>(arg);
  ++pool_use_depth;
  thunk->body(thunk->context, start, std::min(thunk->range, start + tile));
  --pool_use_depth;
}

}  // namespace

size_t default_thread_count() {
  if (const char* text = std::getenv("ETRT_NUM_THREADS"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && value > 0 && value <= 1024) return static_cast<size_t>(value);
    log_message(LogLevel::Warn, "ignoring ETRT_NUM_THREADS='" + std::string(text) +
                                    "': expected an integer between 1 and 1024");
  }
  std::string error;
  const CpuinfoLibrary* cpuinfo = cpuinfo_library(&error);
  if (cpuinfo == nullptr) {
    log_message(LogLevel::Warn, "cannot count the cores (" + error + "); the thread pool gets 1 thread");
    return 1;
  }
  if (cpuinfo->initialize()) {
    uint32_t cores = cpuinfo->get_cores_count();
    if (cores > 0) return cores;
  }
  return 1;
}

ThreadPool& ThreadPool::instance() {
  // Leaked on purpose: workers may still be parked in it while the process exits.
  static ThreadPool* pool = new ThreadPool();
  return *pool;
}

void ThreadPool::create_locked(size_t threads) {
  created_ = true;
  ++generation_;
  std::string error;
  library_ = pthreadpool_library(&error);
  if (library_ == nullptr) {
    // Without pthreadpool everything still runs, on the calling thread.
    log_message(LogLevel::Warn, "thread pool unavailable (" + error + "); running single-threaded");
    threads_ = 1;
    return;
  }
  if (pool_ != nullptr) library_->destroy(pool_);
  pool_ = library_->create(threads);
  threads_ = pool_ != nullptr ? library_->get_threads_count(pool_) : 1;
}

void ThreadPool::ensure_created() {
  {
    std::shared_lock lock(mutex_);
    if (created_) return;
  }
  std::unique_lock lock(mutex_);
  if (!created_) create_locked(default_thread_count());
}

size_t ThreadPool::size() {
  ensure_created();
  std::shared_lock lock(mutex_);
  return threads_;
}

et_error* ThreadPool::resize(size_t threads) {
  if (threads == 0 || threads > 1024)
    return make_error(ET_ERR_INVALID_ARGUMENT,
                      "thread pool size must be between 1 and 1024, got " + std::to_string(threads));
  if (pool_use_depth > 0)
    return make_error(ET_ERR_INVALID_STATE,
                      "cannot resize the thread pool from inside a parallel region or a lease");
  std::unique_lock lock(mutex_);
  create_locked(threads);
  return nullptr;
}

void ThreadPool::parallel_for(size_t range, size_t grain, et_parallel_body body, void* context) {
  if (range == 0 || body == nullptr) return;
  grain = std::max<size_t>(grain, 1);
  if (pool_use_depth > 0 || range <= grain) {
    body(context, 0, range);
    return;
  }
  ensure_created();
  std::shared_lock lock(mutex_);
  if (threads_ <= 1 || pool_ == nullptr) {
    body(context, 0, range);
    return;
  }
  // Four tiles per thread balance uneven work without drowning in dispatch.
  size_t tile = std::max(grain, (range + threads_ * 4 - 1) / (threads_ * 4));
  TileThunk thunk{body, context, range};
  ++pool_use_depth;
  library_->parallelize_1d_tile_1d(pool_, run_tile, &thunk, range, tile, 0);
  --pool_use_depth;
}

et_error* ThreadPool::acquire(et_service_lease* lease) {
  if (lease == nullptr || lease->struct_size < sizeof(et_service_lease))
    return make_error(ET_ERR_INVALID_ARGUMENT, "service lease is null or too small");
  ensure_created();
  if (pool_use_depth == 0) mutex_.lock_shared();
  ++pool_use_depth;
  lease->handle = pool_;
  lease->generation = generation_;
  lease->reserved = 1;
  return nullptr;
}

void ThreadPool::release(et_service_lease* lease) {
  if (lease == nullptr || lease->reserved != 1) return;
  lease->reserved = 0;
  lease->handle = nullptr;
  if (--pool_use_depth == 0) mutex_.unlock_shared();
}

}  // namespace etrt
