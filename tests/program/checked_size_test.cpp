// core/src/program/checked_size.h: the one measure of a shape that core uses
// (program tensors, inputs, resizes, et_view).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core/src/program/checked_size.h"

namespace etrt {
namespace {

using Fault = ShapeSize::Fault;

TEST(CheckedSize, MeasuresRepresentableShapes) {
  const int64_t sizes[] = {2, 3, 4};
  ShapeSize shape = measure_shape(sizes, 3, 4);
  ASSERT_TRUE(shape.ok()) << shape.fault_text();
  EXPECT_EQ(shape.numel, 24u);
  EXPECT_EQ(shape.nbytes, 96u);

  ShapeSize scalar = measure_shape(nullptr, 0, 8);  // rank 0: one element
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar.numel, 1u);
  EXPECT_EQ(scalar.nbytes, 8u);

  const int64_t empty[] = {5, 0, 7};
  ShapeSize none = measure_shape(empty, 3, 2);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none.numel, 0u);
  EXPECT_EQ(none.nbytes, 0u);
}

TEST(CheckedSize, NamesANegativeSizeAndItsDim) {
  const int64_t sizes[] = {3, -5};
  ShapeSize shape = measure_shape(sizes, 2, 4);
  EXPECT_EQ(shape.fault, Fault::kNegativeSize);
  EXPECT_EQ(shape.fault_text(), "negative size -5 at dim 1");
}

// issue 32 D8: 1084 * 68069166323651482 is 24 modulo 2^64.
TEST(CheckedSize, ProductsThatWrapAreRefused) {
  const int64_t sizes[] = {1084, 68069166323651482};
  ShapeSize elements = measure_shape(sizes, 2, 1);
  EXPECT_FALSE(elements.ok());
  EXPECT_EQ(elements.fault_text(), "byte size overflows");
  const int64_t bytes_only[] = {int64_t{1} << 62};  // 2^62 elements fit, 2^64 bytes do not
  EXPECT_TRUE(measure_shape(bytes_only, 1, 1).ok());
  EXPECT_EQ(measure_shape(bytes_only, 1, 4).fault, Fault::kByteSizeOverflow);
}

TEST(CheckedSize, EmptyShapesStillNeedStridesThatFit) {
  const int64_t sizes[] = {0, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::max(),
                           std::numeric_limits<int32_t>::max()};
  ShapeSize shape = measure_shape(sizes, 4, 4);
  EXPECT_EQ(shape.fault, Fault::kStrideOverflow);
  EXPECT_EQ(shape.fault_text(), "sizes overflow 64-bit strides");
  // 2^63 elements fit size_t but not int64 (what strides and sym_numel use): refused, so every element count
  // that passes fits int64.
  const int64_t beyond_int64[] = {int64_t{1} << 32, int64_t{1} << 31};
  EXPECT_EQ(measure_shape(beyond_int64, 2, 1).fault, Fault::kStrideOverflow);
  const int64_t largest[] = {int64_t{1} << 31, int64_t{1} << 31};
  ShapeSize fits = measure_shape(largest, 2, 1);
  ASSERT_TRUE(fits.ok());
  EXPECT_EQ(fits.numel, size_t{1} << 62);
}

TEST(CheckedSize, CheckedMulAndAdd) {
  uint64_t product = 0, sum = 0;
  EXPECT_TRUE(checked_mul<uint64_t>(1u << 31, 1u << 31, &product));
  EXPECT_EQ(product, uint64_t{1} << 62);
  EXPECT_FALSE(checked_mul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32, &product));
  EXPECT_TRUE(checked_add<uint64_t>(1, 2, &sum));
  EXPECT_EQ(sum, 3u);
  EXPECT_FALSE(checked_add<uint64_t>(std::numeric_limits<uint64_t>::max(), 1, &sum));
  int64_t signed_product = 0;
  EXPECT_FALSE(checked_mul<int64_t>(1084, 68069166323651482, &signed_product));
}

}  // namespace
}  // namespace etrt
