// The host's "pthreadpool" lease now hands out the object etrt's pthreadpool shim
// accepts (threadpool/pthreadpool_handle.h), and work submitted while a lease is
// held (XNNPACK's operators, through the shim) still reaches the workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "etrt/etrt.h"
#include "threadpool/pthreadpool_handle.h"

namespace {

struct Helpers {
  std::thread::id caller;
  std::atomic<size_t> by_others{0};
};

void slow_body(void* context, size_t begin, size_t end) {
  auto* helpers = static_cast<Helpers*>(context);
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  if (std::this_thread::get_id() != helpers->caller) helpers->by_others.fetch_add(end - begin);
}

TEST(ThreadPoolLease, HandleIsTheShimsPoolObject) {
  const et_host_api* host = et_host_api_get();
  et_service_lease lease{};
  lease.struct_size = sizeof lease;
  ASSERT_EQ(host->service_acquire("pthreadpool", &lease), nullptr);
  auto* handle = static_cast<const pthreadpool*>(lease.handle);
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(handle->magic, ETRT_PTHREADPOOL_HANDLE_MAGIC);
  EXPECT_EQ(handle->host, host);
  host->service_release(&lease);
}

TEST(ThreadPoolLease, ParallelForUnderALeaseStillUsesTheWorkers) {
  ASSERT_EQ(et_threadpool_set_size(2, nullptr), ET_OK);
  const et_host_api* host = et_host_api_get();
  et_service_lease lease{};
  lease.struct_size = sizeof lease;
  ASSERT_EQ(host->service_acquire("pthreadpool", &lease), nullptr);
  EXPECT_EQ(host->num_threads(), 2u);
  Helpers helpers{std::this_thread::get_id()};
  for (int round = 0; round < 50 && helpers.by_others.load() == 0; ++round)
    host->parallel_for(64, 1, slow_body, &helpers);
  EXPECT_GT(helpers.by_others.load(), 0u) << "a lease made parallel_for run on the caller only";
  et_error* error = nullptr;
  EXPECT_NE(et_threadpool_set_size(3, &error), ET_OK) << "resizing under one's own lease must be refused";
  if (error != nullptr) et_error_destroy(error);
  host->service_release(&lease);
  EXPECT_EQ(et_threadpool_set_size(3, nullptr), ET_OK);
}

}  // namespace
