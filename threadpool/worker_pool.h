// etrt's own workers: a fixed set of threads that help whoever calls run().
//
// Built so that a worker the OS does not schedule (other pools spinning, other
// processes) costs the caller nothing but that worker's help:
// - the caller takes part, claiming chunks from the same atomic counter as the
//   workers; a run is finished when every chunk is done, not when every worker
//   has acknowledged it, so the caller completes whatever nobody else claimed
//   and waits only for chunks a worker is actually running;
// - every run has an epoch packed into the claim counter: a worker that wakes
//   after its run finished fails its claim and goes back to sleep, it never
//   touches a finished run (whose body and context may be gone);
// - workers spin briefly for the next run (the operators of one model come in
//   quick succession), then sleep on a futex, so they never fight another
//   pool for a core for long;
// - the threads start in the constructor, not at the first run.
// One run at a time: a caller that finds the workers busy runs its loop itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace etrt {

class WorkerPool {
 public:
  using Body = void (*)(void* context, size_t begin, size_t end);
  // Runs in a worker each time it wakes for a run, before it claims work (tests block it here).
  using WakeHook = void (*)(size_t worker);

  // `threads` counts the caller: threads - 1 workers are started.
  explicit WorkerPool(size_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  size_t threads() const { return workers_.size() + 1; }

  // body(context, begin, end) over [0, range) in chunks of `chunk` items; returns
  // when all are done. Runs inline when there is one chunk or the workers are busy.
  void run(size_t range, size_t chunk, Body body, void* context);

  // How many chunks workers (not callers) ran since construction; exact once run() returns.
  uint64_t chunks_run_by_workers() const { return worker_chunks_.load(std::memory_order_relaxed); }

  static void set_wake_hook_for_testing(WakeHook hook);

 private:
  void worker_main(size_t index);
  void stop_workers();  // wakes every worker to stop, and joins them
  // Claims and runs chunks of the run tagged `epoch` until none are left.
  void work_on(uint32_t epoch, bool by_worker);
  void wait_for_new_epoch(uint32_t seen);

  // The published run; written only between runs (while busy_), read after a successful claim.
  Body body_ = nullptr;
  void* context_ = nullptr;
  size_t range_ = 0;
  size_t chunk_ = 0;
  uint32_t chunk_count_ = 0;

  // High 32 bits: epoch of the current run; low 32 bits: next unclaimed chunk.
  alignas(64) std::atomic<uint64_t> claim_{0};
  alignas(64) std::atomic<uint32_t> done_{0};     // chunks finished in the current run
  std::atomic<uint32_t> caller_sleeping_{0};
  alignas(64) std::atomic<uint32_t> epoch_{0};    // workers sleep on this
  std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> worker_chunks_{0};

  std::atomic<bool> busy_{false};  // one run at a time (a flag, not a mutex: nested runs must not lock)
  std::vector<std::thread> workers_;
};

}  // namespace etrt
