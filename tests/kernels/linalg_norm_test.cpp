// aten::_native_batch_norm_legit_no_training.out and aten::native_layer_norm.out
// of the kernels_optimized plugin against double-precision references, with
// and without weight/bias, several ranks, the statistics outputs' shapes
// (batch norm: resized to [0] like ExecuTorch's portable kernel; layer norm:
// the input shape with the normalised dims set to 1), and the rejections.
// Tolerance: see linalg_test::tolerance (K = normalised elements per row).
#include <cmath>
#include <vector>

#include "linalg_test_support.h"

using ::testing::HasSubstr;

namespace {

using etrt_test::scalar_double;
using linalg_test::all_near;
using linalg_test::call_exact;
using linalg_test::dynamic_out;
using linalg_test::IntList;
using linalg_test::make;
using linalg_test::null_value;
using linalg_test::Tensor;
using linalg_test::TensorList;

// --------------------------------------------------------------- batch norm
struct BnArgs {
  std::unique_ptr<Tensor> x, w, b, mean, var, out0, out1, out2;
  et_value momentum = scalar_double(0.1), eps = scalar_double(1e-5), none = null_value();
  bool with_weight = true, with_bias = true;
  BnArgs(std::vector<int64_t> shape, uint32_t seed) {
    const int64_t C = shape[1];
    x = make(shape, seed);
    w = make({C}, seed + 1);
    b = make({C}, seed + 2);
    mean = make({C}, seed + 3);
    var = make({C}, seed + 4, 0.1f, 2.0f);
    out0 = std::make_unique<Tensor>(shape);
    out1 = std::make_unique<Tensor>(std::vector<int64_t>{0});
    out2 = std::make_unique<Tensor>(std::vector<int64_t>{0});
  }
  std::string run() {
    TensorList outs({&out0->t, &out1->t, &out2->t});
    return call_exact("aten::_native_batch_norm_legit_no_training.out",
                      {&x->v, with_weight ? &w->v : &none, with_bias ? &b->v : &none, &mean->v, &var->v, &momentum,
                       &eps, &out0->v, &out1->v, &out2->v, &outs.v});
  }
  std::vector<double> reference() const {
    const auto& s = x->sizes;
    const int64_t C = s[1];
    int64_t inner = 1;
    for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
    std::vector<double> r(x->data.size());
    for (size_t i = 0; i < r.size(); ++i) {
      const int64_t c = (static_cast<int64_t>(i) / inner) % C;
      const double invstd = 1.0 / std::sqrt(static_cast<double>(var->data[c]) + 1e-5);
      r[i] = (x->data[i] - static_cast<double>(mean->data[c])) * invstd * (with_weight ? w->data[c] : 1.0) +
             (with_bias ? b->data[c] : 0.0);
    }
    return r;
  }
};

TEST(LinalgBatchNorm, MatchesReference) {
  const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {2, 5, 7}, {1, 16, 9, 11}, {3, 32, 28, 28}, {2, 4, 3, 2, 2}};
  uint32_t seed = 1;
  for (const auto& shape : shapes)
    for (int variant = 0; variant < 4; ++variant) {
      BnArgs a(shape, seed += 10);
      a.with_weight = variant & 1;
      a.with_bias = variant & 2;
      ASSERT_EQ(a.run(), "");
      EXPECT_TRUE(all_near(*a.out0, a.reference(), 1)) << "rank " << shape.size() << " variant " << variant;
    }
}

TEST(LinalgBatchNorm, StatisticsOutputsAreResizedToZeroLikeExecuTorch) {
  BnArgs a({2, 4, 3, 3}, 5);
  a.out1 = dynamic_out({4}, 4);
  a.out2 = dynamic_out({4}, 4);
  ASSERT_EQ(a.run(), "");
  EXPECT_EQ(a.out1->sizes, (std::vector<int64_t>{0}));
  EXPECT_EQ(a.out2->sizes, (std::vector<int64_t>{0}));
}

TEST(LinalgBatchNorm, RejectsRunningMeanOfTheWrongSize) {
  BnArgs a({2, 4, 3, 3}, 5);
  a.mean = make({3}, 1);
  EXPECT_THAT(a.run(), HasSubstr("running_mean [3] must have shape [4]"));
}

TEST(LinalgBatchNorm, RejectsWeightOfTheWrongSize) {
  BnArgs a({2, 4, 3, 3}, 5);
  a.w = make({2, 2}, 1);
  EXPECT_THAT(a.run(), HasSubstr("weight [2, 2] must have shape [4]"));
}

TEST(LinalgBatchNorm, RejectsOneDimensionalInput) {
  BnArgs a({2, 4}, 5);
  a.x = make({4}, 1);
  EXPECT_THAT(a.run(), HasSubstr("input [4] must have at least 2 dimensions"));
}

TEST(LinalgBatchNorm, RejectsWrongArgumentCount) {
  BnArgs a({2, 4}, 5);
  EXPECT_THAT(call_exact("aten::_native_batch_norm_legit_no_training.out", {&a.x->v, &a.out0->v}),
              HasSubstr("expected 11 arguments, got 2"));
}

TEST(LinalgBatchNorm, RejectsStaticStatisticsOfAnotherShape) {
  BnArgs a({2, 4}, 5);
  a.out1 = std::make_unique<Tensor>(std::vector<int64_t>{4});
  EXPECT_THAT(a.run(), HasSubstr("out1 has the static shape [4], the result has shape [0]"));
}

TEST(LinalgBatchNorm, RejectsWrongDtype) {
  BnArgs a({2, 4}, 5);
  a.var->t.dtype = ET_DTYPE_FLOAT64;
  EXPECT_THAT(a.run(), HasSubstr("running_var has dtype float64, which is not supported"));
}

// --------------------------------------------------------------- layer norm
struct LnArgs {
  std::unique_ptr<Tensor> x, w, b, out0, out1, out2;
  IntList normalized;
  et_value eps = scalar_double(1e-5), none = null_value();
  bool with_weight = true, with_bias = true;
  LnArgs(std::vector<int64_t> shape, size_t r, uint32_t seed)
      : normalized(std::vector<int64_t>(shape.end() - static_cast<std::ptrdiff_t>(r), shape.end())) {
    x = make(shape, seed, -3.0f, 5.0f);
    w = make(normalized.items, seed + 1);
    b = make(normalized.items, seed + 2);
    out0 = std::make_unique<Tensor>(shape);
    std::vector<int64_t> stat = shape;
    for (size_t d = shape.size() - r; d < shape.size(); ++d) stat[d] = 1;
    out1 = std::make_unique<Tensor>(stat);
    out2 = std::make_unique<Tensor>(stat);
  }
  std::string run() {
    TensorList outs({&out0->t, &out1->t, &out2->t});
    return call_exact("aten::native_layer_norm.out", {&x->v, &normalized.v, with_weight ? &w->v : &none,
                                                      with_bias ? &b->v : &none, &eps, &out0->v, &out1->v, &out2->v,
                                                      &outs.v});
  }
};

TEST(LinalgLayerNorm, MatchesReference) {
  struct Case {
    std::vector<int64_t> shape;
    size_t r;
  };
  const std::vector<Case> cases = {{{4, 7}, 1},      {{2, 3, 16}, 1},  {{2, 3, 5, 6}, 2}, {{5}, 1},
                                   {{3, 4, 5}, 3},   {{64, 768}, 1},   {{0, 8}, 1},       {{9, 33}, 1}};
  uint32_t seed = 300;
  for (const Case& c : cases)
    for (int variant = 0; variant < 4; ++variant) {
      LnArgs a(c.shape, c.r, seed += 10);
      a.with_weight = variant & 1;
      a.with_bias = variant & 2;
      ASSERT_EQ(a.run(), "");
      int64_t N = 1;
      for (int64_t s : a.normalized.items) N *= s;
      const int64_t M = N == 0 ? 0 : static_cast<int64_t>(a.x->data.size()) / N;
      std::vector<double> out, mean, rstd;
      for (int64_t m = 0; m < M; ++m) {
        double s = 0.0, sq = 0.0;
        for (int64_t i = 0; i < N; ++i) s += a.x->data[m * N + i];
        const double mu = s / N;
        for (int64_t i = 0; i < N; ++i) sq += (a.x->data[m * N + i] - mu) * (a.x->data[m * N + i] - mu);
        const double r = 1.0 / std::sqrt(sq / N + 1e-5);
        mean.push_back(mu);
        rstd.push_back(r);
        for (int64_t i = 0; i < N; ++i)
          out.push_back((a.x->data[m * N + i] - mu) * r * (a.with_weight ? a.w->data[i] : 1.0) +
                        (a.with_bias ? a.b->data[i] : 0.0));
      }
      EXPECT_TRUE(all_near(*a.out0, out, N)) << "shape rank " << c.shape.size() << " variant " << variant;
      EXPECT_TRUE(all_near(*a.out1, mean, N));
      EXPECT_TRUE(all_near(*a.out2, rstd, N));
    }
}

TEST(LinalgLayerNorm, StatisticsHaveTheInputShapeWithNormalisedDimsSetToOne) {
  LnArgs a({2, 3, 4}, 1, 7);
  a.out1 = dynamic_out({6, 4, 4}, 96);
  a.out2 = dynamic_out({6, 4, 4}, 96);
  ASSERT_EQ(a.run(), "");
  EXPECT_EQ(a.out1->sizes, (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(a.out2->sizes, (std::vector<int64_t>{2, 3, 1}));
}

TEST(LinalgLayerNorm, RejectsNormalizedShapeThatIsNotASuffix) {
  LnArgs a({2, 3, 4}, 1, 7);
  a.normalized.items = {3};
  EXPECT_THAT(a.run(), HasSubstr("normalized_shape [3] must be a non-empty suffix of the input shape [2, 3, 4]"));
}

TEST(LinalgLayerNorm, RejectsWeightOfTheWrongShape) {
  LnArgs a({2, 3, 4}, 1, 7);
  a.w = make({3}, 1);
  EXPECT_THAT(a.run(), HasSubstr("weight [3] must have the normalized_shape [4]"));
}

TEST(LinalgLayerNorm, RejectsStaticStatisticsOfTheWrongShape) {
  LnArgs a({2, 3, 4}, 1, 7);
  a.out2 = std::make_unique<Tensor>(std::vector<int64_t>{2, 3, 4});
  EXPECT_THAT(a.run(), HasSubstr("out2 has the static shape [2, 3, 4], the result has shape [2, 3, 1]"));
}

TEST(LinalgLayerNorm, RejectsWrongArgumentCount) {
  LnArgs a({2, 3, 4}, 1, 7);
  EXPECT_THAT(call_exact("aten::native_layer_norm.out", {&a.x->v, &a.normalized.v, &a.out0->v}),
              HasSubstr("expected 9 arguments, got 3"));
}

TEST(LinalgLayerNorm, RejectsWrongDtype) {
  LnArgs a({2, 3, 4}, 1, 7);
  a.x->t.dtype = ET_DTYPE_INT32;  // (bfloat16 is computed in float32: half_kernels_test)
  EXPECT_THAT(a.run(), HasSubstr("input has dtype int32, which is not supported"));
}

}  // namespace
