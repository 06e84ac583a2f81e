// rand, randn and native_dropout (random_ops.cpp): ranges, shapes, the
// inference form of dropout and its argument errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pointwise_test_support.h"

using ::testing::HasSubstr;
using namespace pw_test;

namespace {

TEST(Rand, FillsTheRequestedShapeWithUniformAndNormalDraws) {
  TT uniform({1000}, ET_DTYPE_FLOAT32, 1, 1000, ET_SHAPE_DYNAMIC_BOUND), normal({40, 50}, ET_DTYPE_FLOAT64);
  ASSERT_EQ(run("aten::rand.out", {&int_list({1000})->v, &uniform.v}), "");
  double total = 0;
  for (double v : uniform.values()) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
    total += v;
  }
  EXPECT_NEAR(total / 1000, 0.5, 0.05);
  ASSERT_EQ(run("aten::randn.out", {&int_list({40, 50})->v, &normal.v}), "");
  double sum = 0, squares = 0;
  for (double v : normal.values()) sum += v, squares += v * v;
  EXPECT_NEAR(sum / 2000, 0.0, 0.1);
  EXPECT_NEAR(squares / 2000, 1.0, 0.15);
  TT ints({3}, ET_DTYPE_INT64);
  EXPECT_THAT(run("aten::rand.out", {&int_list({3})->v, &ints.v}), HasSubstr("output dtype int64 is not supported"));
}

TEST(NativeDropout, CopiesWithoutTrainingAndZeroesEverythingAtPOne) {
  TT x({2, 3}), out({2, 3}), mask({2, 3}, ET_DTYPE_BOOL);
  auto outs = tensor_list({&out.t, &mask.t});
  ASSERT_EQ(run("aten::native_dropout.out", {&x.v, &real(0.5)->v, &boolean(false)->v, &out.v, &mask.v, &outs->v}, false),
            "");
  EXPECT_EQ(out.values(), x.values());
  EXPECT_EQ(mask.values(), std::vector<double>(6, 1));
  ASSERT_EQ(run("aten::native_dropout.out", {&x.v, &real(1.0)->v, &boolean(true)->v, &out.v, &mask.v, &outs->v}, false),
            "");
  EXPECT_EQ(out.values(), std::vector<double>(6, 0));
  EXPECT_EQ(mask.values(), std::vector<double>(6, 0));
  EXPECT_THAT(run("aten::native_dropout.out", {&x.v, &real(1.5)->v, &boolean(true)->v, &out.v, &mask.v, &outs->v}, false),
              HasSubstr("dropout probability must be in [0, 1]"));
}

}  // namespace
