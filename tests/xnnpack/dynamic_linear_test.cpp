// The plugin's quantized FullyConnected kernels (plugins/xnnpack/dynamic_linear.cpp): the int8 dot product
// (AVX2 where available) against a plain loop, per-row dynamic quantization, and both FullyConnected forms
// against straightforward reference arithmetic.
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "dynamic_linear.h"

using namespace etrt::xnn;

namespace {

std::vector<int8_t> random_int8(std::mt19937& rng, size_t n, int lo = -128, int hi = 127) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

TEST(XnnpackQuantizedKernels, DotProductMatchesPlainLoopForEveryLength) {
  std::mt19937 rng(7);
  for (size_t n = 0; n < 100; ++n) {
    std::vector<int8_t> a = random_int8(rng, n), b = random_int8(rng, n);
    int32_t want = 0;
    for (size_t k = 0; k < n; ++k) want += a[k] * b[k];
    EXPECT_EQ(dot_int8(a.data(), b.data(), n), want) << n;
  }
  std::vector<int8_t> extreme(4096, -128);  // the largest magnitudes must not saturate
  EXPECT_EQ(dot_int8(extreme.data(), extreme.data(), extreme.size()), 4096 * 128 * 128);
}

TEST(XnnpackQuantizedKernels, RowQuantizationKeepsZeroExactAndErrorsWithinHalfAStep) {
  std::vector<float> x = {-1.5f, 0.0f, 0.25f, 2.0f, 0.7f};
  std::vector<int8_t> q(x.size());
  RowQuantization p = quantize_row(x.data(), x.size(), q.data());
  EXPECT_NEAR(p.scale, 3.5f / 255.0f, 1e-7f);
  EXPECT_EQ(q[1], p.zero_point);
  for (size_t k = 0; k < x.size(); ++k)
    EXPECT_LE(std::fabs((q[k] - p.zero_point) * p.scale - x[k]), p.scale * 0.5f + 1e-6f) << k;
  std::vector<float> zeros(8, 0.0f);
  std::vector<int8_t> qz(8);
  RowQuantization pz = quantize_row(zeros.data(), zeros.size(), qz.data());
  EXPECT_GT(pz.scale, 0.0f);
  for (int8_t v : qz) EXPECT_EQ(v, pz.zero_point);
}

TEST(XnnpackQuantizedKernels, VectorisedRowQuantizationRoundsHalfToEvenLikeTheScalarLoop) {
  // 255 / 2.55 = 100 steps per unit: x = k / 200 lands on half steps, where round-half-to-even decides.
  std::vector<float> x(203);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int>(k) - 100) / 200.0f * 2.55f;
  x[0] = -1.275f, x[1] = 1.275f;
  std::vector<int8_t> q(x.size());
  RowQuantization p = quantize_row(x.data(), x.size(), q.data());
  float inverse = 1.0f / p.scale;
  for (size_t k = 0; k < x.size(); ++k) {
    float v = std::nearbyint(x[k] * inverse + static_cast<float>(p.zero_point));
    EXPECT_EQ(q[k], static_cast<int8_t>(std::min(std::max(v, -128.0f), 127.0f))) << k;
  }
}

// A graph of one FullyConnected node: input 0, weights 1, bias 2, output 3.
Graph one_linear(Op op, size_t rows, size_t in, size_t out) {
  Graph g;
  g.values.resize(4);
  g.values[0].dims = {rows, in};
  g.values[1].dims = {out, in};
  g.values[2].dims = {out};
  g.values[3].dims = {rows, out};
  Node n;
  n.op = op;
  n.inputs = {0, 1, 2};
  n.output = 3;
  g.nodes.push_back(n);
  return g;
}

// Group sizes that are and are not a multiple of the 16-wide AVX2 step (vector and scalar paths); 0 stands
// for per-channel 4-bit weights (qcint4: one scale per output channel, no group size in the value).
class FourBit : public ::testing::TestWithParam<size_t> {};

TEST_P(FourBit, GroupWiseLinearMatchesReference) {
  const bool per_channel = GetParam() == 0;
  const size_t rows = 3, in = 96, out = 5, group = per_channel ? in : GetParam(), groups = in / group;
  std::mt19937 rng(11);
  Graph g = one_linear(Op::DynamicFullyConnected, rows, in, out);
  std::vector<int8_t> w = random_int8(rng, out * in, -8, 7);
  std::vector<uint8_t> packed(out * in / 2);
  for (size_t i = 0; i < w.size(); ++i) packed[i / 2] |= static_cast<uint8_t>((w[i] + 8) << (4 * (i % 2)));
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::vector<float> scales(out * groups), bias(out), x(rows * in), y(rows * out);
  for (float& s : scales) s = 0.01f + std::fabs(real(rng)) * 0.1f;
  for (float& b : bias) b = real(rng);
  for (float& v : x) v = real(rng) * 3.0f;
  g.values[1].dtype = per_channel ? DType::qcint4 : DType::qbint4;
  g.values[1].data = packed.data();
  g.values[1].scales = scales;
  if (!per_channel) g.values[1].group_size = group;
  g.values[2].data = bias.data();
  PreparedWeights prepared;
  ASSERT_EQ(prepare_plugin_weights(g, &prepared), "");
  Shape out_shape = {rows, out};
  Parallel serial(nullptr, nullptr);
  ASSERT_EQ(run_dynamic_fully_connected(prepared, g.nodes[0], OperandView{x.data(), &g.values[0].dims}, y.data(),
                                        out_shape, serial),
            "");
  for (size_t r = 0; r < rows; ++r) {
    std::vector<int8_t> q(in);
    RowQuantization p = quantize_row(x.data() + r * in, in, q.data());
    for (size_t o = 0; o < out; ++o) {
      double exact = 0.0, real_valued = 0.0, bound = 0.0;
      for (size_t k = 0; k < in; ++k) {
        double wk = w[o * in + k] * static_cast<double>(scales[o * groups + k / group]);
        exact += (q[k] - p.zero_point) * static_cast<double>(p.scale) * wk;
        real_valued += x[r * in + k] * wk;
        bound += std::fabs(wk) * p.scale * 0.5;
      }
      EXPECT_NEAR(y[r * out + o], exact + bias[o], 1e-4) << r << "," << o;
      EXPECT_NEAR(y[r * out + o], real_valued + bias[o], bound + 1e-4) << r << "," << o;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(XnnpackQuantizedKernels, FourBit, ::testing::Values(8, 32, 96, 0));

TEST(XnnpackQuantizedKernels, PerChannelStaticLinearRequantizes) {
  const size_t rows = 2, in = 37, out = 6;
  std::mt19937 rng(5);
  Graph g = one_linear(Op::QuantizedFullyConnected, rows, in, out);
  std::vector<int8_t> w = random_int8(rng, out * in), x = random_int8(rng, rows * in);
  std::vector<int32_t> bias(out);
  for (size_t o = 0; o < out; ++o) bias[o] = static_cast<int32_t>(o * 100) - 250;
  std::vector<float> scales = {0.01f, 0.02f, 0.005f, 0.03f, 0.001f, 0.015f};
  g.values[0].dtype = DType::qint8, g.values[0].scale = 0.05f, g.values[0].zero_point = 3;
  g.values[1].dtype = DType::qcint8, g.values[1].data = w.data(), g.values[1].scales = scales;
  g.values[2].dtype = DType::qcint32, g.values[2].data = bias.data();
  g.values[3].dtype = DType::qint8, g.values[3].scale = 0.4f, g.values[3].zero_point = -7;
  g.nodes[0].out_min = 0.0f;  // a fused ReLU: nothing below the zero point
  PreparedWeights prepared;
  ASSERT_EQ(prepare_plugin_weights(g, &prepared), "");
  std::vector<int8_t> y(rows * out);
  Shape out_shape = {rows, out};
  Parallel serial(nullptr, nullptr);
  ASSERT_EQ(run_quantized_fully_connected(prepared, g.nodes[0],
                                          OperandView{reinterpret_cast<const float*>(x.data()), &g.values[0].dims},
                                          y.data(), out_shape, serial),
            "");
  for (size_t r = 0; r < rows; ++r)
    for (size_t o = 0; o < out; ++o) {
      int32_t acc = bias[o];
      for (size_t k = 0; k < in; ++k) acc += (x[r * in + k] - 3) * w[o * in + k];
      float scale = 0.05f * scales[o] / 0.4f;
      float want = std::nearbyint(static_cast<float>(acc) * scale) - 7.0f;
      want = std::min(std::max(want, -7.0f), 127.0f);
      EXPECT_EQ(y[r * out + o], static_cast<int8_t>(want)) << r << "," << o;
    }
}

}  // namespace
