// A stand-in for the etrt host's thread pool behind a "pthreadpool" lease handle
// (threadpool/pthreadpool_handle.h): parallel_for runs its chunks on several threads
// at once, taking them from a shared counter as a pool does, so code handed this
// pool really runs concurrently.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "threadpool/pthreadpool_handle.h"

namespace xnnpack_test {

constexpr size_t kTestThreads = 3;

inline std::atomic<int>& parallel_for_calls() {
  static std::atomic<int> calls{0};
  return calls;
}

inline void threaded_parallel_for(size_t range, size_t grain, et_parallel_body body, void* context) {
  ++parallel_for_calls();
  grain = std::max<size_t>(grain, 1);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t begin; (begin = next.fetch_add(grain)) < range;) body(context, begin, std::min(range, begin + grain));
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < kTestThreads; ++t) workers.emplace_back(work);
  work();
  for (auto& w : workers) w.join();
}

inline size_t test_threads() { return kTestThreads; }

struct ThreadedHost {
  et_host_api api;
  pthreadpool handle;
  ThreadedHost() {
    std::memset(&api, 0, sizeof api);
    api.struct_size = sizeof api;
    api.parallel_for = threaded_parallel_for;
    api.num_threads = test_threads;
    handle.magic = ETRT_PTHREADPOOL_HANDLE_MAGIC;
    handle.host = &api;
  }
};

}  // namespace xnnpack_test
