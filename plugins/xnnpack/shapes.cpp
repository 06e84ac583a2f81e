// Shape inference for every node type: used at init to check the blob's
// declared shapes and, for dynamic inputs, to size everything at execute.
#include <algorithm>

#include "graph.h"

namespace etrt::xnn {

const char* op_name(Op op) {
  switch (op) {
    case Op::FullyConnected: return "FullyConnected";
    case Op::Conv2d: return "Conv2d";
    case Op::DepthwiseConv2d: return "DepthwiseConv2d";
    case Op::Add: return "Add";
    case Op::Subtract: return "Subtract";
    case Op::Multiply: return "Multiply";
    case Op::Divide: return "Div";
    case Op::Minimum: return "Minimum";
    case Op::Maximum: return "Maximum";
    case Op::Clamp: return "Clamp";
    case Op::Softmax: return "Softmax";
    case Op::Sigmoid: return "Sigmoid";
    case Op::Abs: return "Abs";
    case Op::Negate: return "Negate";
    case Op::Square: return "Square";
    case Op::SquareRoot: return "SquareRoot";
    case Op::Floor: return "Floor";
    case Op::Ceiling: return "Ceiling";
    case Op::HardSwish: return "Hardswish";
    case Op::LeakyRelu: return "LeakyReLU";
    case Op::Elu: return "ELU";
    case Op::MaxPool2d: return "MaxPooling2d";
    case Op::AvgPool2d: return "AvgPooling2d";
    case Op::GlobalAvgPool2d: return "GlobalAvgPooling2d";
    case Op::Reshape: return "StaticReshape";
    case Op::ConstantPad: return "StaticConstantPad";
    case Op::ConvTranspose2d: return "ConvTranspose2d";
    case Op::PRelu: return "PReLU";
    case Op::ResizeBilinear: return "StaticResizeBilinear2D";
    case Op::Transpose: return "StaticTranspose";
    case Op::BatchMatMul: return "BatchMatrixMultiply";
    case Op::Concat: return "Concatenate";
    case Op::Slice: return "StaticSlice";
    case Op::Copy: return "Copy";
    case Op::Tanh: return "Tanh";
    case Op::Gelu: return "Gelu";
    case Op::Exp: return "Exp";
    case Op::Log: return "Log";
    case Op::Sin: return "Sin";
    case Op::Cos: return "Cos";
    case Op::ReciprocalSquareRoot: return "ReciprocalSquareRoot";
    case Op::Convert: return "Convert";
    case Op::DynamicFullyConnected: return "FullyConnected(qd8)";
    case Op::QuantizedFullyConnected: return "FullyConnected(qc8)";
  }
  return "?";
}

const char* dtype_name(DType type) {
  switch (type) {
    case DType::fp32: return "fp32";
    case DType::qint8: return "qint8";
    case DType::quint8: return "quint8";
    case DType::qint32: return "qint32";
    case DType::qcint8: return "qcint8";
    case DType::qcint32: return "qcint32";
    case DType::qdint8: return "qdint8";
    case DType::qbint4: return "qbint4";
    case DType::qcint4: return "qcint4";
  }
  return "?";
}

size_t element_size(DType type) {
  switch (type) {
    case DType::fp32: case DType::qint32: case DType::qcint32: return 4;
    default: return 1;
  }
}

size_t value_bytes(DType type, const Shape& shape) {
  if (!is_4bit(type) || shape.empty()) return numel(shape) * element_size(type);
  size_t inner = shape.back();
  return numel(shape) / inner * ((inner + 1) / 2);
}

std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

size_t numel(const Shape& shape) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  return n;
}

std::string node_label(const Graph& graph, size_t index) {
  const Node& n = graph.nodes[index];
  return "node " + std::to_string(index) + " (XNN" + op_name(n.op) + ", debug handle " +
         std::to_string(n.debug_handle) + ")";
}

namespace {

constexpr size_t kLimit = size_t{1} << 32;  // elements per tensor

// a * b, or 0 when the product exceeds kLimit.
size_t mul_checked(size_t a, size_t b) { return (b != 0 && a > kLimit / b) ? 0 : a * b; }

std::string broadcast(const Shape& a, const Shape& b, Shape* out) {
  size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    size_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    size_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return "shapes " + shape_text(a) + " and " + shape_text(b) + " do not broadcast";
    (*out)[i] = da == 1 ? db : da;
  }
  return "";
}

// Output extent of a strided window over `in` padded by `pad`.
std::string window(size_t in, uint32_t pad_a, uint32_t pad_b, uint32_t kernel, uint32_t stride, uint32_t dilation,
                   const char* axis, size_t* out) {
  if (kernel == 0 || stride == 0 || dilation == 0)
    return std::string(axis) + ": kernel, stride and dilation must be positive";
  uint64_t padded = uint64_t{in} + pad_a + pad_b;
  uint64_t effective = uint64_t{kernel - 1} * dilation + 1;
  if (padded < effective)
    return std::string(axis) + ": window " + std::to_string(effective) + " is larger than the padded input " +
           std::to_string(padded);
  *out = static_cast<size_t>((padded - effective) / stride + 1);
  return "";
}

// What Conv2d, DepthwiseConv2d and ConvTranspose2d ask of their input and weights alike; sets the output channels.
std::string check_filtered_input(const Graph& graph, const Node& n, const std::vector<Shape>& shapes, size_t* out_ch) {
  const Shape& x = shapes[n.inputs[0]];
  const Shape& w = shapes[n.inputs[1]];
  if (x.size() != 4) return "input must be 4-D NHWC, got " + shape_text(x);
  if (w.size() != 4) return "weights must be 4-D, got " + shape_text(w);
  if (!graph.values[n.inputs[1]].is_constant()) return "weights must be constant";
  if (n.inputs[2] != kNone && !graph.values[n.inputs[2]].is_constant()) return "bias must be constant";
  if (n.groups == 0 || n.group_in == 0 || n.group_out == 0) return "groups and channels must be positive";
  size_t in_ch = mul_checked(n.groups, n.group_in);
  *out_ch = mul_checked(n.groups, n.group_out);
  if (in_ch == 0 || *out_ch == 0) return "channel count overflows";
  if (x[3] != in_ch)
    return "input " + shape_text(x) + " has " + std::to_string(x[3]) + " channels, the node expects " +
           std::to_string(in_ch) + " (" + std::to_string(n.groups) + " groups of " + std::to_string(n.group_in) + ")";
  return "";
}

}  // namespace

std::string infer_shape(const Graph& graph, const Node& n, const std::vector<Shape>& shapes, Shape* out) {
  auto shape_of = [&](size_t k) -> const Shape& { return shapes[n.inputs[k]]; };
  auto constant = [&](size_t k) { return n.inputs[k] != kNone && graph.values[n.inputs[k]].is_constant(); };
  auto expect = [&](bool ok, const std::string& what) { return ok ? std::string() : what; };
  switch (n.op) {
    case Op::Add: case Op::Subtract: case Op::Multiply: case Op::Divide: case Op::Minimum: case Op::Maximum:
      return broadcast(shape_of(0), shape_of(1), out);
    case Op::Clamp: case Op::Sigmoid: case Op::Abs: case Op::Negate: case Op::Square: case Op::SquareRoot:
    case Op::Floor: case Op::Ceiling: case Op::HardSwish: case Op::LeakyRelu: case Op::Elu: case Op::Copy:
    case Op::Tanh: case Op::Gelu: case Op::Exp: case Op::Log: case Op::Sin: case Op::Cos:
    case Op::ReciprocalSquareRoot: case Op::Convert:
      *out = shape_of(0);
      return "";
    case Op::Softmax:
      *out = shape_of(0);
      return expect(!out->empty(), "softmax of a rank-0 tensor");
    case Op::FullyConnected: case Op::DynamicFullyConnected: case Op::QuantizedFullyConnected: {
      const Shape& x = shape_of(0);
      const Shape& w = shape_of(1);
      if (x.empty()) return "input is rank 0";
      if (w.size() != 2) return "weights must be 2-D, got " + shape_text(w);
      bool transposed = (n.flags & 1u) != 0;  // XNN_FLAG_TRANSPOSE_WEIGHTS: [in, out]
      size_t in_ch = transposed ? w[0] : w[1], out_ch = transposed ? w[1] : w[0];
      if (x.back() != in_ch)
        return "input " + shape_text(x) + " has " + std::to_string(x.back()) + " features, weights " +
               shape_text(w) + " expect " + std::to_string(in_ch);
      if (n.inputs[2] != kNone && shape_of(2) != Shape{out_ch})
        return "bias " + shape_text(shape_of(2)) + " must be [" + std::to_string(out_ch) + "]";
      if (n.flags & 4u) {  // XNN_FLAG_TENSORFLOW_RESHAPE_2D
        *out = {numel(x) / in_ch, out_ch};
      } else {
        *out = x;
        out->back() = out_ch;
      }
      return "";
    }
    case Op::Conv2d: case Op::DepthwiseConv2d: {
      size_t out_ch = 0;
      if (std::string e = check_filtered_input(graph, n, shapes, &out_ch); !e.empty()) return e;
      const Shape& x = shape_of(0);
      const Shape& w = shape_of(1);
      Shape want_w;
      if (n.op == Op::Conv2d) {
        want_w = {out_ch, n.kernel[0], n.kernel[1], n.group_in};
      } else {
        if (n.group_out % n.group_in != 0) return "depthwise output channels are not a multiple of the input's";
        want_w = {1, n.kernel[0], n.kernel[1], out_ch};
      }
      if (w != want_w) return "weights are " + shape_text(w) + ", the node needs " + shape_text(want_w);
      if (n.inputs[2] != kNone && shape_of(2) != Shape{out_ch})
        return "bias " + shape_text(shape_of(2)) + " must be [" + std::to_string(out_ch) + "]";
      if (n.flags & 4u) return "TensorFlow SAME padding is not supported";
      size_t oh = 0, ow = 0;
      if (auto e = window(x[1], n.pad[0], n.pad[2], n.kernel[0], n.stride[0], n.dilation[0], "height", &oh); !e.empty())
        return e;
      if (auto e = window(x[2], n.pad[3], n.pad[1], n.kernel[1], n.stride[1], n.dilation[1], "width", &ow); !e.empty())
        return e;
      *out = {x[0], oh, ow, out_ch};
      return "";
    }
    case Op::ConvTranspose2d: {
      size_t out_ch = 0;
      if (std::string e = check_filtered_input(graph, n, shapes, &out_ch); !e.empty()) return e;
      const Shape& x = shape_of(0);
      const Shape& w = shape_of(1);
      if (n.kernel[0] == 0 || n.kernel[1] == 0 || n.stride[0] == 0 || n.stride[1] == 0 || n.dilation[0] == 0 ||
          n.dilation[1] == 0)
        return "kernel, stride and dilation must be positive";
      Shape want_w = {out_ch, n.kernel[0], n.kernel[1], n.group_in};
      if (w != want_w) return "weights are " + shape_text(w) + ", the node needs " + shape_text(want_w);
      if (n.inputs[2] != kNone && shape_of(2) != Shape{out_ch})
        return "bias " + shape_text(shape_of(2)) + " must be [" + std::to_string(out_ch) + "]";
      if (n.flags != 0) return "flags " + std::to_string(n.flags) + " (a transposed convolution has none)";
      // (in - 1) * stride + (kernel - 1) * dilation + 1 + adjustment - padding, per axis.
      size_t extent[2];
      const char* axis[2] = {"height", "width"};
      const uint32_t padding[2] = {n.pad[0] + n.pad[2], n.pad[1] + n.pad[3]};
      for (int a = 0; a < 2; ++a) {
        if (n.adjust[a] >= std::max(n.stride[a], n.dilation[a]))
          return std::string(axis[a]) + ": output adjustment " + std::to_string(n.adjust[a]) +
                 " must be smaller than the stride or the dilation";
        uint64_t full = (uint64_t{x[1 + a]} - 1) * n.stride[a] + uint64_t{n.kernel[a] - 1} * n.dilation[a] + 1 +
                        n.adjust[a];
        if (full <= padding[a] || full - padding[a] > kLimit)
          return std::string(axis[a]) + ": padding " + std::to_string(padding[a]) + " leaves no output of the " +
                 std::to_string(full) + " computed";
        extent[a] = static_cast<size_t>(full - padding[a]);
      }
      *out = {x[0], extent[0], extent[1], out_ch};
      return "";
    }
    case Op::PRelu: {
      const Shape& x = shape_of(0);
      const Shape& slope = shape_of(1);
      if (x.size() != 4) return "input must be 4-D NHWC, got " + shape_text(x);
      if (!constant(1)) return "slope must be constant";
      if (slope != Shape{x[3]})
        return "slope " + shape_text(slope) + " must be [" + std::to_string(x[3]) + "], one per channel";
      *out = x;
      return "";
    }
    case Op::ResizeBilinear: {
      const Shape& x = shape_of(0);
      if (x.size() != 4) return "input must be 4-D NHWC, got " + shape_text(x);
      if (n.new_size[0] == 0 || n.new_size[1] == 0) return "output size must be positive";
      constexpr uint32_t kLegacy = 4, kAlignCorners = 8;  // XNN_FLAG_TENSORFLOW_LEGACY_MODE, XNN_FLAG_ALIGN_CORNERS
      if ((n.flags & ~(kLegacy | kAlignCorners)) != 0 || n.flags == (kLegacy | kAlignCorners))
        return "flags " + std::to_string(n.flags) + " (align-corners 8 or TensorFlow legacy 4, not both)";
      *out = {x[0], n.new_size[0], n.new_size[1], x[3]};
      return "";
    }
    case Op::MaxPool2d: case Op::AvgPool2d: {
      const Shape& x = shape_of(0);
      if (x.size() != 4) return "input must be 4-D NHWC, got " + shape_text(x);
      if (n.flags & 4u) return "TensorFlow SAME padding is not supported";
      if (n.op == Op::AvgPool2d && (n.dilation[0] > 1 || n.dilation[1] > 1))
        return "average pooling with dilation is not supported";
      uint32_t dh = n.op == Op::AvgPool2d ? 1 : n.dilation[0], dw = n.op == Op::AvgPool2d ? 1 : n.dilation[1];
      size_t oh = 0, ow = 0;
      if (auto e = window(x[1], n.pad[0], n.pad[2], n.kernel[0], n.stride[0], dh, "height", &oh); !e.empty()) return e;
      if (auto e = window(x[2], n.pad[3], n.pad[1], n.kernel[1], n.stride[1], dw, "width", &ow); !e.empty()) return e;
      *out = {x[0], oh, ow, x[3]};
      return "";
    }
    case Op::GlobalAvgPool2d: {
      const Shape& x = shape_of(0);
      if (x.size() != 4) return "input must be 4-D NHWC, got " + shape_text(x);
      if ((n.flags & 0x40u) == 0) return "only the keep-dims form (flag 0x40) is supported";
      *out = {x[0], 1, 1, x[3]};
      return "";
    }
    case Op::Reshape: {
      const Shape& x = shape_of(0);
      size_t total = numel(x), known = 1;
      int inferred = -1;
      out->clear();
      for (size_t d = 0; d < n.list_a.size(); ++d) {
        size_t dim = n.list_a[d];
        if (dim == 0) {  // inferred from the element count (dynamic shapes)
          if (inferred >= 0) return "new shape " + shape_text({n.list_a.begin(), n.list_a.end()}) + " has two 0 dims";
          inferred = static_cast<int>(d);
        } else {
          known = mul_checked(known, dim);
          if (known == 0) return "new shape is too large";
        }
        out->push_back(dim);
      }
      if (out->size() > kMaxRank) return "new shape has rank " + std::to_string(out->size());
      if (inferred >= 0) {
        if (total % known != 0) return "cannot infer a dim of " + shape_text(*out) + " from " + shape_text(x);
        (*out)[inferred] = total / known;
      }
      if (numel(*out) != total)
        return "cannot reshape " + shape_text(x) + " (" + std::to_string(total) + " elements) to " + shape_text(*out);
      return "";
    }
    case Op::ConstantPad: {
      const Shape& x = shape_of(0);
      if (n.list_a.size() != x.size() || n.list_b.size() != x.size())
        return "padding lists have " + std::to_string(n.list_a.size()) + " and " + std::to_string(n.list_b.size()) +
               " entries for a rank-" + std::to_string(x.size()) + " input";
      *out = x;
      for (size_t d = 0; d < x.size(); ++d) {
        uint64_t dim = uint64_t{x[d]} + n.list_a[d] + n.list_b[d];
        if (dim > kLimit) return "padded shape is too large";
        (*out)[d] = static_cast<size_t>(dim);
      }
      return expect(mul_checked(numel(x), 1) != 0 && numel(*out) <= kLimit, "padded shape is too large");
    }
    case Op::Transpose: {
      const Shape& x = shape_of(0);
      if (n.list_a.size() != x.size())
        return "permutation has " + std::to_string(n.list_a.size()) + " entries for a rank-" +
               std::to_string(x.size()) + " input";
      std::vector<bool> seen(x.size(), false);
      out->assign(x.size(), 0);
      for (size_t d = 0; d < x.size(); ++d) {
        uint32_t p = n.list_a[d];
        if (p >= x.size() || seen[p]) return "permutation " + shape_text({n.list_a.begin(), n.list_a.end()}) +
                                             " is not a permutation of " + std::to_string(x.size()) + " dims";
        seen[p] = true;
        (*out)[d] = x[p];
      }
      return "";
    }
    case Op::BatchMatMul: {
      const Shape& a = shape_of(0);
      const Shape& b = shape_of(1);
      if (a.size() < 2 || b.size() < 2) return "operands must be at least 2-D, got " + shape_text(a) + " and " + shape_text(b);
      if ((n.flags & ~1u) != 0) return "unknown flags " + std::to_string(n.flags);
      bool transpose_b = (n.flags & 1u) != 0;
      size_t m = a[a.size() - 2], k = a.back();
      size_t kb = transpose_b ? b.back() : b[b.size() - 2], nn = transpose_b ? b[b.size() - 2] : b.back();
      if (k != kb) return "inner dims differ: " + shape_text(a) + " x " + shape_text(b);
      Shape batch;
      if (auto e = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), &batch); !e.empty()) return e;
      *out = batch;
      out->push_back(m);
      out->push_back(nn);
      return "";
    }
    case Op::Concat: {
      const Shape& first = shape_of(0);
      if (n.axis >= first.size()) return "axis " + std::to_string(n.axis) + " is outside rank " + std::to_string(first.size());
      *out = first;
      for (size_t k = 1; k < n.inputs.size(); ++k) {
        const Shape& s = shape_of(k);
        if (s.size() != first.size()) return "inputs have different ranks";
        for (size_t d = 0; d < s.size(); ++d)
          if (d != n.axis && s[d] != first[d])
            return "input shapes " + shape_text(first) + " and " + shape_text(s) + " differ outside axis " +
                   std::to_string(n.axis);
        (*out)[n.axis] += s[n.axis];
      }
      return "";
    }
    case Op::Slice: {
      const Shape& x = shape_of(0);
      if (n.list_a.size() != x.size()) return "slice has " + std::to_string(n.list_a.size()) + " offsets for rank " + std::to_string(x.size());
      out->assign(x.size(), 0);
      for (size_t d = 0; d < x.size(); ++d) {
        size_t begin = n.list_a[d], size = n.list_b[d];
        if (begin >= x[d]) return "offset " + std::to_string(begin) + " is outside dim " + std::to_string(d) + " of " + shape_text(x);
        if (size == 0) size = x[d] - begin;  // 0 = to the end
        if (size > x[d] - begin) return "slice of " + std::to_string(size) + " from " + std::to_string(begin) +
                                        " exceeds dim " + std::to_string(d) + " of " + shape_text(x);
        (*out)[d] = size;
      }
      return "";
    }
  }
  return "unknown operation";
}

std::string infer_all(const Graph& graph, const std::vector<Shape>& input_shapes, std::vector<Shape>* shapes,
                      bool allow_empty) {
  shapes->assign(graph.values.size(), Shape());
  for (size_t v = 0; v < graph.values.size(); ++v)
    if (graph.values[v].is_constant()) (*shapes)[v] = graph.values[v].dims;
  for (size_t i = 0; i < graph.inputs.size(); ++i) (*shapes)[graph.inputs[i]] = input_shapes[i];
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    Shape out;
    if (std::string e = infer_shape(graph, n, *shapes, &out); !e.empty()) return node_label(graph, i) + ": " + e;
    if (out.size() > kMaxRank) return node_label(graph, i) + ": output rank " + std::to_string(out.size());
    for (size_t d : out)
      if (d == 0 && !allow_empty) return node_label(graph, i) + ": output shape " + shape_text(out) + " has a 0 dim";
    if (numel(out) > kLimit) return node_label(graph, i) + ": output shape " + shape_text(out) + " is too large";
    (*shapes)[n.output] = std::move(out);
  }
  return "";
}

}  // namespace etrt::xnn
