#include "threadpool.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>

#include "../core/src/error.h"
#include "../core/src/logging.h"
#include "cpuinfo_library.h"
#include "etrt/etrt.h"
#include "worker_pool.h"

namespace etrt {
namespace {

// Nested parallel_for runs inline: this thread is already inside a parallel region.
thread_local int region_depth = 0;

// How long a resize waits for the leases held to end before it gives up.
std::atomic<int64_t> g_resize_lease_wait_ms{5000};

// One parallel_for over the workers. A body's exception stops at its chunk (a
// worker has nowhere to send it, and the run must end before its context goes
// away), the chunks not started yet are skipped, and the first exception is
// thrown again on the calling thread once the run is over: what it would have
// done had the body run there.
struct Region {
  et_parallel_body body;
  void* context;
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // written once, by the chunk that set `failed`
};

void run_in_region(void* arg, size_t begin, size_t end) {
  auto* region = static_cast<Region*>(arg);
  if (region->failed.load(std::memory_order_relaxed)) return;
  ++region_depth;
  try {
    region->body(region->context, begin, end);
  } catch (...) {
    if (!region->failed.exchange(true)) region->error = std::current_exception();
  }
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

std::chrono::milliseconds ThreadPool::resize_lease_wait() {
  return std::chrono::milliseconds(g_resize_lease_wait_ms.load());
}

void ThreadPool::set_resize_lease_wait_for_testing(std::chrono::milliseconds wait) {
  g_resize_lease_wait_ms.store(wait.count());
}

std::string ThreadPool::replace_workers_locked(size_t threads) {
  workers_.reset();  // joins the old workers (no run is in flight: we hold the lock exclusively)
  std::string problem;
  try {
    workers_ = std::make_unique<WorkerPool>(threads);
  } catch (const std::system_error& e) {  // the system refused a thread (ulimit -u, memory)
    problem = "cannot start the thread pool's " + std::to_string(threads - 1) + " worker threads (" + e.what() +
              "): work runs on the calling thread";
    workers_ = std::make_unique<WorkerPool>(1);  // starts no thread
  }
  created_ = true;
  ++generation_;
  threads_ = workers_->threads();
  published_threads_.store(threads_, std::memory_order_release);
  if (lease_handle_.magic == 0) {  // written once, before the first lease hands it out
    lease_handle_.magic = ETRT_PTHREADPOOL_HANDLE_MAGIC;
    lease_handle_.host = et_host_api_get();
  }
  return problem;
}

void ThreadPool::ensure_created() {
  if (published_threads_.load(std::memory_order_acquire) != 0) return;
  std::unique_lock lock(mutex_);
  if (created_) return;
  std::string problem = replace_workers_locked(default_thread_count());
  lock.unlock();
  if (!problem.empty()) log_message(LogLevel::Warn, problem);
}

size_t ThreadPool::size() {
  // A concurrent resize may replace the pool right after this read, with or without a lock: callers size
  // their work with it, and parallel_for splits by the pool it actually runs on.
  if (size_t threads = published_threads_.load(std::memory_order_acquire)) return threads;
  ensure_created();
  return std::max<size_t>(published_threads_.load(std::memory_order_acquire), 1);
}

bool ThreadPool::wait_for_leases(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds* oldest) {
  auto deadline = std::chrono::steady_clock::now() + resize_lease_wait();
  if (lease_changed_.wait_until(lock, deadline, [this] { return leases_.empty(); })) return true;
  auto since = std::min_element(leases_.begin(), leases_.end(),
                                [](const Lease& a, const Lease& b) { return a.since < b.since; })->since;
  *oldest = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since);
  return false;
}

et_error* ThreadPool::resize(size_t threads) {
  if (threads == 0 || threads > 1024)
    return make_error(ET_ERR_INVALID_ARGUMENT,
                      "thread pool size must be between 1 and 1024, got " + std::to_string(threads));
  if (region_depth > 0)
    return make_error(ET_ERR_INVALID_STATE, "cannot resize the thread pool from inside a parallel region");
  std::unique_lock lease_lock(lease_mutex_);
  const std::thread::id self = std::this_thread::get_id();
  if (std::any_of(leases_.begin(), leases_.end(), [&](const Lease& lease) { return lease.holder == self; }))
    return make_error(ET_ERR_INVALID_STATE,
                      "cannot resize the thread pool from a thread that holds a \"pthreadpool\" lease "
                      "(the resize would wait for that lease)");
  lease_changed_.wait(lease_lock, [this] { return !resizing_; });  // one resize at a time
  resizing_ = true;  // from here new leases wait for this resize
  std::chrono::milliseconds held{};
  const bool drained = wait_for_leases(lease_lock, &held);
  if (drained) {
    lease_lock.unlock();  // a lease holder may need it while the running loops finish
    std::string problem;
    {
      std::unique_lock lock(mutex_);
      problem = replace_workers_locked(threads);
    }
    lease_lock.lock();
    resizing_ = false;
    lease_changed_.notify_all();
    if (!problem.empty()) return make_error(ET_ERR_OUT_OF_MEMORY, problem);
    return nullptr;
  }
  resizing_ = false;
  lease_changed_.notify_all();
  return make_error(ET_ERR_INVALID_STATE,
                    "cannot resize the thread pool: a \"pthreadpool\" lease has been held for " +
                        std::to_string(held.count()) + " ms, longer than a resize waits (" +
                        std::to_string(resize_lease_wait().count()) +
                        " ms); a plugin must release its lease when the call that took it returns. The pool keeps "
                        "its " + std::to_string(published_threads_.load()) + " threads");
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
  std::shared_lock lock(mutex_);
  if (threads_ <= 1 || workers_ == nullptr) {
    body(context, 0, range);
    return;
  }
  // Four chunks per thread: a worker that is descheduled mid-chunk holds back a quarter of its share at most.
  size_t chunk = std::max(grain, (range + threads_ * 4 - 1) / (threads_ * 4));
  Region region{body, context, {}, {}};
  workers_->run(range, chunk, run_in_region, &region);
  if (region.error) std::rethrow_exception(region.error);
}

et_error* ThreadPool::acquire(et_service_lease* lease) {
  if (lease == nullptr || lease->struct_size < sizeof(et_service_lease))
    return make_error(ET_ERR_INVALID_ARGUMENT, "service lease is null or too small");
  ensure_created();
  std::unique_lock lock(lease_mutex_);
  const std::thread::id self = std::this_thread::get_id();
  // A pending resize holds new leases back, except on a thread it may be waiting
  // for: one holding a lease already, or one inside a parallel region.
  bool holds = std::any_of(leases_.begin(), leases_.end(), [&](const Lease& held) { return held.holder == self; });
  if (!holds && region_depth == 0) lease_changed_.wait(lock, [this] { return !resizing_; });
  const uint64_t id = next_lease_id_++;
  leases_.push_back(Lease{id, self, std::chrono::steady_clock::now()});
  lease->handle = &lease_handle_;
  lease->generation = generation_.load();
  lease->reserved = id;
  return nullptr;
}

void ThreadPool::release(et_service_lease* lease) {
  if (lease == nullptr || lease->struct_size < sizeof(et_service_lease)) return;
  std::lock_guard lock(lease_mutex_);
  auto held = std::find_if(leases_.begin(), leases_.end(), [&](const Lease& l) { return l.id == lease->reserved; });
  if (held == leases_.end()) return;  // released already, or never acquired
  leases_.erase(held);
  lease->reserved = 0;
  lease->handle = nullptr;
  lease_changed_.notify_all();
}

}  // namespace etrt
