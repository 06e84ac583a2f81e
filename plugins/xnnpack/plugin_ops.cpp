#include "plugin_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "vector_math.h"

namespace etrt::xnn {

void apply_clamp(const Node& n, float* out, size_t count) {
  if (!n.has_clamp()) return;
  for (size_t i = 0; i < count; ++i) out[i] = std::min(std::max(out[i], n.out_min), n.out_max);
}

namespace {

constexpr size_t kElementGrain = 16384;  // elementwise work per task

template <typename F>
void unary(const Node& n, const float* in, float* out, size_t count, const Parallel& parallel, F f) {
  parallel.run(count, kElementGrain, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) out[i] = f(in[i]);
    apply_clamp(n, out + begin, end - begin);
  });
}

// unary() with an array function of the vector math (AVX2 when the CPU has it, libm otherwise).
void unary_array(const Node& n, const float* in, float* out, size_t count, const Parallel& parallel,
                 void (*array)(const float*, float*, size_t)) {
  parallel.run(count, kElementGrain, [&](size_t begin, size_t end) {
    array(in + begin, out + begin, end - begin);
    apply_clamp(n, out + begin, end - begin);
  });
}

// Row-major strides of a shape, in elements.
std::vector<size_t> strides_of(const Shape& s) {
  std::vector<size_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// T: float, or uint8_t for quantized bytes (same quantization in and out).
template <typename T>
void transpose(const Node& n, const T* in, const Shape& in_shape, T* out, const Shape& out_shape,
               const Parallel& parallel) {
  size_t rank = out_shape.size();
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  // NCHW <-> NHWC (the layout changes around convolutions): per batch a [rows, cols] matrix transposed,
  // without the generic loop's per-row index arithmetic.
  if (rank == 4 && n.list_a[0] == 0 &&
      ((n.list_a[1] == 2 && n.list_a[2] == 3 && n.list_a[3] == 1) ||
       (n.list_a[1] == 3 && n.list_a[2] == 1 && n.list_a[3] == 2))) {
    bool to_last = n.list_a[1] == 2;
    size_t rows = to_last ? in_shape[1] : in_shape[1] * in_shape[2];  // input matrix [rows, cols]
    size_t cols = to_last ? in_shape[2] * in_shape[3] : in_shape[3];
    size_t plane = rows * cols;
    parallel.run(in_shape[0] * cols, std::max<size_t>(1, 4096 / (rows + 1)), [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        size_t b = i / cols, c = i % cols;
        const T* src = in + b * plane + c;
        T* dst = out + b * plane + c * rows;
        for (size_t r = 0; r < rows; ++r) dst[r] = src[r * cols];
      }
    });
    return;
  }
  std::vector<size_t> in_strides = strides_of(in_shape);
  std::vector<size_t> src_stride(rank);  // input stride of each output dim
  for (size_t d = 0; d < rank; ++d) src_stride[d] = in_strides[n.list_a[d]];
  size_t inner = out_shape.back(), inner_stride = src_stride.back();
  size_t rows = numel(out_shape) / inner;
  parallel.run(rows, std::max<size_t>(1, 4096 / inner), [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; ++row) {
      size_t rem = row, offset = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        offset += (rem % out_shape[d]) * src_stride[d];
        rem /= out_shape[d];
      }
      T* dst = out + row * inner;
      const T* src = in + offset;
      if (inner_stride == 1) {
        std::memcpy(dst, src, inner * sizeof(T));
      } else {
        for (size_t i = 0; i < inner; ++i) dst[i] = src[i * inner_stride];
      }
    }
  });
}

// Batch index of a broadcast operand for output batch index `b`.
size_t broadcast_index(size_t b, const Shape& out_batch, const Shape& batch) {
  size_t index = 0, stride = 1, rem = b;
  size_t offset = out_batch.size() - batch.size();
  std::vector<size_t> coords(out_batch.size());
  for (size_t d = out_batch.size(); d-- > 0;) {
    coords[d] = rem % out_batch[d];
    rem /= out_batch[d];
  }
  for (size_t d = batch.size(); d-- > 0;) {
    size_t c = batch[d] == 1 ? 0 : coords[d + offset];
    index += c * stride;
    stride *= batch[d];
  }
  return index;
}

void batch_matmul(const Node& n, const OperandView& a, const OperandView& b, float* out, const Shape& out_shape,
                  const Parallel& parallel) {
  const Shape& as = *a.shape;
  const Shape& bs = *b.shape;
  bool transpose_b = (n.flags & 1u) != 0;
  size_t m = as[as.size() - 2], k = as.back();
  size_t nn = out_shape.back();
  Shape out_batch(out_shape.begin(), out_shape.end() - 2);
  Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  size_t batches = numel(out_batch);
  parallel.run(batches * m, std::max<size_t>(1, 65536 / std::max<size_t>(1, k * nn)), [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; ++row) {
      size_t batch = row / m, i = row % m;
      const float* arow = a.data + (broadcast_index(batch, out_batch, a_batch) * m + i) * k;
      const float* bmat = b.data + broadcast_index(batch, out_batch, b_batch) * k * nn;
      float* orow = out + row * nn;
      if (transpose_b) {
        for (size_t j = 0; j < nn; ++j) {
          float acc = 0.0f;
          for (size_t p = 0; p < k; ++p) acc += arow[p] * bmat[j * k + p];
          orow[j] = acc;
        }
      } else {
        std::fill(orow, orow + nn, 0.0f);
        for (size_t p = 0; p < k; ++p) {
          float av = arow[p];
          const float* brow = bmat + p * nn;
          for (size_t j = 0; j < nn; ++j) orow[j] += av * brow[j];
        }
      }
      apply_clamp(n, orow, nn);
    }
  });
}

// Linear with weights that are not constants (XNNPACK 2022 needs static weights).
void fully_connected(const Node& n, const OperandView& x, const OperandView& w, const OperandView& bias, float* out,
                     const Shape& out_shape, const Parallel& parallel) {
  bool transposed = (n.flags & 1u) != 0;
  size_t k = x.shape->back(), nn = out_shape.back();
  size_t rows = numel(*x.shape) / k;
  parallel.run(rows, std::max<size_t>(1, 65536 / std::max<size_t>(1, k * nn)), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      const float* xr = x.data + r * k;
      float* orow = out + r * nn;
      for (size_t j = 0; j < nn; ++j) {
        float acc = bias.data ? bias.data[j] : 0.0f;
        if (transposed) {
          for (size_t p = 0; p < k; ++p) acc += xr[p] * w.data[p * nn + j];
        } else {
          const float* wr = w.data + j * k;
          for (size_t p = 0; p < k; ++p) acc += xr[p] * wr[p];
        }
        orow[j] = acc;
      }
      apply_clamp(n, orow, nn);
    }
  });
}

template <typename T>
void concat(const Node& n, const std::vector<OperandView>& inputs, T* out, const Shape& out_shape) {
  size_t outer = 1, inner = 1;
  for (size_t d = 0; d < n.axis; ++d) outer *= out_shape[d];
  for (size_t d = n.axis + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
  size_t out_row = out_shape[n.axis] * inner;
  size_t column = 0;
  for (const OperandView& in : inputs) {
    size_t row = (*in.shape)[n.axis] * inner;
    const T* data = reinterpret_cast<const T*>(in.data);
    for (size_t o = 0; o < outer; ++o) std::memcpy(out + o * out_row + column, data + o * row, row * sizeof(T));
    column += row;
  }
  if constexpr (std::is_same_v<T, float>) apply_clamp(n, out, numel(out_shape));
}

template <typename T>
void slice(const Node& n, const OperandView& in, T* out, const Shape& out_shape, const Parallel& parallel) {
  const Shape& is = *in.shape;
  size_t rank = is.size();
  std::vector<size_t> in_strides = strides_of(is);
  size_t inner = out_shape.back();
  size_t rows = numel(out_shape) / inner;
  parallel.run(rows, 256, [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; ++row) {
      size_t rem = row, offset = n.list_a[rank - 1];
      for (size_t d = rank - 1; d-- > 0;) {
        offset += (rem % out_shape[d] + n.list_a[d]) * in_strides[d];
        rem /= out_shape[d];
      }
      std::memcpy(out + row * inner, reinterpret_cast<const T*>(in.data) + offset, inner * sizeof(T));
      if constexpr (std::is_same_v<T, float>) apply_clamp(n, out + row * inner, inner);
    }
  });
}

// ---- Reference versions of the nodes XNNPACK runs. Debian's XNNPACK clamps every result with max/min
// instructions that turn NaN into the lower bound (NaN -> -inf without a fused range, NaN -> 0 after ReLU), so a
// NaN or Inf input would come out as finite numbers. Runs with non-finite inputs use these instead; each
// propagates NaN as PyTorch does. Plain loops: this path is for correctness, not speed.

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
float nan_aware_max(float a, float b) { return (std::isnan(a) || std::isnan(b)) ? kNaN : std::max(a, b); }
float nan_aware_min(float a, float b) { return (std::isnan(a) || std::isnan(b)) ? kNaN : std::min(a, b); }

// NHWC convolution, grouped (Conv2d) or depthwise (weights [1, kh, kw, out_channels]).
void reference_convolution(const Node& n, const OperandView& x, const OperandView& w, const OperandView& bias,
                           float* out, const Shape& out_shape, const Parallel& parallel) {
  const Shape& xs = *x.shape;
  size_t in_h = xs[1], in_w = xs[2], in_ch = xs[3];
  size_t out_h = out_shape[1], out_w = out_shape[2], out_ch = out_shape[3];
  bool depthwise = n.op == Op::DepthwiseConv2d;
  size_t multiplier = depthwise ? out_ch / in_ch : 0;
  size_t pixels = out_shape[0] * out_h * out_w;
  parallel.run(pixels, 16, [&](size_t begin, size_t end) {
    for (size_t pixel = begin; pixel < end; ++pixel) {
      size_t b = pixel / (out_h * out_w), oy = pixel / out_w % out_h, ox = pixel % out_w;
      float* o = out + pixel * out_ch;
      for (size_t oc = 0; oc < out_ch; ++oc) {
        float acc = bias.data != nullptr ? bias.data[oc] : 0.0f;
        for (size_t ky = 0; ky < n.kernel[0]; ++ky) {
          size_t iy = oy * n.stride[0] + ky * n.dilation[0];
          if (iy < n.pad[0] || iy - n.pad[0] >= in_h) continue;
          iy -= n.pad[0];
          for (size_t kx = 0; kx < n.kernel[1]; ++kx) {
            size_t ix = ox * n.stride[1] + kx * n.dilation[1];
            if (ix < n.pad[3] || ix - n.pad[3] >= in_w) continue;
            ix -= n.pad[3];
            const float* in_pixel = x.data + ((b * in_h + iy) * in_w + ix) * in_ch;
            if (depthwise) {
              acc += in_pixel[oc / multiplier] * w.data[(ky * n.kernel[1] + kx) * out_ch + oc];
            } else {
              size_t group = oc / n.group_out;
              const float* wk = w.data + ((oc * n.kernel[0] + ky) * n.kernel[1] + kx) * n.group_in;
              const float* xi = in_pixel + group * n.group_in;
              for (size_t ic = 0; ic < n.group_in; ++ic) acc += xi[ic] * wk[ic];
            }
          }
        }
        o[oc] = acc;
      }
      apply_clamp(n, o, out_ch);
    }
  });
}

// NHWC max or average pooling; padding is ignored by both (average: over the window's real pixels).
void reference_pooling(const Node& n, const OperandView& x, float* out, const Shape& out_shape) {
  const Shape& xs = *x.shape;
  size_t in_h = xs[1], in_w = xs[2], channels = xs[3];
  size_t out_h = out_shape[1], out_w = out_shape[2];
  bool max = n.op == Op::MaxPool2d;
  size_t dh = max ? n.dilation[0] : 1, dw = max ? n.dilation[1] : 1;
  for (size_t pixel = 0; pixel < out_shape[0] * out_h * out_w; ++pixel) {
    size_t b = pixel / (out_h * out_w), oy = pixel / out_w % out_h, ox = pixel % out_w;
    float* o = out + pixel * channels;
    for (size_t c = 0; c < channels; ++c) {
      float acc = max ? -std::numeric_limits<float>::infinity() : 0.0f;
      size_t count = 0;
      for (size_t ky = 0; ky < n.kernel[0]; ++ky) {
        size_t iy = oy * n.stride[0] + ky * dh;
        if (iy < n.pad[0] || iy - n.pad[0] >= in_h) continue;
        for (size_t kx = 0; kx < n.kernel[1]; ++kx) {
          size_t ix = ox * n.stride[1] + kx * dw;
          if (ix < n.pad[3] || ix - n.pad[3] >= in_w) continue;
          float v = x.data[((b * in_h + iy - n.pad[0]) * in_w + ix - n.pad[3]) * channels + c];
          acc = max ? nan_aware_max(acc, v) : acc + v;
          ++count;
        }
      }
      o[c] = max ? acc : acc / static_cast<float>(std::max<size_t>(count, 1));
    }
    apply_clamp(n, o, channels);
  }
}

void reference_global_average(const Node& n, const OperandView& x, float* out) {
  const Shape& xs = *x.shape;
  size_t pixels = xs[1] * xs[2], channels = xs[3];
  for (size_t b = 0; b < xs[0]; ++b) {
    float* o = out + b * channels;
    std::fill(o, o + channels, 0.0f);
    for (size_t p = 0; p < pixels; ++p)
      for (size_t c = 0; c < channels; ++c) o[c] += x.data[(b * pixels + p) * channels + c];
    for (size_t c = 0; c < channels; ++c) o[c] /= static_cast<float>(pixels);
    apply_clamp(n, o, channels);
  }
}

// Elementwise with NumPy broadcasting (the inputs' shapes right-aligned to the output's).
template <typename F>
void reference_binary(const Node& n, const OperandView& a, const OperandView& b, float* out, const Shape& out_shape,
                      F f) {
  size_t rank = out_shape.size();
  auto source_strides = [&](const Shape& s) {
    std::vector<size_t> st(rank, 0), dense = strides_of(s);
    for (size_t d = 0; d < s.size(); ++d) st[rank - s.size() + d] = s[d] == 1 ? 0 : dense[d];
    return st;
  };
  std::vector<size_t> sa = source_strides(*a.shape), sb = source_strides(*b.shape);
  size_t count = numel(out_shape);
  for (size_t i = 0; i < count; ++i) {
    size_t rem = i, ia = 0, ib = 0;
    for (size_t d = rank; d-- > 0;) {
      size_t c = rem % out_shape[d];
      rem /= out_shape[d];
      ia += c * sa[d];
      ib += c * sb[d];
    }
    out[i] = f(a.data[ia], b.data[ib]);
  }
  apply_clamp(n, out, count);
}

// Divide with the fused range; one operand the output's size or a scalar runs in parallel, any other broadcast
// takes reference_binary.
void divide(const Node& n, const OperandView& a, const OperandView& b, float* out, const Shape& out_shape,
            const Parallel& parallel) {
  size_t count = numel(out_shape), na = numel(*a.shape), nb = numel(*b.shape);
  if ((na != count && na != 1) || (nb != count && nb != 1)) {
    reference_binary(n, a, b, out, out_shape, [](float x, float y) { return x / y; });
    return;
  }
  size_t step_a = na == 1 ? 0 : 1, step_b = nb == 1 ? 0 : 1;
  parallel.run(count, 16384, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) out[i] = a.data[i * step_a] / b.data[i * step_b];
    apply_clamp(n, out + begin, end - begin);
  });
}

void reference_softmax(const OperandView& x, float* out) {
  size_t inner = x.shape->empty() ? 1 : x.shape->back();
  size_t rows = inner == 0 ? 0 : numel(*x.shape) / inner;
  for (size_t r = 0; r < rows; ++r) {
    const float* in = x.data + r * inner;
    float* o = out + r * inner;
    float top = -std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < inner; ++i) top = nan_aware_max(top, in[i]);
    float sum = 0.0f;
    for (size_t i = 0; i < inner; ++i) o[i] = in[i] - top;
    vm::vexp(o, o, inner);
    for (size_t i = 0; i < inner; ++i) sum += o[i];
    for (size_t i = 0; i < inner; ++i) o[i] /= sum;
  }
}

void reference_constant_pad(const Node& n, const OperandView& x, float* out, const Shape& out_shape) {
  const Shape& xs = *x.shape;
  size_t rank = out_shape.size(), count = numel(out_shape);
  std::vector<size_t> in_strides = strides_of(xs);
  for (size_t i = 0; i < count; ++i) {
    size_t rem = i, offset = 0;
    bool inside = true;
    for (size_t d = rank; d-- > 0;) {
      size_t c = rem % out_shape[d];
      rem /= out_shape[d];
      if (c < n.list_a[d] || c - n.list_a[d] >= xs[d]) inside = false;
      else offset += (c - n.list_a[d]) * in_strides[d];
    }
    out[i] = inside ? x.data[offset] : n.alpha;
  }
  apply_clamp(n, out, count);
}

// alpha * expm1(x) below zero, x elsewhere; in and out may be the same array.
void elu(const Node& n, const float* in, float* out, size_t count, const Parallel& parallel) {
  parallel.run(count, kElementGrain, [&](size_t begin, size_t end) {
    constexpr size_t kBlock = 256;
    float e[kBlock];
    for (size_t b = begin; b < end; b += kBlock) {
      const size_t m = std::min(kBlock, end - b);
      vm::vexpm1(in + b, e, m);
      for (size_t i = 0; i < m; ++i) out[b + i] = in[b + i] < 0.0f ? n.alpha * e[i] : in[b + i];
    }
    apply_clamp(n, out + begin, end - begin);
  });
}

}  // namespace

bool is_finite_data(const float* data, size_t count) {
  // All exponent bits set: NaN or +-Inf. An integer count vectorises (a float sum would not): ~1.75
  // instructions per element (callgrind, gcc -O3, x86-64 baseline).
  uint32_t non_finite = 0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, data + i, sizeof bits);
    non_finite += (bits & 0x7f800000u) == 0x7f800000u;
  }
  return non_finite == 0;
}

NonFinite find_non_finite(const float* data, size_t count) {
  NonFinite found;
  for (size_t i = 0; i < count; ++i) {
    float x = data[i];
    found.nan = found.nan || std::isnan(x);
    found.positive_infinity = found.positive_infinity || x == std::numeric_limits<float>::infinity();
    found.negative_infinity = found.negative_infinity || x == -std::numeric_limits<float>::infinity();
  }
  return found;
}

InfinityRisk infinity_risk(const Graph& graph, uint32_t input_value,
                           const std::vector<std::vector<uint32_t>>& consumers) {
  constexpr uint8_t kPositive = 1, kNegative = 2;
  InfinityRisk risk;
  for (uint8_t origin : {kPositive, kNegative}) {
    // signs[v]: which infinities may reach value v from an infinity of this sign in the input.
    std::vector<uint8_t> signs(graph.values.size(), 0);
    std::vector<uint32_t> pending{input_value};
    signs[input_value] = origin;
    bool risky = false;
    while (!pending.empty() && !risky) {
      uint32_t v = pending.back();
      pending.pop_back();
      for (uint32_t node : consumers[v]) {
        const Node& n = graph.nodes[node];
        uint8_t out = 0;
        switch (n.op) {
          // The sign of an infinity survives these (with finite other operands).
          case Op::Add: case Op::Reshape: case Op::Copy: case Op::Transpose: case Op::Slice: case Op::Concat:
          case Op::MaxPool2d: case Op::ConstantPad: case Op::Clamp: case Op::Minimum: case Op::Maximum:
          case Op::Floor: case Op::Ceiling:
            out = signs[v];
            break;
          // Infinity in, infinity (of either sign) or a finite number out.
          case Op::Subtract: case Op::Negate: case Op::Abs: case Op::Square: case Op::Sigmoid: case Op::Tanh:
          case Op::Exp: case Op::Elu:
            out = kPositive | kNegative;
            break;
          case Op::Softmax:  // -inf becomes 0 (a masked score); +inf gives inf - inf
            risky = (signs[v] & kPositive) != 0;
            break;
          default:  // sums of products, x * 0, averages: an infinity may become NaN
            risky = true;
            break;
        }
        if (risky) break;
        if ((out & ~signs[n.output]) != 0) {
          signs[n.output] |= out;
          pending.push_back(n.output);
        }
      }
    }
    (origin == kPositive ? risk.positive : risk.negative) = risky;
  }
  return risk;
}

std::string run_reference_node(const Graph& graph, const Node& n, const std::vector<OperandView>& in, float* out,
                               const Shape& out_shape, const Parallel& parallel) {
  if (runs_in_plugin(graph, n)) return run_plugin_node(n, in, out, out_shape, parallel);
  size_t count = numel(out_shape);
  auto unary_op = [&](auto f) { unary(n, in[0].data, out, count, parallel, f); };
  switch (n.op) {
    case Op::FullyConnected: fully_connected(n, in[0], in[1], in[2], out, out_shape, parallel); return "";
    case Op::Conv2d: case Op::DepthwiseConv2d:
      reference_convolution(n, in[0], in[1], in[2], out, out_shape, parallel);
      return "";
    case Op::Add: reference_binary(n, in[0], in[1], out, out_shape, [](float a, float b) { return a + b; }); return "";
    case Op::Subtract:
      reference_binary(n, in[0], in[1], out, out_shape, [](float a, float b) { return a - b; });
      return "";
    case Op::Multiply:
      reference_binary(n, in[0], in[1], out, out_shape, [](float a, float b) { return a * b; });
      return "";
    case Op::Divide:
      reference_binary(n, in[0], in[1], out, out_shape, [](float a, float b) { return a / b; });
      return "";
    case Op::Minimum: reference_binary(n, in[0], in[1], out, out_shape, nan_aware_min); return "";
    case Op::Maximum: reference_binary(n, in[0], in[1], out, out_shape, nan_aware_max); return "";
    case Op::Clamp: unary_op([](float x) { return x; }); return "";  // apply_clamp keeps NaN
    case Op::Softmax: reference_softmax(in[0], out); apply_clamp(n, out, count); return "";
    case Op::Sigmoid: unary_array(n, in[0].data, out, count, parallel, vm::vsigmoid); return "";
    case Op::Abs: unary_op([](float x) { return std::fabs(x); }); return "";
    case Op::Negate: unary_op([](float x) { return -x; }); return "";
    case Op::Square: unary_op([](float x) { return x * x; }); return "";
    case Op::SquareRoot: unary_op([](float x) { return std::sqrt(x); }); return "";
    case Op::Floor: unary_op([](float x) { return std::floor(x); }); return "";
    case Op::Ceiling: unary_op([](float x) { return std::ceil(x); }); return "";
    case Op::HardSwish:
      unary_op([](float x) { return std::isnan(x) ? x : x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f; });
      return "";
    case Op::LeakyRelu: unary_op([a = n.alpha](float x) { return x < 0.0f ? x * a : x; }); return "";
    case Op::Elu: elu(n, in[0].data, out, count, parallel); return "";
    case Op::MaxPool2d: case Op::AvgPool2d: reference_pooling(n, in[0], out, out_shape); return "";
    case Op::GlobalAvgPool2d: reference_global_average(n, in[0], out); return "";
    case Op::Reshape:
      if (out != in[0].data) std::memcpy(out, in[0].data, count * sizeof(float));
      apply_clamp(n, out, count);
      return "";
    case Op::ConstantPad: reference_constant_pad(n, in[0], out, out_shape); return "";
    case Op::ConvTranspose2d: transposed_convolution(n, in[0], in[1], in[2], out, out_shape, parallel); return "";
    case Op::PRelu: prelu(n, in[0], in[1], out, out_shape, parallel); return "";
    case Op::ResizeBilinear: resize_bilinear(n, in[0], out, out_shape, parallel); return "";
    default:
      return std::string("no reference implementation of ") + op_name(n.op);
  }
}

bool runs_in_plugin(const Graph& graph, const Node& n) {
  if (runs_in_plugin_op(n.op)) return true;
  switch (n.op) {
    case Op::FullyConnected:  // XNNPACK 2022 packs weights at creation: they must be constants
      return !graph.values[n.inputs[1]].is_constant() ||
             (n.inputs[2] != kNone && !graph.values[n.inputs[2]].is_constant());
    case Op::ConvTranspose2d:  // XNNPACK needs the adjustment below the stride; PyTorch only below stride or dilation
      return n.adjust[0] >= n.stride[0] || n.adjust[1] >= n.stride[1];
    default:
      return false;
  }
}

std::string run_plugin_node(const Node& n, const std::vector<OperandView>& in, float* out, const Shape& out_shape,
                            const Parallel& parallel, size_t element_size) {
  size_t count = numel(out_shape);
  if (element_size == 1) {  // quantized bytes (the parser admits only moves with one quantization here)
    auto* bytes = reinterpret_cast<uint8_t*>(out);
    const auto* src = reinterpret_cast<const uint8_t*>(in[0].data);
    switch (n.op) {
      case Op::Transpose: transpose(n, src, *in[0].shape, bytes, out_shape, parallel); return "";
      case Op::Concat: concat(n, in, bytes, out_shape); return "";
      case Op::Slice: slice(n, in[0], bytes, out_shape, parallel); return "";
      case Op::Copy: case Op::Reshape:
        if (bytes != src) std::memcpy(bytes, src, count);
        return "";
      default:
        return std::string("the plugin has no quantized implementation of ") + op_name(n.op);
    }
  }
  if (element_size != sizeof(float)) return std::string("the plugin has no int32 implementation of ") + op_name(n.op);
  switch (n.op) {
    case Op::Transpose: transpose(n, in[0].data, *in[0].shape, out, out_shape, parallel); return "";
    case Op::BatchMatMul: batch_matmul(n, in[0], in[1], out, out_shape, parallel); return "";
    case Op::FullyConnected: fully_connected(n, in[0], in[1], in[2], out, out_shape, parallel); return "";
    case Op::Concat: concat(n, in, out, out_shape); return "";
    case Op::Slice: slice(n, in[0], out, out_shape, parallel); return "";
    case Op::Copy: case Op::Reshape:
      if (out != in[0].data) std::memcpy(out, in[0].data, count * sizeof(float));
      apply_clamp(n, out, count);
      return "";
    case Op::Tanh: unary_array(n, in[0].data, out, count, parallel, vm::vtanh); return "";
    case Op::Gelu: unary_array(n, in[0].data, out, count, parallel, vm::vgelu_erf); return "";
    case Op::Exp: unary_array(n, in[0].data, out, count, parallel, vm::vexp); return "";
    case Op::Log: unary_array(n, in[0].data, out, count, parallel, vm::vlog); return "";
    case Op::Sin: unary_array(n, in[0].data, out, count, parallel, vm::vsin); return "";
    case Op::Cos: unary_array(n, in[0].data, out, count, parallel, vm::vcos); return "";
    case Op::ReciprocalSquareRoot: unary_array(n, in[0].data, out, count, parallel, vm::vrsqrt); return "";
    case Op::ConvTranspose2d: transposed_convolution(n, in[0], in[1], in[2], out, out_shape, parallel); return "";
    case Op::Divide: divide(n, in[0], in[1], out, out_shape, parallel); return "";
    default:
      return std::string("the plugin has no implementation of ") + op_name(n.op);
  }
}

}  // namespace etrt::xnn
