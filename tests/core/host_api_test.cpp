// The host function table as a plugin sees it: registration rules, errors,
// memory, tensor resizing and services.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::HasSubstr;

namespace {

const et_host_api* host() { return et_host_api_get(); }

std::string take_message(et_error* error) {
  std::string message = error ? et_error_message(error) : "";
  host()->error_destroy(error);
  return message;
}

TEST(HostApi, RegistrationOutsideInitIsRefused) {
  et_kernel_descriptor kernel{};
  kernel.struct_size = sizeof kernel;
  kernel.name = "test::sneaky";
  kernel.fn = [](void*, et_exec_context*, et_value* const*, size_t) -> et_error* { return nullptr; };
  EXPECT_THAT(take_message(host()->register_kernel(nullptr, &kernel)), HasSubstr("only allowed during the plugin's init"));
}

TEST(HostApi, ErrorsCarryCodeAndMessage) {
  et_error* error = host()->error_create(ET_ERR_INVALID_ARGUMENT, "bad shape");
  EXPECT_EQ(et_error_code(error), ET_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(et_error_message(error), "bad shape");
  EXPECT_STREQ(et_error_plugin(error), "");
  host()->error_destroy(error);
  host()->error_destroy(nullptr);  // accepted
  // ET_OK is not an error code: the host turns it into an internal error.
  error = host()->error_create(ET_OK, "oops");
  EXPECT_EQ(et_error_code(error), ET_ERR_INTERNAL);
  host()->error_destroy(error);
  EXPECT_STREQ(et_status_name(ET_ERR_ABI_MISMATCH), "ABI mismatch");
}

TEST(HostApi, AllocIsAlignedAndRejectsBadAlignment) {
  for (size_t alignment : {8, 16, 64, 4096}) {
    void* ptr = host()->alloc(100, alignment);
    ASSERT_NE(ptr, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % alignment, 0u);
    host()->free(ptr);
  }
  EXPECT_EQ(host()->alloc(16, 48), nullptr);
  host()->free(nullptr);
}

struct Tensor3 {
  int64_t sizes[4];
  int64_t strides[4];
  uint8_t order[4];
  float data[64];
  et_tensor t{};
  Tensor3(std::initializer_list<int64_t> shape, std::initializer_list<uint8_t> dim_order, int32_t dynamism) {
    int i = 0;
    for (int64_t s : shape) sizes[i++] = s;
    i = 0;
    for (uint8_t d : dim_order) order[i++] = d;
    t.struct_size = sizeof t;
    t.dtype = ET_DTYPE_FLOAT32;
    t.rank = static_cast<int32_t>(shape.size());
    t.sizes = sizes;
    t.strides = strides;
    t.dim_order = order;
    t.data = data;
    t.capacity_bytes = sizeof data;
    t.dynamism = dynamism;
  }
};

TEST(HostApi, ResizeWithinCapacityRecomputesStridesInDimOrder) {
  // NCHW with channels-last dim order (0, 2, 3, 1).
  Tensor3 x({1, 2, 2, 2}, {0, 2, 3, 1}, ET_SHAPE_DYNAMIC_BOUND);
  int64_t shape[] = {1, 3, 4, 5};
  ASSERT_EQ(take_message(host()->tensor_resize(&x.t, shape, 4)), "");
  EXPECT_EQ(x.sizes[1], 3);
  EXPECT_EQ(x.strides[1], 1);       // C innermost
  EXPECT_EQ(x.strides[3], 3);       // W
  EXPECT_EQ(x.strides[2], 15);      // H
  EXPECT_EQ(x.strides[0], 60);      // N
  EXPECT_EQ(x.t.nbytes, 60 * sizeof(float));
}

TEST(HostApi, ResizeRejectsWhatItMust) {
  Tensor3 fixed({2, 2}, {0, 1}, ET_SHAPE_STATIC);
  int64_t same[] = {2, 2}, other[] = {2, 3};
  fixed.strides[0] = 2, fixed.strides[1] = 1;
  EXPECT_EQ(take_message(host()->tensor_resize(&fixed.t, same, 2)), "");
  EXPECT_THAT(take_message(host()->tensor_resize(&fixed.t, other, 2)), HasSubstr("static shape"));
  Tensor3 bounded({2, 2}, {0, 1}, ET_SHAPE_DYNAMIC_BOUND);
  int64_t too_big[] = {8, 9};
  EXPECT_THAT(take_message(host()->tensor_resize(&bounded.t, too_big, 2)), HasSubstr("exceed the tensor's capacity"));
  int64_t wrong_rank[] = {4};
  EXPECT_THAT(take_message(host()->tensor_resize(&bounded.t, wrong_rank, 1)), HasSubstr("differs from the tensor's rank"));
  int64_t negative[] = {-1, 2};
  EXPECT_THAT(take_message(host()->tensor_resize(&bounded.t, negative, 2)), HasSubstr("negative size"));
  int64_t huge[] = {INT64_MAX / 2, 16};
  EXPECT_THAT(take_message(host()->tensor_resize(&bounded.t, huge, 2)), HasSubstr("overflow"));
  // Empty, so within any capacity, but its dense strides would overflow int64.
  Tensor3 empty_bounded({3, 2, 2}, {0, 1, 2}, ET_SHAPE_DYNAMIC_BOUND);
  int64_t empty_huge[] = {0, INT64_MAX / 2, 16};
  EXPECT_THAT(take_message(host()->tensor_resize(&empty_bounded.t, empty_huge, 3)),
              HasSubstr("sizes overflow 64-bit strides"));
}

TEST(HostApi, ServicesByName) {
  et_service_lease lease{};
  lease.struct_size = sizeof lease;
  ASSERT_EQ(take_message(host()->service_acquire("pthreadpool", &lease)), "");
  EXPECT_NE(lease.handle, nullptr);
  host()->service_release(&lease);
  EXPECT_THAT(take_message(host()->service_acquire("gpu", &lease)), HasSubstr("no service named 'gpu'"));
}

}  // namespace
