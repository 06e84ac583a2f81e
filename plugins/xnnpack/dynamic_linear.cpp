#include "dynamic_linear.h"

#include "cpu_features.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace etrt::xnn {
namespace {

constexpr size_t kLane = 16;  // int8 elements per AVX2 multiply-add step

size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

int32_t dot_int8_scalar(const int8_t* a, const int8_t* b, size_t count) {
  int32_t sum = 0;
  for (size_t k = 0; k < count; ++k) sum += int32_t{a[k]} * int32_t{b[k]};
  return sum;
}

#if defined(__x86_64__)
// Sign-extends 16 int8 of each side to int16 and multiply-adds pairs into int32 lanes (no saturation: each
// pair sum is at most 2 * 128 * 128).
__attribute__((target("avx2"))) int32_t dot_int8_avx2(const int8_t* a, const int8_t* b, size_t count) {
  __m256i acc = _mm256_setzero_si256();
  size_t k = 0;
  for (; k + kLane <= count; k += kLane) {
    __m256i va = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k)));
    __m256i vb = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(va, vb));
  }
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, _MM_SHUFFLE(1, 0, 3, 2)));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(sum) + dot_int8_scalar(a + k, b + k, count - k);
}

// int16 activations (widened once per row) against int8 weights; count is a multiple of kLane.
__attribute__((target("avx2"))) int32_t dot_int16_int8_avx2(const int16_t* a, const int8_t* w, size_t count) {
  __m256i acc = _mm256_setzero_si256();
  for (size_t k = 0; k < count; k += kLane) {
    __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k));
    __m256i vw = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(va, vw));
  }
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, _MM_SHUFFLE(1, 0, 3, 2)));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(sum);
}

__attribute__((target("avx2"))) inline float horizontal_sum(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_shuffle_ps(sum, sum, 1));
  return _mm_cvtss_f32(sum);
}

// Sum over groups of scale[g] * (integer dot product of group g), the scaling kept in eight float lanes;
// the group size is a multiple of kLane.
__attribute__((target("avx2,fma"))) float grouped_dot_avx2(const int16_t* a, const int8_t* w, size_t groups,
                                                             size_t group_size, const float* scales) {
  __m256 total = _mm256_setzero_ps();
  for (size_t g = 0; g < groups; ++g) {
    __m256i acc = _mm256_setzero_si256();
    for (size_t k = g * group_size, end = k + group_size; k < end; k += kLane) {
      __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k));
      __m256i vw = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + k)));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(va, vw));
    }
    total = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_set1_ps(scales[g]), total);
  }
  return horizontal_sum(total);
}

// grouped_dot_avx2 for four consecutive output channels (weight rows `stride` apart, scales `groups` apart):
// each activation load serves four rows.
__attribute__((target("avx2,fma"))) void grouped_dot4_avx2(const int16_t* a, const int8_t* w, size_t stride,
                                                           size_t groups, size_t group_size, const float* scales,
                                                           float* out) {
  __m256 t0 = _mm256_setzero_ps(), t1 = t0, t2 = t0, t3 = t0;
  // (no lambda: it would not inherit the function's target)
#define ETRT_WEIGHT_ROW(r, k) \
  _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + (r) * stride + (k))))
  for (size_t g = 0; g < groups; ++g) {
    __m256i i0 = _mm256_setzero_si256(), i1 = i0, i2 = i0, i3 = i0;
    for (size_t k = g * group_size, end = k + group_size; k < end; k += kLane) {
      __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k));
      i0 = _mm256_add_epi32(i0, _mm256_madd_epi16(va, ETRT_WEIGHT_ROW(0, k)));
      i1 = _mm256_add_epi32(i1, _mm256_madd_epi16(va, ETRT_WEIGHT_ROW(1, k)));
      i2 = _mm256_add_epi32(i2, _mm256_madd_epi16(va, ETRT_WEIGHT_ROW(2, k)));
      i3 = _mm256_add_epi32(i3, _mm256_madd_epi16(va, ETRT_WEIGHT_ROW(3, k)));
    }
    t0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i0), _mm256_set1_ps(scales[g]), t0);
    t1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1), _mm256_set1_ps(scales[groups + g]), t1);
    t2 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i2), _mm256_set1_ps(scales[2 * groups + g]), t2);
    t3 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i3), _mm256_set1_ps(scales[3 * groups + g]), t3);
  }
#undef ETRT_WEIGHT_ROW
  out[0] = horizontal_sum(t0), out[1] = horizontal_sum(t1), out[2] = horizontal_sum(t2), out[3] = horizontal_sum(t3);
}

// x * inverse + zero, rounded half to even and clamped to int8 (the scalar loop's arithmetic, 8 at a time).
__attribute__((target("avx2"))) size_t quantize_avx2(const float* x, size_t count, float inverse, float zero,
                                                     int8_t* q) {
  const __m256 vi = _mm256_set1_ps(inverse), vz = _mm256_set1_ps(zero);
  const __m256 lo = _mm256_set1_ps(-128.0f), hi = _mm256_set1_ps(127.0f);
  size_t k = 0;
  for (; k + 8 <= count; k += 8) {
    __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x + k), vi), vz);
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256i i = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
    __m128i s16 = _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + k), _mm_packs_epi16(s16, s16));
  }
  return k;
}

__attribute__((target("avx2"))) void range_avx2(const float* x, size_t count, float* lo, float* hi) {
  __m256 vlo = _mm256_setzero_ps(), vhi = _mm256_setzero_ps();
  size_t k = 0;
  for (; k + 8 <= count; k += 8) {
    __m256 v = _mm256_loadu_ps(x + k);
    vlo = _mm256_min_ps(vlo, v);
    vhi = _mm256_max_ps(vhi, v);
  }
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, vlo);
  _mm256_store_ps(h, vhi);
  for (int i = 0; i < 8; ++i) *lo = std::min(*lo, l[i]), *hi = std::max(*hi, h[i]);
  for (; k < count; ++k) *lo = std::min(*lo, x[k]), *hi = std::max(*hi, x[k]);
}

#endif

int32_t dot_int16_int8(const int16_t* a, const int8_t* w, size_t count) {
#if defined(__x86_64__)
  if (cpu::has_avx2_fma()) return dot_int16_int8_avx2(a, w, count);
#endif
  int32_t sum = 0;
  for (size_t k = 0; k < count; ++k) sum += int32_t{a[k]} * int32_t{w[k]};
  return sum;
}

float grouped_dot(const int16_t* a, const int8_t* w, size_t groups, size_t group_size, const float* scales) {
#if defined(__x86_64__)
  if (cpu::has_avx2_fma() && group_size % kLane == 0) return grouped_dot_avx2(a, w, groups, group_size, scales);
#endif
  float total = 0.0f;
  for (size_t g = 0; g < groups; ++g) {
    int32_t sum = 0;
    for (size_t k = g * group_size; k < (g + 1) * group_size; ++k) sum += int32_t{a[k]} * int32_t{w[k]};
    total += static_cast<float>(sum) * scales[g];
  }
  return total;
}

std::string prepare_one(const Graph& graph, const Node& n, DynamicWeights* out) {
  const Value& w = graph.values[n.inputs[1]];
  out->output = n.output;
  out->out_features = w.dims[0];
  out->in_features = w.dims[1];
  out->row_stride = round_up(out->in_features, kLane);
  out->group_size = w.dtype == DType::qbint4 ? w.group_size : out->in_features;
  out->groups = out->in_features / out->group_size;
  size_t rows = out->out_features, cols = out->in_features;
  out->weights.assign(rows * out->row_stride, 0);
  const auto* bytes = static_cast<const uint8_t*>(w.data);
  for (size_t r = 0; r < rows; ++r) {
    int8_t* dst = out->weights.data() + r * out->row_stride;
    if (w.dtype == DType::qcint8) {
      std::memcpy(dst, bytes + r * cols, cols);
    } else {  // two 4-bit values a byte, low nibble first, stored as value + 8
      const uint8_t* src = bytes + r * ((cols + 1) / 2);
      for (size_t k = 0; k < cols; ++k)
        dst[k] = static_cast<int8_t>(static_cast<int>((src[k / 2] >> (4 * (k % 2))) & 15) - 8);
    }
  }
  out->scales = w.scales;  // one per output channel (qcint8, qcint4) or [out, groups] (qbint4)
  if (out->scales.size() != rows * out->groups) return "weights have " + std::to_string(out->scales.size()) + " scales";
  out->sums.assign(rows * out->groups, 0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < cols; ++k)
      out->sums[r * out->groups + k / out->group_size] += out->weights[r * out->row_stride + k];
  out->scaled_sums.assign(rows, 0.0f);
  for (size_t r = 0; r < rows; ++r)
    for (size_t g = 0; g < out->groups; ++g)
      out->scaled_sums[r] += static_cast<float>(out->sums[r * out->groups + g]) * out->scales[r * out->groups + g];
  out->bias.assign(rows, 0.0f);
  if (n.op == Op::QuantizedFullyConnected) {
    const Value& x = graph.values[n.inputs[0]];
    const Value& y = graph.values[n.output];
    out->bias_int.assign(rows, 0);
    if (n.inputs[2] != kNone) std::memcpy(out->bias_int.data(), graph.values[n.inputs[2]].data, rows * 4);
    out->requant.resize(rows);
    for (size_t r = 0; r < rows; ++r) out->requant[r] = x.scale * out->scales[r] / y.scale;
    out->input_zero_point = x.zero_point;
    out->output_zero_point = y.zero_point;
    auto quantize = [&](float v) {
      double q = std::nearbyint(static_cast<double>(v) / y.scale) + y.zero_point;
      return static_cast<int32_t>(std::min(127.0, std::max(-128.0, q)));
    };
    if (n.out_min > -std::numeric_limits<float>::infinity()) out->output_min = quantize(n.out_min);
    if (n.out_max < std::numeric_limits<float>::infinity()) out->output_max = quantize(n.out_max);
    return "";
  }
  if (n.inputs.size() > 2 && n.inputs[2] != kNone) {
    const Value& b = graph.values[n.inputs[2]];
    if (!b.is_constant() || numel(b.dims) != rows)
      return "bias must be a constant of " + std::to_string(rows) + " values";
    std::memcpy(out->bias.data(), b.data, rows * sizeof(float));
  }
  return "";
}

}  // namespace

int32_t dot_int8(const int8_t* a, const int8_t* b, size_t count) {
#if defined(__x86_64__)
  if (cpu::has_avx2_fma()) return dot_int8_avx2(a, b, count);
#endif
  return dot_int8_scalar(a, b, count);
}

RowQuantization quantize_row(const float* x, size_t count, int8_t* q) {
  float lo = 0.0f, hi = 0.0f;  // the range always holds 0, so 0 is exact
#if defined(__x86_64__)
  if (cpu::has_avx2_fma()) {
    range_avx2(x, count, &lo, &hi);
  } else
#endif
  {
    for (size_t k = 0; k < count; ++k) {
      lo = std::min(lo, x[k]);
      hi = std::max(hi, x[k]);
    }
  }
  RowQuantization p;
  p.scale = std::max((hi - lo) / 255.0f, std::numeric_limits<float>::epsilon());
  // The zero point whose rounding error is smaller, from the low or the high end (torch's choice).
  float from_min = -128.0f + lo / p.scale, from_max = 127.0f + hi / p.scale;
  float zero = from_min + from_max > 0.0f ? -128.0f - lo / p.scale : 127.0f - hi / p.scale;
  p.zero_point = static_cast<int32_t>(std::nearbyint(std::min(std::max(zero, -128.0f), 127.0f)));
  float inverse = 1.0f / p.scale;
  size_t k = 0;
#if defined(__x86_64__)
  if (cpu::has_avx2_fma()) k = quantize_avx2(x, count, inverse, static_cast<float>(p.zero_point), q);
#endif
  for (; k < count; ++k) {
    float v = std::nearbyint(x[k] * inverse + static_cast<float>(p.zero_point));
    q[k] = static_cast<int8_t>(std::min(std::max(v, -128.0f), 127.0f));
  }
  return p;
}

const DynamicWeights* PreparedWeights::find(uint32_t output) const {
  for (const DynamicWeights& w : linear)
    if (w.output == output) return &w;
  return nullptr;
}

std::string prepare_plugin_weights(const Graph& graph, PreparedWeights* prepared) {
  prepared->linear.clear();
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    if (n.op != Op::DynamicFullyConnected && n.op != Op::QuantizedFullyConnected) continue;
    DynamicWeights w;
    if (std::string e = prepare_one(graph, n, &w); !e.empty()) return node_label(graph, i) + ": " + e;
    prepared->linear.push_back(std::move(w));
  }
  return "";
}

std::string run_quantized_fully_connected(const PreparedWeights& prepared, const Node& n, const OperandView& input,
                                          int8_t* output, const Shape& output_shape, const Parallel& parallel) {
  const DynamicWeights* w = prepared.find(n.output);
  if (w == nullptr) return "weights were not prepared";
  size_t k_in = w->in_features, out_ch = w->out_features;
  size_t rows = numel(output_shape) / out_ch;
  const auto* x = reinterpret_cast<const int8_t*>(input.data);
  parallel.run(out_ch, std::max<size_t>(1, 8192 / (k_in * rows + 1)), [&](size_t begin, size_t end) {
    for (size_t r = 0; r < rows; ++r) {
      const int8_t* a = x + r * k_in;
      int8_t* out = output + r * out_ch;
      for (size_t o = begin; o < end; ++o) {
        int32_t acc = dot_int8(a, w->weights.data() + o * w->row_stride, k_in) - w->input_zero_point * w->sums[o] +
                      w->bias_int[o];
        float v = std::nearbyint(static_cast<float>(acc) * w->requant[o]) + static_cast<float>(w->output_zero_point);
        v = std::min(std::max(v, static_cast<float>(w->output_min)), static_cast<float>(w->output_max));
        out[o] = static_cast<int8_t>(v);
      }
    }
  });
  return "";
}

std::string run_dynamic_fully_connected(const PreparedWeights& prepared, const Node& n, const OperandView& input,
                                        float* output, const Shape& output_shape, const Parallel& parallel) {
  const DynamicWeights* w = prepared.find(n.output);
  if (w == nullptr) return "weights were not prepared";
  size_t k_in = w->in_features, stride = w->row_stride, out_ch = w->out_features;
  size_t rows = numel(output_shape) / out_ch;
  // Quantize every row once (zero-padded to the weights' row stride), then the products in parallel.
  // Each row quantized once, widened to int16 (zero-padded to the weights' row stride), then the products.
  thread_local std::vector<int8_t> q8;
  thread_local std::vector<int16_t> q16;
  thread_local std::vector<RowQuantization> params;
  q8.resize(k_in);
  q16.assign(rows * stride, 0);
  params.resize(rows);
  for (size_t r = 0; r < rows; ++r) {
    params[r] = quantize_row(input.data + r * k_in, k_in, q8.data());
    for (size_t k = 0; k < k_in; ++k) q16[r * stride + k] = q8[k];
  }
  const int16_t* activations = q16.data();
  const RowQuantization* row_params = params.data();
  size_t gs = w->group_size, groups = w->groups;
  parallel.run(out_ch, std::max<size_t>(1, 8192 / (k_in * rows + 1)), [&](size_t begin, size_t end) {
    for (size_t r = 0; r < rows; ++r) {
      const int16_t* a = activations + r * stride;
      const RowQuantization& p = row_params[r];
      float* out = output + r * out_ch;
      size_t o = begin;
#if defined(__x86_64__)
      if (groups > 1 && gs % kLane == 0 && cpu::has_avx2_fma()) {  // four output channels at a time
        for (; o + 4 <= end; o += 4) {
          float acc[4];
          grouped_dot4_avx2(a, w->weights.data() + o * stride, stride, groups, gs, w->scales.data() + o * groups, acc);
          for (size_t j = 0; j < 4; ++j) {
            float v = (acc[j] - static_cast<float>(p.zero_point) * w->scaled_sums[o + j]) * p.scale + w->bias[o + j];
            out[o + j] = std::min(std::max(v, n.out_min), n.out_max);
          }
        }
      }
#endif
      for (; o < end; ++o) {
        const int8_t* wr = w->weights.data() + o * stride;
        float acc;
        if (groups == 1) {  // one scale: exact integers over the padded row, then one multiply
          acc = static_cast<float>(dot_int16_int8(a, wr, stride) - p.zero_point * w->sums[o]) * w->scales[o];
        } else {
          acc = grouped_dot(a, wr, groups, gs, w->scales.data() + o * groups) -
                static_cast<float>(p.zero_point) * w->scaled_sums[o];
        }
        float v = acc * p.scale + w->bias[o];
        out[o] = std::min(std::max(v, n.out_min), n.out_max);
      }
    }
  });
  return "";
}

}  // namespace etrt::xnn
