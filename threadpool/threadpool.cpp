#include "threadpool.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>

#include "../core/src/error.h"
#include "../core/src/logging.h"
#include "cpuinfo_library.h"
#include "etrt/etrt.h"
#include "worker_pool.h"

namespace etrt {
namespace {

// Nested parallel_for runs inline: this thread is already inside a parallel region.
thread_local int region_depth = 0;
// Leases held by this thread: it already holds the pool's shared lock (never taken twice:
// a waiting resize would make the second shared lock wait for it, a deadlock).
thread_local int lease_depth = 0;

struct Region {
  et_parallel_body body;
  void* context;
};

void run_in_region(void* arg, size_t begin, size_t end) {
  auto* region = static_cast<Region*>(arg);
  ++region_depth;
  region->body(region->context, begin, end);
  --region_depth;
}

}  // namespace

size_t default_thread_count() {
  // secure_getenv: a setuid host does not let its caller pick the pool size.
  if (const char* text = secure_getenv("ETRT_NUM_THREADS"); text != nullptr && *text != '\0') {
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
  workers_.reset();  // joins the old workers (no run is in flight: we hold the lock exclusively)
  workers_ = std::make_unique<WorkerPool>(threads);
  threads_ = workers_->threads();
  published_threads_.store(threads_, std::memory_order_release);
  lease_handle_.magic = ETRT_PTHREADPOOL_HANDLE_MAGIC;
  lease_handle_.host = et_host_api_get();
}

void ThreadPool::ensure_created() {
  if (published_threads_.load(std::memory_order_acquire) != 0) return;
  std::unique_lock lock(mutex_);
  if (!created_) create_locked(default_thread_count());
}

size_t ThreadPool::size() {
  // A concurrent resize may replace the pool right after this read, with or without a lock: callers size
  // their work with it, and parallel_for splits by the pool it actually runs on.
  if (size_t threads = published_threads_.load(std::memory_order_acquire)) return threads;
  ensure_created();
  return published_threads_.load(std::memory_order_acquire);
}

et_error* ThreadPool::resize(size_t threads) {
  if (threads == 0 || threads > 1024)
    return make_error(ET_ERR_INVALID_ARGUMENT,
                      "thread pool size must be between 1 and 1024, got " + std::to_string(threads));
  if (region_depth > 0 || lease_depth > 0)
    return make_error(ET_ERR_INVALID_STATE,
                      "cannot resize the thread pool from inside a parallel region or a lease");
  std::unique_lock lock(mutex_);
  create_locked(threads);
  return nullptr;
}

void ThreadPool::parallel_for(size_t range, size_t grain, et_parallel_body body, void* context) {
  if (range == 0 || body == nullptr) return;
  grain = std::max<size_t>(grain, 1);
  // Work the caller's grain says is not worth a second thread never wakes one.
  if (region_depth > 0 || range <= grain) {
    body(context, 0, range);
    return;
  }
  ensure_created();
  std::shared_lock<std::shared_mutex> lock;
  if (lease_depth == 0) lock = std::shared_lock(mutex_);
  if (threads_ <= 1) {
    body(context, 0, range);
    return;
  }
  // Four chunks per thread: a worker that is descheduled mid-chunk holds back a quarter of its share at most.
  size_t chunk = std::max(grain, (range + threads_ * 4 - 1) / (threads_ * 4));
  Region region{body, context};
  workers_->run(range, chunk, run_in_region, &region);
}

et_error* ThreadPool::acquire(et_service_lease* lease) {
  if (lease == nullptr || lease->struct_size < sizeof(et_service_lease))
    return make_error(ET_ERR_INVALID_ARGUMENT, "service lease is null or too small");
  ensure_created();
  if (lease_depth == 0) mutex_.lock_shared();
  ++lease_depth;
  lease->handle = &lease_handle_;
  lease->generation = generation_;
  lease->reserved = 1;
  return nullptr;
}

void ThreadPool::release(et_service_lease* lease) {
  if (lease == nullptr || lease->reserved != 1) return;
  lease->reserved = 0;
  lease->handle = nullptr;
  if (--lease_depth == 0) mutex_.unlock_shared();
}

}  // namespace etrt
