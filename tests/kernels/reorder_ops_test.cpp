// flip, roll, gather and cumsum (reorder_ops.cpp) against naive references
// computed in double over logical indices: several dtypes, negative dims,
// strided (transposed) inputs, rank 0, empty tensors and the rejections.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pointwise_test_support.h"

using ::testing::HasSubstr;
using namespace pw_test;

namespace {

std::vector<int64_t> shape_of(const TT& t) { return t.sizes; }

TEST(ReorderFlip, MatchesReversedIndicesOnEveryDtypeAndLayout) {
  for (int32_t dtype : {ET_DTYPE_FLOAT32, ET_DTYPE_INT64, ET_DTYPE_UINT8, ET_DTYPE_BOOL, ET_DTYPE_FLOAT64}) {
    for (bool transposed : {false, true}) {
      TT in({3, 4, 5}, dtype, 7, 0, ET_SHAPE_STATIC, transposed), out({3, 4, 5}, dtype);
      ASSERT_EQ(run("aten::flip.out", {&in.v, &int_list({0, -1})->v, &out.v}), "");
      for_each_index(shape_of(out), [&](const std::vector<int64_t>& i) {
        EXPECT_EQ(out.get(i), in.get({2 - i[0], i[1], 4 - i[2]})) << dtype;
      });
    }
  }
  TT scalar({}, ET_DTYPE_FLOAT32), scalar_out({}, ET_DTYPE_FLOAT32);
  ASSERT_EQ(run("aten::flip.out", {&scalar.v, &int_list({})->v, &scalar_out.v}), "");
  EXPECT_EQ(scalar_out.values(), scalar.values());
  TT empty({0, 3}), empty_out({0, 3});
  EXPECT_EQ(run("aten::flip.out", {&empty.v, &int_list({1})->v, &empty_out.v}), "");
}

TEST(ReorderFlip, RejectsRepeatedAndOutOfRangeDims) {
  TT in({2, 3}), out({2, 3});
  EXPECT_THAT(run("aten::flip.out", {&in.v, &int_list({1, -1})->v, &out.v}),
              HasSubstr("aten::flip.out: dim 1 appears more than once in dims [1, -1]"));
  EXPECT_THAT(run("aten::flip.out", {&in.v, &int_list({2})->v, &out.v}), HasSubstr("dim 2 is out of range"));
}

TEST(ReorderRoll, MatchesShiftedIndicesAlongDimsAndFlattened) {
  auto wrap = [](int64_t i, int64_t n) { return ((i % n) + n) % n; };
  for (int32_t dtype : {ET_DTYPE_FLOAT32, ET_DTYPE_INT32}) {
    TT in({3, 4}, dtype, 3, 0, ET_SHAPE_STATIC, true), out({3, 4}, dtype);
    ASSERT_EQ(run("aten::roll.out", {&in.v, &int_list({1, -5})->v, &int_list({0, 1})->v, &out.v}), "");
    for_each_index({3, 4}, [&](const std::vector<int64_t>& i) {
      EXPECT_EQ(out.get(i), in.get({wrap(i[0] - 1, 3), wrap(i[1] + 5, 4)}));
    });
    ASSERT_EQ(run("aten::roll.out", {&in.v, &int_list({14})->v, &int_list({})->v, &out.v}), "");
    for (int64_t k = 0; k < 12; ++k) {
      int64_t src = wrap(k - 14, 12);
      EXPECT_EQ(out.get({k / 4, k % 4}), in.get({src / 4, src % 4})) << k;
    }
  }
  TT empty({0}), empty_out({0});
  EXPECT_EQ(run("aten::roll.out", {&empty.v, &int_list({1})->v, &int_list({0})->v, &empty_out.v}), "");
}

TEST(ReorderRoll, RejectsMismatchedShiftsAndDims) {
  TT in({2, 3}), out({2, 3});
  EXPECT_THAT(run("aten::roll.out", {&in.v, &int_list({1, 2})->v, &int_list({0})->v, &out.v}),
              HasSubstr("shifts [1, 2] and dims [0] must have the same length"));
  EXPECT_THAT(run("aten::roll.out", {&in.v, &int_list({1, 2})->v, &int_list({})->v, &out.v}),
              HasSubstr("must have one value when dims is empty"));
}

TEST(ReorderGather, PicksAlongTheDimWithNegativeIndices) {
  for (int64_t dim : {0, 1, -1}) {
    TT self({3, 4}, ET_DTYPE_FLOAT64, 5), index({2, 3}, ET_DTYPE_INT64), out({2, 3}, ET_DTYPE_FLOAT64);
    const int64_t d = dim < 0 ? dim + 2 : dim, limit = d == 0 ? 3 : 4;
    for (size_t k = 0; k < 6; ++k) index.set_flat(k, static_cast<double>(static_cast<int64_t>(k * 5) % (2 * limit) - limit));
    ASSERT_EQ(run("aten::gather.out", {&self.v, &integer(dim)->v, &index.v, &boolean(false)->v, &out.v}), "");
    for_each_index({2, 3}, [&](const std::vector<int64_t>& i) {
      int64_t at = static_cast<int64_t>(index.get(i));
      if (at < 0) at += limit;
      std::vector<int64_t> src = i;
      src[d] = at;
      EXPECT_EQ(out.get(i), self.get(src)) << dim;
    });
  }
}

TEST(ReorderGather, RejectsOutOfRangeIndexAndWrongRank) {
  TT self({3, 4}), index({2, 2}, ET_DTYPE_INT64), flat({4}, ET_DTYPE_INT64), out({2, 2}), flat_out({4});
  index.set_values({0, 1, 2, 4});
  EXPECT_THAT(run("aten::gather.out", {&self.v, &integer(1)->v, &index.v, &boolean(false)->v, &out.v}),
              HasSubstr("aten::gather.out: index 4 is out of range for dim 1 of size 4"));
  EXPECT_THAT(run("aten::gather.out", {&self.v, &integer(0)->v, &flat.v, &boolean(false)->v, &flat_out.v}),
              HasSubstr("must have the rank of self"));
}

TEST(ReorderCumsum, MatchesRunningSumsInDoubleAndInt64) {
  for (int64_t dim : {0, 1, -1, 2}) {
    TT in({2, 3, 4}, ET_DTYPE_FLOAT32, 9, 0, ET_SHAPE_STATIC, true), out({2, 3, 4}, ET_DTYPE_FLOAT32);
    ASSERT_EQ(run("aten::cumsum.out", {&in.v, &integer(dim)->v, &none()->v, &out.v}), "");
    const int64_t d = dim < 0 ? dim + 3 : dim;
    for_each_index({2, 3, 4}, [&](const std::vector<int64_t>& i) {
      double expected = 0;
      std::vector<int64_t> j = i;
      for (j[d] = 0; j[d] <= i[d]; ++j[d]) expected += in.get(j);
      EXPECT_NEAR(out.get(i), expected, tol(expected)) << dim;
    });
  }
  TT ints({5}, ET_DTYPE_INT32), sums({5}, ET_DTYPE_INT64);
  ints.set_values({1, -2, 3, 100, 7});
  ASSERT_EQ(run("aten::cumsum.out", {&ints.v, &integer(0)->v, &none()->v, &sums.v}), "");
  EXPECT_EQ(sums.values(), (std::vector<double>{1, -1, 2, 102, 109}));
  TT as_double({5}, ET_DTYPE_FLOAT64);
  ASSERT_EQ(run("aten::cumsum.out", {&ints.v, &integer(0)->v, &integer(ET_DTYPE_FLOAT64)->v, &as_double.v}), "");
  EXPECT_EQ(as_double.values(), (std::vector<double>{1, -1, 2, 102, 109}));
  TT scalar({}, ET_DTYPE_FLOAT32), scalar_out({}, ET_DTYPE_FLOAT32);
  ASSERT_EQ(run("aten::cumsum.out", {&scalar.v, &integer(0)->v, &none()->v, &scalar_out.v}), "");
  EXPECT_EQ(scalar_out.values(), scalar.values());
}

TEST(ReorderCumsum, RejectsAnOutputOfTheWrongDtype) {
  TT ints({3}, ET_DTYPE_INT32), out({3}, ET_DTYPE_INT32);
  EXPECT_THAT(run("aten::cumsum.out", {&ints.v, &integer(0)->v, &none()->v, &out.v}),
              HasSubstr("aten::cumsum.out: output dtype int32 must be int64"));
}

}  // namespace
