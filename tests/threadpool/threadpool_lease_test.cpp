// The host's "pthreadpool" lease now hands out the object etrt's pthreadpool shim
// accepts (threadpool/pthreadpool_handle.h), and work submitted while a lease is
// held (XNNPACK's operators, through the shim) still reaches the workers. A
// lease may end on another thread than the one that took it, a resize waits
// for the leases held, and a lease held for too long fails the resize instead
// of blocking it for good.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
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

// Runs `scenario` in a child process (a resize that blocks for good must not
// hang the test): its exit status, or -1 when it was still running after `seconds`.
// These tests come first: the child of a process whose pool has started its
// workers would have a pool without threads.
int in_child(int (*scenario)(), int seconds) {
  std::fflush(nullptr);
  pid_t child = fork();
  if (child == 0) _exit(scenario());
  for (int waited = 0; waited < seconds * 10; ++waited) {
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return -1;
}

et_service_lease new_lease() {
  et_service_lease lease{};
  lease.struct_size = sizeof lease;
  return lease;
}

// A plugin takes its lease on one thread (its init) and releases it on another (its destroy);
// the pool is then resized from a third.
int release_on_another_thread() {
  const et_host_api* host = et_host_api_get();
  et_service_lease lease = new_lease();
  std::thread([&] {
    if (host->service_acquire("pthreadpool", &lease) != nullptr) _exit(2);
  }).join();
  std::thread([&] { host->service_release(&lease); }).join();
  int32_t status = ET_ERR_INTERNAL;
  std::thread([&] { status = et_threadpool_set_size(3, nullptr); }).join();
  return status == ET_OK && et_threadpool_size() == 3 ? 0 : 3;
}

TEST(ThreadPoolLease, ALeaseMayBeReleasedOnAnotherThread) {
  EXPECT_EQ(in_child(release_on_another_thread, 30), 0) << "-1: the resize blocked";
}

// A lease kept across calls (taken and never released while the resize runs).
int resize_while_a_lease_is_kept() {
  const et_host_api* host = et_host_api_get();
  if (et_threadpool_set_size(2, nullptr) != ET_OK) return 2;
  et_service_lease lease = new_lease();
  if (host->service_acquire("pthreadpool", &lease) != nullptr) return 3;
  et_error* error = nullptr;
  int32_t status = ET_OK;
  auto start = std::chrono::steady_clock::now();
  std::thread([&] { status = et_threadpool_set_size(4, &error); }).join();
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string message = error != nullptr ? et_error_message(error) : "";
  et_error_destroy(error);
  if (status != ET_ERR_INVALID_STATE || message.find("lease has been held") == std::string::npos)
    return std::fprintf(stderr, "status %d: %s\n", status, message.c_str()), 4;
  if (waited < 1.0) return std::fprintf(stderr, "gave up after %.3f s without waiting\n", waited), 5;
  if (et_threadpool_size() != 2) return 6;  // the pool was left as it was
  host->service_release(&lease);
  return et_threadpool_set_size(4, nullptr) == ET_OK && et_threadpool_size() == 4 ? 0 : 7;
}

TEST(ThreadPoolLease, AKeptLeaseFailsAResizeInsteadOfBlockingItForGood) {
  EXPECT_EQ(in_child(resize_while_a_lease_is_kept, 60), 0) << "-1: the resize blocked";
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

TEST(ThreadPoolLease, AResizeWaitsForALeaseReleasedSoon) {
  const et_host_api* host = et_host_api_get();
  ASSERT_EQ(et_threadpool_set_size(2, nullptr), ET_OK);
  et_service_lease lease = new_lease();
  ASSERT_EQ(host->service_acquire("pthreadpool", &lease), nullptr);
  const uint64_t generation = lease.generation;
  std::atomic<bool> resized{false};
  std::thread resizer([&] { resized = et_threadpool_set_size(3, nullptr) == ET_OK; });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(resized.load()) << "the pool was replaced under a lease";
  host->service_release(&lease);
  resizer.join();
  EXPECT_TRUE(resized.load());
  EXPECT_EQ(et_threadpool_size(), 3u);
  ASSERT_EQ(host->service_acquire("pthreadpool", &lease), nullptr);
  EXPECT_GT(lease.generation, generation);
  host->service_release(&lease);
  host->service_release(&lease);  // twice: nothing happens
  EXPECT_EQ(et_threadpool_set_size(2, nullptr), ET_OK);
}

}  // namespace
