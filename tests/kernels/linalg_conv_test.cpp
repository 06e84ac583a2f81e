// aten::convolution.out of the kernels_optimized plugin against a naive
// double-precision direct convolution: stride, padding, dilation, groups,
// depthwise (with and without a channel multiplier), 1x1, non-square kernels,
// 1-D, batches, sizes that exercise im2col chunking and the thread pool, no
// bias; and one test per rejection rule.
// Tolerance: see linalg_test::tolerance (1e-4 relative + 1e-5 * sqrt(K)
// absolute, K = Cin/groups * kh * kw terms per output).
#include <cstdint>
#include <limits>
#include <vector>

#include "linalg_test_support.h"

using ::testing::HasSubstr;

namespace {

using etrt_test::scalar;
using linalg_test::all_near;
using linalg_test::bool_value;
using linalg_test::call;
using linalg_test::IntList;
using linalg_test::make;
using linalg_test::null_value;
using linalg_test::Tensor;

struct Config {
  const char* name;
  int64_t N, Cin, H, W, Cout, kh, kw;
  int64_t sh, sw, ph, pw, dh, dw, groups;
  bool bias;
};

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

std::vector<double> reference(const Config& c, const Tensor& x, const Tensor& w, const Tensor* b) {
  const int64_t OH = out_size(c.H, c.kh, c.sh, c.ph, c.dh), OW = out_size(c.W, c.kw, c.sw, c.pw, c.dw);
  const int64_t cin_g = c.Cin / c.groups, cout_g = c.Cout / c.groups;
  std::vector<double> out;
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t co = 0; co < c.Cout; ++co)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = b ? b->data[static_cast<size_t>(co)] : 0.0;
          const int64_t g = co / cout_g;
          for (int64_t ci = 0; ci < cin_g; ++ci)
            for (int64_t ky = 0; ky < c.kh; ++ky)
              for (int64_t kx = 0; kx < c.kw; ++kx) {
                const int64_t ih = oh * c.sh - c.ph + ky * c.dh, iw = ow * c.sw - c.pw + kx * c.dw;
                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W) continue;
                const double xv = x.data[static_cast<size_t>(((n * c.Cin + g * cin_g + ci) * c.H + ih) * c.W + iw)];
                const double wv = w.data[static_cast<size_t>(((co * cin_g + ci) * c.kh + ky) * c.kw + kx)];
                s += xv * wv;
              }
          out.push_back(s);
        }
  return out;
}

void run_config(const Config& c, uint32_t seed) {
  SCOPED_TRACE(c.name);
  const int64_t OH = out_size(c.H, c.kh, c.sh, c.ph, c.dh), OW = out_size(c.W, c.kw, c.sw, c.pw, c.dw);
  auto x = make({c.N, c.Cin, c.H, c.W}, seed), w = make({c.Cout, c.Cin / c.groups, c.kh, c.kw}, seed + 1),
       b = make({c.Cout}, seed + 2);
  Tensor out({c.N, c.Cout, OH, OW});
  IntList stride({c.sh, c.sw}), padding({c.ph, c.pw}), dilation({c.dh, c.dw}), output_padding({0, 0});
  et_value none = null_value(), transposed = bool_value(false), groups = scalar(c.groups);
  ASSERT_EQ(call("aten::convolution.out", {&x->v, &w->v, c.bias ? &b->v : &none, &stride.v, &padding.v, &dilation.v,
                                           &transposed, &output_padding.v, &groups, &out.v}),
            "");
  EXPECT_TRUE(all_near(out, reference(c, *x, *w, c.bias ? b.get() : nullptr), c.Cin / c.groups * c.kh * c.kw));
}

TEST(LinalgConv, MatchesReferenceOverConfigurations) {
  const std::vector<Config> configs = {
      // name                       N  Cin  H   W  Cout kh kw sh sw ph pw dh dw  g  bias
      {"3x3 pad 1", 1, 3, 8, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},
      {"3x3 stride 2", 2, 4, 11, 13, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, true},
      {"3x3 dilation 2", 1, 5, 12, 10, 6, 3, 3, 1, 1, 2, 2, 2, 2, 1, true},
      {"groups 2", 2, 6, 9, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 2, true},
      {"groups 3 stride 2 no bias", 1, 9, 10, 7, 6, 3, 2, 2, 1, 0, 1, 1, 1, 3, false},
      {"depthwise 3x3", 1, 16, 17, 19, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16, true},
      {"depthwise 3x3 stride 2", 2, 8, 23, 37, 8, 3, 3, 2, 2, 1, 1, 1, 1, 8, true},
      {"depthwise 5x5 dilation 2", 1, 4, 20, 21, 4, 5, 5, 1, 1, 4, 4, 2, 2, 4, false},
      {"depthwise multiplier 2", 1, 3, 12, 12, 6, 3, 3, 1, 1, 1, 1, 1, 1, 3, true},
      {"depthwise stride 3 no pad", 1, 5, 16, 40, 5, 3, 3, 3, 3, 0, 0, 1, 1, 5, true},
      {"depthwise wide", 1, 32, 56, 56, 32, 3, 3, 1, 1, 1, 1, 1, 1, 32, true},
      {"depthwise 7x7 planes", 2, 8, 7, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8, true},
      {"depthwise narrow stride 2", 1, 6, 9, 9, 6, 3, 3, 2, 2, 1, 1, 1, 1, 6, false},
      {"depthwise 5x5 stride 2 pad 2", 1, 4, 33, 30, 4, 5, 5, 2, 2, 2, 2, 1, 1, 4, true},
      {"depthwise 4x4 stride 2 dilation 3", 1, 3, 40, 41, 3, 4, 4, 2, 2, 3, 3, 3, 3, 3, true},
      {"1x1", 1, 32, 14, 14, 64, 1, 1, 1, 1, 0, 0, 1, 1, 1, true},
      {"1x1 no bias odd", 2, 7, 5, 3, 9, 1, 1, 1, 1, 0, 0, 1, 1, 1, false},
      {"1x1 stride 2", 1, 8, 9, 9, 10, 1, 1, 2, 2, 0, 0, 1, 1, 1, true},
      {"1x1 padded", 1, 3, 4, 4, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, true},
      {"7x7 stride 2 stem", 1, 3, 32, 32, 16, 7, 7, 2, 2, 3, 3, 1, 1, 1, false},
      {"5x3 asymmetric", 1, 4, 15, 11, 5, 5, 3, 2, 1, 2, 0, 1, 2, 1, true},
      {"single input channel", 1, 1, 10, 10, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},
      {"kernel equals input", 1, 3, 5, 5, 4, 5, 5, 1, 1, 0, 0, 1, 1, 1, true},
      {"chunked im2col", 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},
      {"many groups (parallel over jobs)", 4, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 4, true},
      {"empty batch", 0, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},
  };
  uint32_t seed = 1000;
  for (const Config& c : configs) run_config(c, seed += 10);
}

TEST(LinalgConv, OneDimensionalConvolution) {
  // input [N, C, L], weight [Cout, Cin/g, k]; reference: the 2-D one with H = 1.
  for (int64_t groups : {1, 2}) {
    const Config c{"1-D", 2, 4, 1, 29, 6, 1, 3, 1, 2, 0, 1, 1, 2, groups, true};
    auto x = make({c.N, c.Cin, c.W}, 77), w = make({c.Cout, c.Cin / groups, c.kw}, 78), b = make({c.Cout}, 79);
    const int64_t OW = out_size(c.W, c.kw, c.sw, c.pw, c.dw);
    Tensor out({c.N, c.Cout, OW});
    IntList stride({2}), padding({1}), dilation({2}), output_padding({0});
    et_value transposed = bool_value(false), g = scalar(groups);
    ASSERT_EQ(call("aten::convolution.out", {&x->v, &w->v, &b->v, &stride.v, &padding.v, &dilation.v, &transposed,
                                             &output_padding.v, &g, &out.v}),
              "");
    EXPECT_TRUE(all_near(out, reference(c, *x, *w, b.get()), c.Cin / groups * c.kw));
  }
}

TEST(LinalgConv, DynamicOutputIsResized) {
  const Config c{"dynamic", 1, 3, 10, 10, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, true};
  auto x = make({1, 3, 10, 10}, 5), w = make({4, 3, 3, 3}, 6), b = make({4}, 7);
  auto out = linalg_test::dynamic_out({1, 4, 10, 10}, 400);
  IntList stride({2, 2}), padding({1, 1}), dilation({1, 1}), output_padding({0, 0});
  et_value transposed = bool_value(false), g = scalar(1);
  ASSERT_EQ(call("aten::convolution.out", {&x->v, &w->v, &b->v, &stride.v, &padding.v, &dilation.v, &transposed,
                                           &output_padding.v, &g, &out->v}),
            "");
  EXPECT_EQ(out->sizes, (std::vector<int64_t>{1, 4, 5, 5}));
  EXPECT_TRUE(all_near(*out, reference(c, *x, *w, b.get()), 27));
}

// The arguments of a valid 3x3 convolution of [1, 4, 8, 8] by [6, 4, 3, 3]; tests break one thing each.
struct ConvArgs {
  std::unique_ptr<Tensor> x = make({1, 4, 8, 8}, 1), w = make({6, 4, 3, 3}, 2), b = make({6}, 3);
  Tensor out{{1, 6, 8, 8}};
  IntList stride{{1, 1}}, padding{{1, 1}}, dilation{{1, 1}}, output_padding{{0, 0}};
  et_value transposed = bool_value(false), groups = scalar(1);
  std::string run() {
    return call("aten::convolution.out", {&x->v, &w->v, &b->v, &stride.v, &padding.v, &dilation.v, &transposed,
                                          &output_padding.v, &groups, &out.v});
  }
};

TEST(LinalgConv, ValidBaselineOfTheRejectionTests) {
  ConvArgs a;
  EXPECT_EQ(a.run(), "");
}

TEST(LinalgConv, RejectsTransposedConvolution) {
  ConvArgs a;
  a.transposed = bool_value(true);
  EXPECT_THAT(a.run(), HasSubstr("transposed convolution is not supported"));
}

TEST(LinalgConv, RejectsWrongArgumentCount) {
  ConvArgs a;
  EXPECT_THAT(call("aten::convolution.out", {&a.x->v, &a.w->v, &a.b->v, &a.out.v}),
              HasSubstr("expected 11 arguments, got 5"));
}

TEST(LinalgConv, RejectsWrongDtype) {
  ConvArgs a;
  a.w->t.dtype = ET_DTYPE_FLOAT64;
  EXPECT_THAT(a.run(), HasSubstr("weight has dtype float64, which is not supported"));
}

TEST(LinalgConv, RejectsChannelMismatch) {
  ConvArgs a;
  a.w = make({6, 3, 3, 3}, 2);
  EXPECT_THAT(a.run(), HasSubstr("weight [6, 3, 3, 3] expects 3 input channels, input [1, 4, 8, 8] has 4"));
}

TEST(LinalgConv, RejectsGroupsThatDoNotDivideTheChannels) {
  ConvArgs a;
  a.groups = scalar(3);
  EXPECT_THAT(a.run(), HasSubstr("must both be divisible by groups 3"));
}

TEST(LinalgConv, RejectsBiasOfTheWrongShape) {
  ConvArgs a;
  a.b = make({5}, 3);
  EXPECT_THAT(a.run(), HasSubstr("bias [5] must have shape [6]"));
}

TEST(LinalgConv, RejectsKernelLargerThanThePaddedInput) {
  ConvArgs a;
  a.w = make({6, 4, 11, 3}, 2);
  EXPECT_THAT(a.run(), HasSubstr("is larger than the padded input [1, 4, 8, 8]"));
}

TEST(LinalgConv, RejectsChannelsLastInput) {
  ConvArgs a;
  linalg_test::make_channels_last(*a.x);
  EXPECT_THAT(a.run(), HasSubstr("input has dim order (0, 2, 3, 1), only the default contiguous order is supported"));
}

TEST(LinalgConv, RejectsStrideListOfTheWrongLength) {
  ConvArgs a;
  IntList stride({1, 1, 1});
  a.stride.items = stride.items;
  a.stride.v.items = a.stride.items.data();
  a.stride.v.count = 3;
  EXPECT_THAT(a.run(), HasSubstr("stride [1, 1, 1] must have 1 or 2 values"));
}

TEST(LinalgConv, RejectsZeroStride) {
  ConvArgs a;
  a.stride.items = {0, 1};
  EXPECT_THAT(a.run(), HasSubstr("stride [0, 1] must be between 1 and 16777216"));
}

// A corrupt program's window parameters must not overflow the shape arithmetic.
TEST(LinalgConv, RejectsAbsurdDilationAndPadding) {
  ConvArgs a;
  a.dilation.items = {int64_t{1} << 62, 1};
  EXPECT_THAT(a.run(), HasSubstr("dilation [4611686018427387904, 1] must be between 1 and 16777216"));
  ConvArgs b;
  b.padding.items = {1, std::numeric_limits<int64_t>::max()};
  EXPECT_THAT(b.run(), HasSubstr("padding [1, 9223372036854775807] must be between 0 and 16777216"));
}

TEST(LinalgConv, RejectsStaticOutputOfTheWrongShape) {
  ConvArgs a;
  a.padding.items = {0, 0};  // the result would be [1, 6, 6, 6]
  EXPECT_THAT(a.run(), HasSubstr("out has the static shape [1, 6, 8, 8], the result has shape [1, 6, 6, 6]"));
}

TEST(LinalgConv, RejectsUnsupportedRank) {
  ConvArgs a;
  a.x = make({1, 4, 8, 8, 2}, 1);
  EXPECT_THAT(a.run(), HasSubstr("must be 3-D (N, C, L) or 4-D (N, C, H, W)"));
}

}  // namespace
