// FullyConnected nodes Debian's 2022 XNNPACK cannot run, in plugin code (AVX2 where the CPU has it).
// Dynamically quantized activations, as ExecuTorch's LLM export emits them: the float input is quantized per
// row to int8 (asymmetric, the scale and zero point from the row's range at run time), multiplied in
// integers with int8 or 4-bit per-channel, or 4-bit group-wise weights, scaled back to float. Static per-channel:
// qint8 in and out with qcint8 weights and qcint32 bias.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph.h"
#include "plugin_ops.h"

namespace etrt::xnn {

// One node's weights, unpacked once at init.
struct DynamicWeights {
  uint32_t output = kNone;        // the node's output value (the key)
  size_t out_features = 0, in_features = 0;
  size_t row_stride = 0;          // in_features rounded up to 16 (zero weights in the padding)
  size_t group_size = 0, groups = 1;
  std::vector<int8_t> weights;    // [out, row_stride]
  std::vector<float> scales;      // [out, groups]
  std::vector<int32_t> sums;      // [out, groups]: sum of each group's weights (the zero point's share)
  std::vector<float> scaled_sums; // [out]: sum over groups of sums * scales
  std::vector<float> bias;        // [out], zeros without a bias (dynamic)
  // Static per-channel (QuantizedFullyConnected): int32 bias, requantization scale per output channel.
  std::vector<int32_t> bias_int;  // [out]
  std::vector<float> requant;     // [out]: input scale * weight scale / output scale
  int32_t input_zero_point = 0, output_zero_point = 0;
  int32_t output_min = -128, output_max = 127;  // the fused range, quantized
};

struct PreparedWeights {
  std::vector<DynamicWeights> linear;
  const DynamicWeights* find(uint32_t output) const;
};

// Unpacks the weights of every DynamicFullyConnected node ("" or what is wrong).
std::string prepare_plugin_weights(const Graph& graph, PreparedWeights* prepared);

// Per-row asymmetric int8 quantization as torch's per-token dynamic quantization computes it.
struct RowQuantization {
  float scale = 1.0f;
  int32_t zero_point = 0;
};
RowQuantization quantize_row(const float* x, size_t count, int8_t* q);

// Sum of a[k] * b[k] over `count` int8 pairs (AVX2 when available).
int32_t dot_int8(const int8_t* a, const int8_t* b, size_t count);

// qint8 input and output, qcint8 weights, qcint32 bias: integer products, fp32 requantization rounded to
// nearest-even (XNNPACK's fp32 requantization).
std::string run_quantized_fully_connected(const PreparedWeights& prepared, const Node& node, const OperandView& input,
                                          int8_t* output, const Shape& output_shape, const Parallel& parallel);

std::string run_dynamic_fully_connected(const PreparedWeights& prepared, const Node& node, const OperandView& input,
                                        float* output, const Shape& output_shape, const Parallel& parallel);

}  // namespace etrt::xnn
