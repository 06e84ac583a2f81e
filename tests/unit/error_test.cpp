// Errors never read as success: when the host cannot allocate an error object
// it hands out a preallocated out-of-memory error, which destroying is harmless.
#include <gtest/gtest.h>

#include <atomic>
#include <new>

#include "etrt/etrt.h"

namespace {
std::atomic<bool> g_fail_nothrow_new{false};
}  // namespace

// libetrt allocates its error objects with the nothrow operator new; this
// replacement (found by the dynamic linker before libstdc++'s) can make it fail.
// It allocates with the ordinary operator new: libetrt frees with the ordinary
// delete (malloc here was an alloc-dealloc mismatch, which AddressSanitizer reports).
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (g_fail_nothrow_new.load()) return nullptr;
  try {
    return ::operator new(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* ptr, const std::nothrow_t&) noexcept { ::operator delete(ptr); }

namespace {

TEST(Error, FailedAllocationGivesTheOutOfMemoryErrorNotSuccess) {
  et_error* error = nullptr;
  g_fail_nothrow_new = true;
  int32_t status = et_load_plugin("", &error);  // an invalid argument: the host builds an error
  g_fail_nothrow_new = false;
  EXPECT_EQ(status, ET_ERR_OUT_OF_MEMORY);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(et_error_code(error), ET_ERR_OUT_OF_MEMORY);
  EXPECT_STREQ(et_error_message(error), "out of memory");
  et_error_destroy(error);  // not freed: it is shared
  et_error_destroy(error);
  EXPECT_EQ(et_error_code(error), ET_ERR_OUT_OF_MEMORY);
}

TEST(Error, HostTableErrorsBehaveTheSameWhenAllocationFails) {
  const et_host_api* host = et_host_api_get();
  g_fail_nothrow_new = true;
  et_error* error = host->error_create(ET_ERR_INVALID_ARGUMENT, "x");
  g_fail_nothrow_new = false;
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(et_error_code(error), ET_ERR_OUT_OF_MEMORY);
  host->error_destroy(error);
  EXPECT_EQ(et_error_code(error), ET_ERR_OUT_OF_MEMORY);
}

TEST(Error, OrdinaryErrorsStillCarryTheirCodeAndMessage) {
  et_error* error = nullptr;
  EXPECT_EQ(et_load_plugin("", &error), ET_ERR_INVALID_ARGUMENT);
  ASSERT_NE(error, nullptr);
  EXPECT_STREQ(et_error_message(error), "plugin path is empty");
  et_error_destroy(error);
}

}  // namespace
