#include "plugin_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace etrt::xnn {
namespace {

constexpr size_t kElementGrain = 16384;  // elementwise work per task

void apply_clamp(const Node& n, float* out, size_t count) {
  if (!n.has_clamp()) return;
  for (size_t i = 0; i < count; ++i) out[i] = std::min(std::max(out[i], n.out_min), n.out_max);
}

template <typename F>
void unary(const Node& n, const float* in, float* out, size_t count, const Parallel& parallel, F f) {
  parallel.run(count, kElementGrain, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) out[i] = f(in[i]);
    apply_clamp(n, out + begin, end - begin);
  });
}

// Row-major strides of a shape, in elements.
std::vector<size_t> strides_of(const Shape& s) {
  std::vector<size_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

void transpose(const Node& n, const float* in, const Shape& in_shape, float* out, const Shape& out_shape,
               const Parallel& parallel) {
  size_t rank = out_shape.size();
  if (rank == 0) {
    out[0] = in[0];
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
      float* dst = out + row * inner;
      const float* src = in + offset;
      if (inner_stride == 1) {
        std::memcpy(dst, src, inner * sizeof(float));
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

void concat(const Node& n, const std::vector<OperandView>& inputs, float* out, const Shape& out_shape) {
  size_t outer = 1, inner = 1;
  for (size_t d = 0; d < n.axis; ++d) outer *= out_shape[d];
  for (size_t d = n.axis + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
  size_t out_row = out_shape[n.axis] * inner;
  size_t column = 0;
  for (const OperandView& in : inputs) {
    size_t row = (*in.shape)[n.axis] * inner;
    for (size_t o = 0; o < outer; ++o) std::memcpy(out + o * out_row + column, in.data + o * row, row * sizeof(float));
    column += row;
  }
  apply_clamp(n, out, numel(out_shape));
}

void slice(const Node& n, const OperandView& in, float* out, const Shape& out_shape, const Parallel& parallel) {
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
      std::memcpy(out + row * inner, in.data + offset, inner * sizeof(float));
      apply_clamp(n, out + row * inner, inner);
    }
  });
}

}  // namespace

bool runs_in_plugin(const Graph& graph, const Node& n) {
  switch (n.op) {
    case Op::Transpose: case Op::BatchMatMul: case Op::Concat: case Op::Slice: case Op::Copy:
    case Op::Tanh: case Op::Gelu: case Op::Exp: case Op::Log: case Op::Sin: case Op::Cos:
    case Op::ReciprocalSquareRoot:
      return true;
    case Op::FullyConnected:  // XNNPACK 2022 packs weights at creation: they must be constants
      return !graph.values[n.inputs[1]].is_constant() ||
             (n.inputs[2] != kNone && !graph.values[n.inputs[2]].is_constant());
    default:
      return false;
  }
}

std::string run_plugin_node(const Node& n, const std::vector<OperandView>& in, float* out, const Shape& out_shape,
                            const Parallel& parallel) {
  size_t count = numel(out_shape);
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
    case Op::Tanh: unary(n, in[0].data, out, count, parallel, [](float x) { return std::tanh(x); }); return "";
    case Op::Gelu:
      unary(n, in[0].data, out, count, parallel,
            [](float x) { return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2))); });
      return "";
    case Op::Exp: unary(n, in[0].data, out, count, parallel, [](float x) { return std::exp(x); }); return "";
    case Op::Log: unary(n, in[0].data, out, count, parallel, [](float x) { return std::log(x); }); return "";
    case Op::Sin: unary(n, in[0].data, out, count, parallel, [](float x) { return std::sin(x); }); return "";
    case Op::Cos: unary(n, in[0].data, out, count, parallel, [](float x) { return std::cos(x); }); return "";
    case Op::ReciprocalSquareRoot:
      unary(n, in[0].data, out, count, parallel, [](float x) { return 1.0f / std::sqrt(x); });
      return "";
    default:
      return std::string("the plugin has no implementation of ") + op_name(n.op);
  }
}

}  // namespace etrt::xnn
