// aten::add.out / aten::mul.out of the kernels_optimized plugin against a
// naive double-precision reference: same shapes, broadcasting, rank 0, empty,
// strided inputs, resizing outputs, int64 promotion, and the rejections.
// The other binary operators are covered by pointwise_binary_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernel_test_support.h"

using ::testing::HasSubstr;

namespace {

using etrt_test::Tensor;
using etrt_test::run_kernel;
using etrt_test::scalar;

// Reference: out[i] = a[bcast(i)] (+ alpha *|*) b[bcast(i)] in double.
void expect_matches(const Tensor& a, const Tensor& b, const Tensor& out, bool add, double alpha) {
  size_t rank = out.sizes.size(), n = 1;
  for (int64_t s : out.sizes) n *= static_cast<size_t>(s);
  std::vector<int64_t> index(rank, 0);
  for (size_t flat = 0; flat < n; ++flat) {
    size_t rest = flat;
    for (size_t d = rank; d-- > 0;) {
      index[d] = static_cast<int64_t>(rest % out.sizes[d]);
      rest /= out.sizes[d];
    }
    auto pick = [&](const Tensor& t) {
      std::vector<int64_t> i(t.sizes.size());
      for (size_t d = 0; d < i.size(); ++d) {
        int64_t od = index[rank - i.size() + d];
        i[d] = t.sizes[d] == 1 ? 0 : od;
      }
      return static_cast<double>(t.at(i));
    };
    double expected = add ? pick(a) + alpha * pick(b) : pick(a) * pick(b);
    ASSERT_NEAR(out.at(index), expected, 1e-5 + 1e-6 * std::abs(expected)) << "at flat index " << flat;
  }
}

TEST(BinaryElementwise, AddSameShapeLargeRunsInParallelAndMatches) {
  Tensor a({1024, 1025}), b({1024, 1025}), out({1024, 1025});
  et_value alpha = scalar(1);
  ASSERT_EQ(run_kernel("aten::add.out", {&a.v, &b.v, &alpha, &out.v}), "");
  expect_matches(a, b, out, true, 1.0);
}

TEST(BinaryElementwise, AddBroadcastsWithAlpha) {
  Tensor a({2, 3}), b({3}), out({2, 3});
  et_value alpha = scalar(2);
  ASSERT_EQ(run_kernel("aten::add.out", {&a.v, &b.v, &alpha, &out.v}), "");
  expect_matches(a, b, out, true, 2.0);
}

TEST(BinaryElementwise, MulBroadcastsBothWays) {
  Tensor a({4, 1, 3}), b({5, 1}), out({4, 5, 3});
  ASSERT_EQ(run_kernel("aten::mul.out", {&a.v, &b.v, &out.v}), "");
  expect_matches(a, b, out, false, 1.0);
}

TEST(BinaryElementwise, RankZeroAndEmpty) {
  Tensor a({}), b({}), out({});
  ASSERT_EQ(run_kernel("aten::mul.out", {&a.v, &b.v, &out.v}), "");
  EXPECT_FLOAT_EQ(out.data[0], a.data[0] * b.data[0]);
  Tensor e1({0, 3}), e2({0, 3}), eout({0, 3});
  et_value alpha = scalar(1);
  EXPECT_EQ(run_kernel("aten::add.out", {&e1.v, &e2.v, &alpha, &eout.v}), "");
}

TEST(BinaryElementwise, StridedInputIsReadThroughItsStrides) {
  // b is a transposed view: sizes [3, 2] over storage laid out as [2, 3].
  Tensor a({3, 2}), b({3, 2}), out({3, 2});
  b.strides = {1, 3};
  b.t.strides = b.strides.data();
  ASSERT_EQ(run_kernel("aten::mul.out", {&a.v, &b.v, &out.v}), "");
  expect_matches(a, b, out, false, 1.0);
}

TEST(BinaryElementwise, DynamicOutputIsResizedWithinCapacity) {
  Tensor a({2, 3}), b({2, 3}), out({1, 1}, 16, ET_SHAPE_DYNAMIC_BOUND);
  et_value alpha = scalar(1);
  ASSERT_EQ(run_kernel("aten::add.out", {&a.v, &b.v, &alpha, &out.v}), "");
  EXPECT_EQ(out.sizes, (std::vector<int64_t>{2, 3}));
  expect_matches(a, b, out, true, 1.0);
}

TEST(BinaryElementwise, Rejections) {
  Tensor a({2, 3}), b({4}), out({2, 3});
  et_value alpha = scalar(1);
  EXPECT_THAT(run_kernel("aten::add.out", {&a.v, &b.v, &alpha, &out.v}), HasSubstr("are not broadcastable"));
  Tensor c({2, 3}), wrong_out({3, 3});
  EXPECT_THAT(run_kernel("aten::mul.out", {&a.v, &c.v, &wrong_out.v}), HasSubstr("static shape"));
  // int64 is supported now (see MixedFloatAndInt64PromotesToFloat); half types are not.
  Tensor h({2, 3});
  h.t.dtype = ET_DTYPE_FLOAT16;
  EXPECT_THAT(run_kernel("aten::mul.out", {&a.v, &h.v, &out.v}), HasSubstr("dtype float16 is not supported"));
  EXPECT_THAT(run_kernel("aten::mul.out", {&a.v, &c.v}), HasSubstr("expected 4 arguments, got 3"));
  EXPECT_THAT(run_kernel("aten::add.out", {&a.v, &c.v, &a.v, &out.v}), HasSubstr("(alpha) must be a scalar"));
}

TEST(BinaryElementwise, MixedFloatAndInt64PromotesToFloat) {
  // int64 storage for b: 6 elements of 8 bytes.
  Tensor a({2, 3}), b({2, 3}), out({2, 3});
  std::vector<int64_t> ints = {-3, -1, 0, 2, 5, 7};
  b.t.dtype = ET_DTYPE_INT64;
  b.t.data = ints.data();
  b.t.nbytes = b.t.capacity_bytes = ints.size() * sizeof(int64_t);
  ASSERT_EQ(run_kernel("aten::mul.out", {&a.v, &b.v, &out.v}), "");
  for (size_t k = 0; k < ints.size(); ++k)
    EXPECT_FLOAT_EQ(out.data[k], a.data[k] * static_cast<float>(ints[k])) << k;
}

}  // namespace
