// The kernels_training plugin's kernels called as the executor calls them: results against the
// definitions written out here in double precision, outputs that start as garbage (planned memory is
// reused), and the named errors for bad arguments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernel_test_support.h"

namespace {

using etrt_test::run_kernel;
using etrt_test::Tensor;
using ::testing::HasSubstr;

// An int[] or bool[] value owning its items.
template <typename T, int32_t kTag>
struct List {
  std::vector<T> items;
  et_value v{};
  explicit List(std::vector<T> values) : items(std::move(values)) {
    v.struct_size = sizeof v;
    v.tag = kTag;
    v.items = items.data();
    v.count = items.size();
  }
};
using Ints = List<int64_t, ET_VALUE_INT_LIST>;
using Bools = List<uint8_t, ET_VALUE_BOOL_LIST>;

et_value boolean(bool b) {
  et_value v = etrt_test::scalar(b);
  v.tag = ET_VALUE_BOOL;
  return v;
}

// ------------------------------------------------------------------------------- convolution_backward

struct ConvCase {
  std::vector<int64_t> x, w;
  int64_t stride[2], padding[2], dilation[2], groups;
};

// Calls convolution_backward on dy, x, w with every output asked for; returns the error message.
std::string conv_backward(const ConvCase& c, Tensor& dy, Tensor& x, Tensor& w, Tensor& dx, Tensor& dw, Tensor& db,
                          bool transposed = false, std::vector<uint8_t> mask = {1, 1, 1}) {
  Ints bias_sizes({c.w[0]}), stride({c.stride[0], c.stride[1]}), padding({c.padding[0], c.padding[1]}),
      dilation({c.dilation[0], c.dilation[1]}), output_padding({0, 0});
  Bools output_mask(std::move(mask));
  et_value t = boolean(transposed), groups = etrt_test::scalar(c.groups);
  et_value outs{};
  outs.struct_size = sizeof outs;
  outs.tag = ET_VALUE_TENSOR_LIST;
  et_tensor* items[3] = {&dx.t, &dw.t, &db.t};
  outs.items = items;
  outs.count = 3;
  return run_kernel("aten::convolution_backward.out",
                    {&dy.v, &x.v, &w.v, &bias_sizes.v, &stride.v, &padding.v, &dilation.v, &t, &output_padding.v,
                     &groups, &output_mask.v, &dx.v, &dw.v, &db.v, &outs},
                    false);
}

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

TEST(ConvolutionBackward, MatchesTheDefinitionOverGarbageOutputs) {
  for (const ConvCase& c : {ConvCase{{2, 4, 9, 7}, {6, 2, 3, 2}, {2, 1}, {1, 1}, {1, 2}, 2},
                            ConvCase{{3, 3, 6, 6}, {5, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
                            ConvCase{{1, 4, 5, 5}, {4, 1, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 4}}) {
    const int64_t N = c.x[0], C = c.x[1], H = c.x[2], W = c.x[3], O = c.w[0], KH = c.w[2], KW = c.w[3];
    const int64_t OH = out_size(H, KH, c.stride[0], c.padding[0], c.dilation[0]);
    const int64_t OW = out_size(W, KW, c.stride[1], c.padding[1], c.dilation[1]);
    Tensor x(c.x), w(c.w), dy({N, O, OH, OW}), dx(c.x), dw(c.w), db({O});  // outputs hold random values
    ASSERT_EQ(conv_backward(c, dy, x, w, dx, dw, db), "");
    std::vector<double> ex(dx.data.size()), ew(dw.data.size()), eb(db.data.size());
    const int64_t cg = C / c.groups, og = O / c.groups;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            const double g = dy.at({n, o, oh, ow});
            eb[o] += g;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                  const int64_t ih = oh * c.stride[0] - c.padding[0] + kh * c.dilation[0];
                  const int64_t iw = ow * c.stride[1] - c.padding[1] + kw * c.dilation[1];
                  if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                  const int64_t channel = o / og * cg + ci;
                  ew[((o * cg + ci) * KH + kh) * KW + kw] += g * x.at({n, channel, ih, iw});
                  ex[((n * C + channel) * H + ih) * W + iw] += g * w.at({o, ci, kh, kw});
                }
          }
    for (auto [got, want, name] : {std::tuple{&dx.data, &ex, "grad_input"}, std::tuple{&dw.data, &ew, "grad_weight"},
                                   std::tuple{&db.data, &eb, "grad_bias"}})
      for (size_t i = 0; i < want->size(); ++i)
        ASSERT_NEAR((*got)[i], (*want)[i], 1e-4 * (1 + std::abs((*want)[i]))) << name << " element " << i;
  }
}

TEST(ConvolutionBackward, NamedErrors) {
  const ConvCase c{{1, 2, 5, 5}, {3, 2, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1};
  Tensor x(c.x), w(c.w), dy({1, 3, 3, 3}), dx(c.x), dw(c.w), db({3});
  EXPECT_THAT(conv_backward(c, dy, x, w, dx, dw, db, true), HasSubstr("transposed convolutions are not supported"));
  EXPECT_THAT(conv_backward(c, dy, x, w, dx, dw, db, false, {1, 1}), HasSubstr("output_mask must have 3 items"));
  Tensor wrong_dy({1, 3, 4, 3});
  EXPECT_THAT(conv_backward(c, wrong_dy, x, w, dx, dw, db), HasSubstr("grad_output has the shape [1, 3, 4, 3]"));
  Tensor small_dw({3, 2, 2, 2});
  EXPECT_THAT(conv_backward(c, dy, x, w, dx, small_dw, db), HasSubstr("out1 (grad_weight) has the shape"));
  ConvCase groups = c;
  groups.groups = 3;
  EXPECT_THAT(conv_backward(groups, dy, x, w, dx, dw, db), HasSubstr("does not fit input"));
  x.t.dtype = ET_DTYPE_FLOAT16;
  EXPECT_THAT(conv_backward(c, dy, x, w, dx, dw, db), HasSubstr("input must be float32 or float64, got"));
  x.t.dtype = ET_DTYPE_FLOAT32;
  EXPECT_EQ(conv_backward(c, dy, x, w, dx, dw, db), "");  // the same arguments, right, still work
}

// -------------------------------------------------------------------- max_pool2d_with_indices_backward

std::string pool_backward(Tensor& dy, Tensor& x, Tensor& indices, Tensor& dx, std::vector<int64_t> kernel,
                          std::vector<int64_t> stride) {
  Ints k(std::move(kernel)), s(std::move(stride)), p({0, 0}), d({1, 1});
  et_value ceil = boolean(false);
  return run_kernel("aten::max_pool2d_with_indices_backward.grad_input",
                    {&dy.v, &x.v, &k.v, &s.v, &p.v, &d.v, &ceil, &indices.v, &dx.v});
}

// Makes `t` an int64 tensor of `values` (stored in its float vector, two floats per item).
void fill_int64(Tensor& t, const std::vector<int64_t>& values) {
  t.data.assign(values.size() * 2, 0);
  std::memcpy(t.data.data(), values.data(), values.size() * sizeof(int64_t));
  t.t.data = t.data.data();
  t.t.dtype = ET_DTYPE_INT64;
  t.t.nbytes = t.t.capacity_bytes = values.size() * sizeof(int64_t);
}

TEST(MaxPool2dBackward, OverlappingWindowsAddOverGarbage) {
  // 3x3 windows, stride 1, on a 4x4 plane: four outputs, two of them chose the same input element.
  Tensor x({1, 1, 4, 4}), dy({1, 1, 2, 2}), dx({1, 1, 4, 4});  // dx holds random values first
  Tensor indices({1, 1, 2, 2});
  fill_int64(indices, {5, 5, 10, 15});
  ASSERT_EQ(pool_backward(dy, x, indices, dx, {3, 3}, {1, 1}), "");
  std::vector<float> expected(16, 0.0f);
  expected[5] = dy.data[0] + dy.data[1];
  expected[10] = dy.data[2];
  expected[15] = dy.data[3];
  EXPECT_EQ(dx.data, expected);
}

TEST(MaxPool2dBackward, NamedErrors) {
  Tensor x({1, 1, 4, 4}), dy({1, 1, 2, 2}), dx({1, 1, 4, 4});
  Tensor outside({1, 1, 2, 2});
  fill_int64(outside, {0, 1, 16, 3});
  EXPECT_THAT(pool_backward(dy, x, outside, dx, {2, 2}, {2, 2}),
              HasSubstr("indices holds 16 in plane 0, outside the input plane of 16 elements"));
  Tensor indices({1, 1, 2, 2});
  fill_int64(indices, {0, 1, 2, 3});
  Tensor wrong_dy({1, 1, 3, 3});
  EXPECT_THAT(pool_backward(wrong_dy, x, indices, dx, {2, 2}, {2, 2}), HasSubstr("grad_output has the shape [1, 1, 3, 3]"));
  EXPECT_THAT(pool_backward(dy, x, indices, dx, {2, 2, 2}, {2, 2}), HasSubstr("kernel_size must have 1 or 2 items"));
  Tensor flat({16}), flat_dx({16});
  EXPECT_THAT(pool_backward(dy, flat, indices, flat_dx, {2, 2}, {2, 2}), HasSubstr("self must be 3-D"));
  EXPECT_EQ(pool_backward(dy, x, indices, dx, {2, 2}, {2, 2}), "");
}

}  // namespace
