// Where a parallel loop's time goes when the pool's workers are not scheduled.
//
// Runs many small parallel loops (a model's worth of operators) on one pool and,
// for every loop, records: when the caller dispatched, when the last chunk of
// work finished, and when the call returned. "return - last chunk done" is time
// spent waiting for workers to acknowledge, not to compute. Optional disturbers:
// busy-spinning threads in this process (like OpenMP workers spinning after a
// torch op), one per core by default.
//
//   pool_probe [--pool pthreadpool|etrt] [--spinners N] [--loops N] [--threads N]
#include <dlfcn.h>
#include <pthreadpool.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "etrt/etrt.h"

namespace {

using Clock = std::chrono::steady_clock;

double micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Loop {
  std::atomic<int64_t> last_end_ns{0};
  Clock::time_point origin;
  volatile double sink = 0;
};

// About 2 us of arithmetic per index: a loop of 8 indices is a small operator.
void work(void* context, size_t begin, size_t end) {
  auto* loop = static_cast<Loop*>(context);
  double x = 0;
  for (size_t i = begin; i < end; ++i)
    for (int k = 0; k < 1500; ++k) x += static_cast<double>(k ^ i) * 1e-9;
  loop->sink = x;
  int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - loop->origin).count();
  int64_t seen = loop->last_end_ns.load();
  while (now > seen && !loop->last_end_ns.compare_exchange_weak(seen, now)) {
  }
}

void tile_work(void* context, size_t start, size_t tile) { work(context, start, start + tile); }

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  std::string pool_kind = "pthreadpool";
  int spinners = 0, loops = 3000;
  size_t threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--pool")) pool_kind = argv[i + 1];
    else if (!std::strcmp(argv[i], "--spinners")) spinners = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--loops")) loops = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::strtoul(argv[i + 1], nullptr, 10);
  }
  pthreadpool_t pthread_pool = nullptr;
  if (pool_kind == "pthreadpool") {
    pthread_pool = pthreadpool_create(threads);
  } else {
    et_threadpool_set_size(threads, nullptr);
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinning;
  for (int i = 0; i < spinners; ++i)
    spinning.emplace_back([&] {
      volatile uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) n = n + 1;
    });

  std::vector<double> total, compute, ack_wait;
  const size_t range = 8;
  for (int i = 0; i < loops; ++i) {
    Loop loop;
    loop.origin = Clock::now();
    if (pthread_pool != nullptr)
      pthreadpool_parallelize_1d_tile_1d(pthread_pool, tile_work, &loop, range, 1, 0);
    else
      et_parallel_for(range, 1, work, &loop);
    auto back = Clock::now();
    double done = loop.last_end_ns.load() / 1000.0;
    total.push_back(micros(loop.origin, back));
    compute.push_back(done);
    ack_wait.push_back(micros(loop.origin, back) - done);
  }
  stop = true;
  for (auto& t : spinning) t.join();
  std::printf("pool=%s threads=%zu spinners=%d loops=%d (range %zu, ~2 us per index)\n", pool_kind.c_str(), threads,
              spinners, loops, range);
  auto row = [](const char* name, const std::vector<double>& v) {
    std::printf("  %-26s median %9.1f us  p90 %9.1f  p99 %9.1f  max %9.1f\n", name, percentile(v, 0.5),
                percentile(v, 0.9), percentile(v, 0.99), percentile(v, 1.0));
  };
  row("call (dispatch->return)", total);
  row("last chunk done", compute);
  row("waiting after work done", ack_wait);
  if (pthread_pool != nullptr) pthreadpool_destroy(pthread_pool);
  return 0;
}
