#include "worker_pool.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>

namespace etrt {
namespace {

std::atomic<WorkerPool::WakeHook> g_wake_hook{nullptr};

// How long a worker keeps looking for the next run before it sleeps, and how
// long a caller spins for in-flight chunks before it sleeps. Short: the gap
// between two operators of one model is a few microseconds, while spinning
// longer only takes the core from whoever else wants it.
constexpr auto kWorkerSpin = std::chrono::microseconds(50);
constexpr auto kCallerSpin = std::chrono::microseconds(20);
constexpr auto kPauseSpin = std::chrono::microseconds(3);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  // Returns at once if *word != expected (checked atomically by the kernel).
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

// Waits for done() in three steps: a few microseconds of pause loop (the next
// operator usually comes that soon), then sched_yield until `limit` (gives the
// core to any thread that wants it: on an oversubscribed machine that is often
// the very caller this worker waits for), then reports false so the waiter can sleep.
template <typename Done>
bool spin_until(Done done, std::chrono::microseconds limit) {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    auto waited = std::chrono::steady_clock::now() - start;
    if (waited >= limit) return done();
    if (waited >= kPauseSpin) sched_yield();
  }
}

// claim_ packs the run's epoch, its next unclaimed chunk and its chunk count, so
// one atomic load tells a worker whether there is anything left in *its* run.
constexpr uint32_t kMaxChunks = 0xffff;
constexpr uint64_t pack(uint32_t epoch, uint32_t next, uint32_t count) {
  return (uint64_t{epoch} << 32) | (uint64_t{next} << 16) | count;
}

}  // namespace

void WorkerPool::set_wake_hook_for_testing(WakeHook hook) { g_wake_hook.store(hook); }

WorkerPool::WorkerPool(size_t threads) {
  size_t workers = threads > 1 ? threads - 1 : 0;
  try {
    workers_.reserve(workers);
    for (size_t i = 0; i < workers; ++i) workers_.emplace_back([this, i] { worker_main(i); });
  } catch (...) {  // the system refused a thread: the ones started must end before the exception leaves
    stop_workers();
    throw;
  }
}

WorkerPool::~WorkerPool() { stop_workers(); }

void WorkerPool::stop_workers() {
  stopping_.store(true);
  epoch_.fetch_add(1);
  futex_wake(&epoch_, INT_MAX);
  for (auto& worker : workers_) worker.join();
}

void WorkerPool::work_on(uint32_t epoch, bool by_worker) {
  uint64_t state = claim_.load(std::memory_order_acquire);
  for (;;) {
    // A claim succeeds only while the run tagged `epoch` is current and has chunks left.
    if (static_cast<uint32_t>(state >> 32) != epoch) return;
    uint32_t next = static_cast<uint32_t>(state >> 16) & kMaxChunks;
    uint32_t count = static_cast<uint32_t>(state) & kMaxChunks;
    if (next >= count) return;
    if (!claim_.compare_exchange_weak(state, state + (uint64_t{1} << 16), std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      continue;
    // The run cannot finish before this chunk is marked done, so its fields stay valid until then.
    size_t begin = static_cast<size_t>(next) * chunk_;
    body_(context_, begin, std::min(range_, begin + chunk_));
    // Counted before the chunk is marked done, so the count is exact when run() returns.
    if (by_worker) worker_chunks_.fetch_add(1, std::memory_order_relaxed);
    // After the last increment the run may end at once: touch nothing of it but atomics.
    if (done_.fetch_add(1, std::memory_order_seq_cst) + 1 == count &&
        caller_sleeping_.load(std::memory_order_seq_cst) != 0)
      futex_wake(&done_, 1);
    state = claim_.load(std::memory_order_acquire);
  }
}

void WorkerPool::wait_for_new_epoch(uint32_t seen) {
  auto changed = [&] { return epoch_.load(std::memory_order_acquire) != seen || stopping_.load(); };
  if (spin_until(changed, kWorkerSpin)) return;
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while (epoch_.load(std::memory_order_seq_cst) == seen && !stopping_.load()) futex_wait(&epoch_, seen);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void WorkerPool::worker_main(size_t index) {
  // Epoch 0 is the state before the first run; a run published before this
  // thread got here is simply one it does not help with.
  uint32_t seen = 0;
  for (;;) {
    wait_for_new_epoch(seen);
    seen = epoch_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) return;
    if (WakeHook hook = g_wake_hook.load(std::memory_order_acquire)) hook(index);
    work_on(seen, /*by_worker=*/true);
  }
}

void WorkerPool::run(size_t range, size_t chunk, Body body, void* context) {
  if (range == 0) return;
  chunk = std::max<size_t>(chunk, 1);
  size_t chunks = (range + chunk - 1) / chunk;
  if (chunks > kMaxChunks) {  // larger chunks rather than more than the claim word counts
    chunk = (range + kMaxChunks - 1) / kMaxChunks;
    chunks = (range + chunk - 1) / chunk;
  }
  bool expected = false;
  if (workers_.empty() || chunks < 2 ||
      !busy_.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
    body(context, 0, range);  // nothing to share, or the workers serve another caller
    return;
  }
  body_ = body;
  context_ = context;
  range_ = range;
  chunk_ = chunk;
  chunk_count_ = static_cast<uint32_t>(chunks);
  done_.store(0, std::memory_order_relaxed);
  uint32_t epoch = epoch_.load(std::memory_order_relaxed) + 1;
  claim_.store(pack(epoch, 0, chunk_count_), std::memory_order_release);  // publishes the fields above
  epoch_.store(epoch, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0)
    futex_wake(&epoch_, static_cast<int>(std::min(workers_.size(), chunks - 1)));

  work_on(epoch, /*by_worker=*/false);  // the caller claims like any worker, so unclaimed work never waits
  auto all_done = [&] { return done_.load(std::memory_order_acquire) == chunk_count_; };
  if (!spin_until(all_done, kCallerSpin)) {
    // Only chunks a worker is running are left; sleep until the last one ends.
    caller_sleeping_.store(1, std::memory_order_seq_cst);
    for (uint32_t seen = done_.load(std::memory_order_seq_cst); seen != chunk_count_;
         seen = done_.load(std::memory_order_seq_cst))
      futex_wait(&done_, seen);
    caller_sleeping_.store(0, std::memory_order_relaxed);
  }
  busy_.store(false, std::memory_order_release);
}

}  // namespace etrt
