// aten::max_pool2d_with_indices.out, aten::avg_pool2d.out and
// aten::_adaptive_avg_pool2d.out of the kernels_optimized plugin against naive
// references written from PyTorch's definitions (window clipping, ceil_mode,
// count_include_pad, divisor_override, flat indices within each H*W plane,
// NaN propagation), and one test per rejection rule.
// Tolerance: see linalg_test::tolerance (K = window size).
#include <cmath>
#include <limits>
#include <vector>

#include "linalg_test_support.h"

using ::testing::HasSubstr;

namespace {

using etrt_test::scalar;
using linalg_test::all_near;
using linalg_test::bool_value;
using linalg_test::call;
using linalg_test::call_exact;
using linalg_test::int64_data;
using linalg_test::int64_tensor;
using linalg_test::IntList;
using linalg_test::make;
using linalg_test::null_value;
using linalg_test::Tensor;
using linalg_test::TensorList;

int64_t pooled(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil_mode) {
  const double v = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(v) : std::floor(v)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

struct MaxCase {
  std::vector<int64_t> shape;  // [N, C, H, W] or [C, H, W]
  int64_t k[2], s[2], p[2], d[2];
  bool ceil_mode;
};

void run_max(const MaxCase& c, uint32_t seed) {
  const size_t r = c.shape.size();
  const int64_t H = c.shape[r - 2], W = c.shape[r - 1];
  const int64_t OH = pooled(H, c.k[0], c.p[0], c.s[0], c.d[0], c.ceil_mode);
  const int64_t OW = pooled(W, c.k[1], c.p[1], c.s[1], c.d[1], c.ceil_mode);
  auto x = make(c.shape, seed);
  std::vector<int64_t> oshape = c.shape;
  oshape[r - 2] = OH, oshape[r - 1] = OW;
  Tensor out(oshape);
  auto idx = int64_tensor(oshape);
  IntList k({c.k[0], c.k[1]}), s({c.s[0], c.s[1]}), p({c.p[0], c.p[1]}), d({c.d[0], c.d[1]});
  et_value ceil_mode = bool_value(c.ceil_mode);
  TensorList outs({&out.t, &idx->t});
  ASSERT_EQ(call_exact("aten::max_pool2d_with_indices.out",
                       {&x->v, &k.v, &s.v, &p.v, &d.v, &ceil_mode, &out.v, &idx->v, &outs.v}),
            "");
  int64_t planes = 1;
  for (size_t i = 0; i + 2 < r; ++i) planes *= c.shape[i];
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float best = -std::numeric_limits<float>::infinity();
        int64_t best_i = -1;
        for (int64_t ky = 0; ky < c.k[0]; ++ky)
          for (int64_t kx = 0; kx < c.k[1]; ++kx) {
            const int64_t ih = oh * c.s[0] - c.p[0] + ky * c.d[0], iw = ow * c.s[1] - c.p[1] + kx * c.d[1];
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const float v = x->data[static_cast<size_t>(pl * H * W + ih * W + iw)];
            if (best_i < 0 || v > best) best = v, best_i = ih * W + iw;
          }
        const size_t o = static_cast<size_t>((pl * OH + oh) * OW + ow);
        ASSERT_EQ(out.data[o], best) << "plane " << pl << " at " << oh << "," << ow;
        ASSERT_EQ(int64_data(*idx)[o], best_i) << "plane " << pl << " at " << oh << "," << ow;
      }
}

TEST(LinalgMaxPool, MatchesReference) {
  const std::vector<MaxCase> cases = {
      {{1, 3, 12, 12}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},   // ResNet stem
      {{2, 2, 11, 13}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},    // ceil_mode
      {{1, 2, 10, 9}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true},     // ceil_mode with a partial last window
      {{1, 1, 15, 15}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, false},   // dilation 2
      {{4, 9, 7}, {3, 2}, {1, 2}, {1, 0}, {1, 1}, false},        // 3-D input, rectangular window
      {{1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, false},
      {{2, 64, 32, 32}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},  // parallel over planes
  };
  uint32_t seed = 10;
  for (const MaxCase& c : cases) run_max(c, seed++);
}

TEST(LinalgMaxPool, EmptyStrideMeansKernelSizeAndNaNWins) {
  auto x = make({1, 1, 4, 4}, 3);
  x->data[5] = std::numeric_limits<float>::quiet_NaN();  // (1, 1): in the first 2x2 window
  Tensor out({1, 1, 2, 2});
  auto idx = int64_tensor({1, 1, 2, 2});
  IntList k({2}), s({}), p({0}), d({1});
  et_value ceil_mode = bool_value(false);
  TensorList outs({&out.t, &idx->t});
  ASSERT_EQ(call_exact("aten::max_pool2d_with_indices.out",
                       {&x->v, &k.v, &s.v, &p.v, &d.v, &ceil_mode, &out.v, &idx->v, &outs.v}),
            "");
  EXPECT_TRUE(std::isnan(out.data[0]));
  EXPECT_EQ(int64_data(*idx)[0], 5);
  EXPECT_EQ(out.data[3], std::max({x->data[10], x->data[11], x->data[14], x->data[15]}));
}

// Valid max-pool arguments on [1, 2, 8, 8]; each rejection test breaks one thing.
struct MaxArgs {
  std::unique_ptr<Tensor> x = make({1, 2, 8, 8}, 1);
  Tensor out{{1, 2, 4, 4}};
  std::unique_ptr<Tensor> idx = int64_tensor({1, 2, 4, 4});
  IntList k{{2, 2}}, s{{2, 2}}, p{{0, 0}}, d{{1, 1}};
  et_value ceil_mode = bool_value(false);
  std::string run() {
    TensorList outs({&out.t, &idx->t});
    return call_exact("aten::max_pool2d_with_indices.out",
                      {&x->v, &k.v, &s.v, &p.v, &d.v, &ceil_mode, &out.v, &idx->v, &outs.v});
  }
};

TEST(LinalgMaxPool, ValidBaselineOfTheRejectionTests) {
  MaxArgs a;
  EXPECT_EQ(a.run(), "");
}

TEST(LinalgMaxPool, RejectsPaddingAboveHalfTheKernel) {
  MaxArgs a;
  a.p.items = {2, 2};
  EXPECT_THAT(a.run(), HasSubstr("padding [2, 2] must be at most half of kernel_size [2, 2]"));
}

TEST(LinalgMaxPool, RejectsIndicesThatAreNotInt64) {
  MaxArgs a;
  a.idx = std::make_unique<Tensor>(std::vector<int64_t>{1, 2, 4, 4});
  EXPECT_THAT(a.run(), HasSubstr("indices has dtype float32, which is not supported (int64 only)"));
}

TEST(LinalgMaxPool, RejectsWrongArgumentCount) {
  MaxArgs a;
  EXPECT_THAT(call("aten::max_pool2d_with_indices.out", {&a.x->v, &a.k.v, &a.out.v}),
              HasSubstr("expected 9 arguments, got 4"));
}

TEST(LinalgMaxPool, RejectsInputTooSmallForTheKernel) {
  MaxArgs a;
  a.k.items = {9, 9};
  a.s.items = {1, 1};
  EXPECT_THAT(a.run(), HasSubstr("is too small for kernel_size [9, 9]"));
}

TEST(LinalgMaxPool, RejectsWrongRank) {
  MaxArgs a;
  a.x = make({2, 8, 8, 1, 1}, 1);
  EXPECT_THAT(a.run(), HasSubstr("must be 3-D (C, H, W) or 4-D (N, C, H, W)"));
}

TEST(LinalgMaxPool, RejectsChannelsLastInput) {
  MaxArgs a;
  linalg_test::make_channels_last(*a.x);
  EXPECT_THAT(a.run(), HasSubstr("self has dim order (0, 2, 3, 1)"));
}

TEST(LinalgMaxPool, RejectsMissingOutputList) {
  MaxArgs a;
  EXPECT_THAT(call_exact("aten::max_pool2d_with_indices.out",
                         {&a.x->v, &a.k.v, &a.s.v, &a.p.v, &a.d.v, &a.ceil_mode, &a.out.v, &a.idx->v, &a.out.v}),
              HasSubstr("aten::max_pool2d_with_indices.out: the last argument must be the list of the 2 returned outputs (out, indices), got Tensor"));
}

// ------------------------------------------------------------- avg_pool2d
struct AvgCase {
  std::vector<int64_t> shape;
  int64_t k[2], s[2], p[2];
  bool ceil_mode, count_include_pad;
  int64_t divisor;  // 0: none
};

void run_avg(const AvgCase& c, uint32_t seed) {
  const size_t r = c.shape.size();
  const int64_t H = c.shape[r - 2], W = c.shape[r - 1];
  const int64_t OH = pooled(H, c.k[0], c.p[0], c.s[0], 1, c.ceil_mode);
  const int64_t OW = pooled(W, c.k[1], c.p[1], c.s[1], 1, c.ceil_mode);
  auto x = make(c.shape, seed);
  std::vector<int64_t> oshape = c.shape;
  oshape[r - 2] = OH, oshape[r - 1] = OW;
  Tensor out(oshape);
  IntList k({c.k[0], c.k[1]}), s({c.s[0], c.s[1]}), p({c.p[0], c.p[1]});
  et_value ceil_mode = bool_value(c.ceil_mode), include = bool_value(c.count_include_pad);
  et_value divisor = c.divisor ? scalar(c.divisor) : null_value();
  ASSERT_EQ(call("aten::avg_pool2d.out", {&x->v, &k.v, &s.v, &p.v, &ceil_mode, &include, &divisor, &out.v}), "");
  int64_t planes = 1;
  for (size_t i = 0; i + 2 < r; ++i) planes *= c.shape[i];
  std::vector<double> expected;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        // Window in padded coordinates, clipped to the padded input for the
        // count_include_pad divisor, then to the input for the sum.
        const int64_t h0 = oh * c.s[0] - c.p[0], w0 = ow * c.s[1] - c.p[1];
        const int64_t h1 = std::min(h0 + c.k[0], H + c.p[0]), w1 = std::min(w0 + c.k[1], W + c.p[1]);
        double sum = 0.0;
        int64_t count = 0;
        for (int64_t ih = std::max<int64_t>(h0, 0); ih < std::min(h1, H); ++ih)
          for (int64_t iw = std::max<int64_t>(w0, 0); iw < std::min(w1, W); ++iw, ++count)
            sum += x->data[static_cast<size_t>(pl * H * W + ih * W + iw)];
        const int64_t divisor_value = c.divisor ? c.divisor : c.count_include_pad ? (h1 - h0) * (w1 - w0) : count;
        expected.push_back(count == 0 ? 0.0 : sum / static_cast<double>(divisor_value));
      }
  EXPECT_TRUE(all_near(out, expected, c.k[0] * c.k[1]));
}

TEST(LinalgAvgPool, MatchesReference) {
  const std::vector<AvgCase> cases = {
      {{1, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0}, false, true, 0},
      {{2, 2, 11, 9}, {3, 3}, {2, 2}, {1, 1}, false, true, 0},   // padding counted
      {{2, 2, 11, 9}, {3, 3}, {2, 2}, {1, 1}, false, false, 0},  // padding not counted
      {{1, 2, 10, 10}, {3, 3}, {2, 2}, {1, 1}, true, true, 0},   // ceil_mode
      {{1, 2, 10, 10}, {3, 3}, {2, 2}, {1, 1}, true, false, 0},
      {{3, 7, 6}, {2, 3}, {1, 2}, {1, 1}, false, true, 5},       // divisor_override, 3-D
      {{1, 32, 28, 28}, {3, 3}, {1, 1}, {1, 1}, false, false, 0},
  };
  uint32_t seed = 40;
  for (const AvgCase& c : cases) run_avg(c, seed++);
}

TEST(LinalgAvgPool, RejectsZeroDivisorOverride) {
  auto x = make({1, 1, 4, 4}, 1);
  Tensor out({1, 1, 2, 2});
  IntList k({2, 2}), s({2, 2}), p({0, 0});
  et_value f = bool_value(false), t = bool_value(true), zero = scalar(0);
  EXPECT_THAT(call("aten::avg_pool2d.out", {&x->v, &k.v, &s.v, &p.v, &f, &t, &zero, &out.v}),
              HasSubstr("divisor_override must not be zero"));
}

TEST(LinalgAvgPool, RejectsWrongDtype) {
  auto x = make({1, 1, 4, 4}, 1);
  x->t.dtype = ET_DTYPE_INT32;  // (float16 is computed in float32: half_kernels_test)
  Tensor out({1, 1, 2, 2});
  IntList k({2, 2}), s({2, 2}), p({0, 0});
  et_value f = bool_value(false), t = bool_value(true), none = null_value();
  EXPECT_THAT(call("aten::avg_pool2d.out", {&x->v, &k.v, &s.v, &p.v, &f, &t, &none, &out.v}),
              HasSubstr("self has dtype int32, which is not supported"));
}

TEST(LinalgAvgPool, RejectsKernelSizeListOfTheWrongLength) {
  auto x = make({1, 1, 4, 4}, 1);
  Tensor out({1, 1, 2, 2});
  IntList k({2, 2, 2}), s({2, 2}), p({0, 0});
  et_value f = bool_value(false), t = bool_value(true), none = null_value();
  EXPECT_THAT(call("aten::avg_pool2d.out", {&x->v, &k.v, &s.v, &p.v, &f, &t, &none, &out.v}),
              HasSubstr("kernel_size [2, 2, 2] must have 1 or 2 values"));
}

TEST(LinalgAvgPool, RejectsStaticOutputOfTheWrongShape) {
  auto x = make({1, 1, 4, 4}, 1);
  Tensor out({1, 1, 3, 3});
  IntList k({2, 2}), s({2, 2}), p({0, 0});
  et_value f = bool_value(false), t = bool_value(true), none = null_value();
  EXPECT_THAT(call("aten::avg_pool2d.out", {&x->v, &k.v, &s.v, &p.v, &f, &t, &none, &out.v}),
              HasSubstr("out has the static shape [1, 1, 3, 3], the result has shape [1, 1, 2, 2]"));
}

// -------------------------------------------------- _adaptive_avg_pool2d
TEST(LinalgAdaptiveAvgPool, MatchesReference) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t oh, ow;
  };
  const std::vector<Case> cases = {{{1, 8, 7, 7}, 1, 1},   {{2, 3, 10, 7}, 3, 4}, {{4, 5, 5}, 7, 7},
                                   {{1, 2, 13, 17}, 5, 6}, {{1, 64, 14, 14}, 2, 2}, {{0, 3, 4, 4}, 2, 2}};
  uint32_t seed = 70;
  for (const Case& c : cases) {
    const size_t r = c.shape.size();
    const int64_t H = c.shape[r - 2], W = c.shape[r - 1];
    auto x = make(c.shape, seed++);
    std::vector<int64_t> oshape = c.shape;
    oshape[r - 2] = c.oh, oshape[r - 1] = c.ow;
    Tensor out(oshape);
    IntList size({c.oh, c.ow});
    ASSERT_EQ(call("aten::_adaptive_avg_pool2d.out", {&x->v, &size.v, &out.v}), "");
    int64_t planes = 1;
    for (size_t i = 0; i + 2 < r; ++i) planes *= c.shape[i];
    std::vector<double> expected;
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t oh = 0; oh < c.oh; ++oh)
        for (int64_t ow = 0; ow < c.ow; ++ow) {
          const int64_t h0 = static_cast<int64_t>(std::floor(static_cast<double>(oh * H) / c.oh));
          const int64_t h1 = static_cast<int64_t>(std::ceil(static_cast<double>((oh + 1) * H) / c.oh));
          const int64_t w0 = static_cast<int64_t>(std::floor(static_cast<double>(ow * W) / c.ow));
          const int64_t w1 = static_cast<int64_t>(std::ceil(static_cast<double>((ow + 1) * W) / c.ow));
          double sum = 0.0;
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) sum += x->data[static_cast<size_t>(pl * H * W + ih * W + iw)];
          expected.push_back(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
        }
    EXPECT_TRUE(all_near(out, expected, H * W)) << "case " << seed;
  }
}

TEST(LinalgAdaptiveAvgPool, RejectsEmptySpatialInput) {
  auto x = make({1, 3, 0, 4}, 1);
  Tensor out({1, 3, 2, 2});
  IntList size({2, 2});
  EXPECT_THAT(call("aten::_adaptive_avg_pool2d.out", {&x->v, &size.v, &out.v}),
              HasSubstr("must be non-empty in every dimension but the batch"));
}

TEST(LinalgAdaptiveAvgPool, RejectsWrongArgumentCount) {
  auto x = make({1, 3, 4, 4}, 1);
  IntList size({2, 2});
  EXPECT_THAT(call("aten::_adaptive_avg_pool2d.out", {&x->v, &size.v}), HasSubstr("expected 4 arguments, got 3"));
}

TEST(LinalgAdaptiveAvgPool, RejectsOutputSizeThatIsNotAList) {
  auto x = make({1, 3, 4, 4}, 1);
  Tensor out({1, 3, 2, 2});
  et_value two = scalar(2);
  EXPECT_THAT(call("aten::_adaptive_avg_pool2d.out", {&x->v, &two, &out.v}),
              HasSubstr("aten::_adaptive_avg_pool2d.out: argument 1 'output_size' must be an int list, got int"));
}

}  // namespace
