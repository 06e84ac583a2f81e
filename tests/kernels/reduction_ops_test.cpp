// The reductions added for ExecuTorch's operator set (reductions.cpp: any/all,
// prod, max.dim; reorder_ops.cpp: topk) and the integer edge cases of the new
// binary operators (binary_elementwise.cpp): empty inputs, NaN, errors.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pointwise_test_support.h"

using ::testing::HasSubstr;
using namespace pw_test;

namespace {

TEST(AnyAll, ReduceEmptyInputsToTheirIdentities) {
  TT empty({0, 3}, ET_DTYPE_BOOL), any_out({3}, ET_DTYPE_BOOL), all_out({3}, ET_DTYPE_BOOL);
  ASSERT_EQ(run("aten::any.out", {&empty.v, &integer(0)->v, &boolean(false)->v, &any_out.v}), "");
  ASSERT_EQ(run("aten::all.out", {&empty.v, &integer(0)->v, &boolean(false)->v, &all_out.v}), "");
  EXPECT_EQ(any_out.values(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(all_out.values(), (std::vector<double>{1, 1, 1}));
  TT x({2, 2}), scalar({}, ET_DTYPE_BOOL);
  x.set_values({0, 0, 0, -0.5});
  ASSERT_EQ(run("aten::any.all_out", {&x.v, &scalar.v}), "");
  EXPECT_EQ(scalar.values(), std::vector<double>{1});
  TT wrong({}, ET_DTYPE_FLOAT32);
  EXPECT_THAT(run("aten::any.all_out", {&x.v, &wrong.v}), HasSubstr("output dtype must be bool or uint8"));
}

TEST(Prod, MultipliesIntegersInInt64AndEmptyGivesOne) {
  TT x({2, 3}, ET_DTYPE_INT32), out({2}, ET_DTYPE_INT64), empty({0}), one({});
  x.set_values({1, -2, 3, 4, 5, 0});
  ASSERT_EQ(run("aten::prod.int_out", {&x.v, &integer(-1)->v, &boolean(false)->v, &none()->v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{-6, 0}));
  ASSERT_EQ(run("aten::prod.out", {&empty.v, &none()->v, &one.v}), "");
  EXPECT_EQ(one.values(), std::vector<double>{1});
}

TEST(MaxDim, ReturnsValuesAndFirstIndicesAndRejectsEmptyDims) {
  TT x({2, 3}), values({2}), indices({2}, ET_DTYPE_INT64);
  x.set_values({1, 5, 5, NAN, 2, 7});
  auto outs = tensor_list({&values.t, &indices.t});
  ASSERT_EQ(run("aten::max.dim_max", {&x.v, &integer(1)->v, &boolean(false)->v, &values.v, &indices.v, &outs->v}, false), "");
  EXPECT_EQ(values.get({0}), 5);
  EXPECT_TRUE(std::isnan(values.get({1})));
  EXPECT_EQ(indices.values(), (std::vector<double>{1, 0}));
  TT empty({2, 0}), ev({2}), ei({2}, ET_DTYPE_INT64);
  auto eouts = tensor_list({&ev.t, &ei.t});
  EXPECT_THAT(run("aten::max.dim_max", {&empty.v, &integer(1)->v, &boolean(false)->v, &ev.v, &ei.v, &eouts->v}, false),
              HasSubstr("cannot reduce over a zero-size dimension"));
}

TEST(Topk, SortsNanFirstKeepsLowerIndexOnTiesAndChecksK) {
  TT x({5}), values({3}), indices({3}, ET_DTYPE_INT64);
  x.set_values({2, NAN, 3, 3, -1});
  auto outs = tensor_list({&values.t, &indices.t});
  ASSERT_EQ(run("aten::topk.values", {&x.v, &integer(3)->v, &integer(-1)->v, &boolean(true)->v, &boolean(true)->v,
                                      &values.v, &indices.v, &outs->v}, false),
            "");
  EXPECT_TRUE(std::isnan(values.get({0})));
  EXPECT_EQ(values.get({1}), 3);
  EXPECT_EQ(indices.values(), (std::vector<double>{1, 2, 3}));
  EXPECT_THAT(run("aten::topk.values", {&x.v, &integer(6)->v, &integer(-1)->v, &boolean(true)->v, &boolean(true)->v,
                                        &values.v, &indices.v, &outs->v}, false),
              HasSubstr("k 6 is out of range for dim 0 of size 5"));
}

TEST(IntegerBinaryOps, RemainderTakesTheDivisorsSignAndShiftsSaturate) {
  TT a({4}, ET_DTYPE_INT64), b({4}, ET_DTYPE_INT64), out({4}, ET_DTYPE_INT64);
  a.set_values({7, -7, 7, -7});
  b.set_values({3, 3, -3, -3});
  ASSERT_EQ(run("aten::remainder.Tensor_out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{1, 2, -2, -1}));
  ASSERT_EQ(run("aten::fmod.Tensor_out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{1, -1, 1, -1}));
  b.set_values({1, 0, 2, 3});
  EXPECT_THAT(run("aten::remainder.Tensor_out", {&a.v, &b.v, &out.v}), HasSubstr("integer modulo by zero"));
  b.set_values({64, 70, 1, 63});
  ASSERT_EQ(run("aten::bitwise_right_shift.Tensor_out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{0, -1, 3, -1}));
  ASSERT_EQ(run("aten::bitwise_left_shift.Tensor_out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{0, 0, 14, static_cast<double>(INT64_MIN)}));
}

}  // namespace
