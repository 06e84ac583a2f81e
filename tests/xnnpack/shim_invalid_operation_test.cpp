// The pthreadpool shim (plugins/xnnpack/pthreadpool_shim.c) raises on the calling thread the floating-point
// invalid operations its tasks raised on other threads, and leaves those threads' flags as they were: the
// XNNPACK delegate reads the caller's flag after a run to find NaN that Debian's XNNPACK clamped away.
#include <gtest/gtest.h>

#include <pthreadpool.h>

#include <cfenv>
#include <cmath>
#include <cstring>
#include <thread>

#include "threadpool/pthreadpool_handle.h"

namespace {

bool g_worker_flag_after = false;  // the worker's own invalid flag once its chunk returned

// A host whose parallel_for runs every chunk on another thread, never on the caller. The worker's flag is set
// before the chunk runs, to show the shim gives it back unchanged.
void other_thread_parallel_for(size_t range, size_t /*grain*/, et_parallel_body body, void* context) {
  std::thread worker([&] {
    std::feclearexcept(FE_ALL_EXCEPT);
    volatile float zero = 0.0f;
    volatile float nan = zero / zero;  // the worker's own invalid operation, before the tasks
    (void)nan;
    body(context, 0, range);
    g_worker_flag_after = std::fetestexcept(FE_INVALID) != 0;
  });
  worker.join();
}
size_t two_threads() { return 2; }

struct Host {
  et_host_api api;
  pthreadpool handle;
  Host() {
    std::memset(&api, 0, sizeof api);
    api.struct_size = sizeof api;
    api.parallel_for = other_thread_parallel_for;
    api.num_threads = two_threads;
    handle.magic = ETRT_PTHREADPOOL_HANDLE_MAGIC;
    handle.host = &api;
  }
};

struct Divide {
  float numerator;
  float out[8];
};

void divide_by_zero(void* context, size_t i) {
  auto* c = static_cast<Divide*>(context);
  volatile float zero = 0.0f;
  c->out[i] = c->numerator / zero;  // 0 / 0: an invalid operation; 1 / 0: division by zero only
}

}  // namespace

TEST(PthreadpoolShimInvalidOperation, AWorkersInvalidOperationIsRaisedOnTheCaller) {
  Host host;
  Divide zero_by_zero{0.0f, {}};
  std::feclearexcept(FE_ALL_EXCEPT);
  pthreadpool_parallelize_1d(&host.handle, divide_by_zero, &zero_by_zero, 8, 0);
  EXPECT_TRUE(std::isnan(zero_by_zero.out[7]));
  EXPECT_TRUE(std::fetestexcept(FE_INVALID)) << "the caller's flag after a task made NaN on another thread";
  EXPECT_TRUE(g_worker_flag_after) << "the worker's own flag was not given back";
}

TEST(PthreadpoolShimInvalidOperation, TasksWithoutOneLeaveTheCallersFlagAlone) {
  Host host;
  Divide one_by_zero{1.0f, {}};
  std::feclearexcept(FE_ALL_EXCEPT);
  pthreadpool_parallelize_1d(&host.handle, divide_by_zero, &one_by_zero, 8, 0);
  EXPECT_TRUE(std::isinf(one_by_zero.out[0]));
  EXPECT_FALSE(std::fetestexcept(FE_INVALID));
  // A flag the caller had before the call stays raised.
  volatile float zero = 0.0f;
  volatile float nan = zero / zero;
  (void)nan;
  pthreadpool_parallelize_1d(&host.handle, divide_by_zero, &one_by_zero, 8, 0);
  EXPECT_TRUE(std::fetestexcept(FE_INVALID));
}

TEST(PthreadpoolShimInvalidOperation, InlineRunsRaiseOnTheCallerToo) {
  Divide zero_by_zero{0.0f, {}};
  std::feclearexcept(FE_ALL_EXCEPT);
  pthreadpool_parallelize_1d(nullptr, divide_by_zero, &zero_by_zero, 8, 0x1u /* disable denormals */);
  EXPECT_TRUE(std::fetestexcept(FE_INVALID)) << "the denormals flag's restore must not erase the flag";
}
