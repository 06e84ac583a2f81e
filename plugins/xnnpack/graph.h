// The delegate blob, parsed and verified into plain C++ (nothing here points
// into the blob, which is only valid during init).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace etrt::xnn {

constexpr uint32_t kNone = 0xFFFFFFFFu;   // "no value" in the blob (XNN_INVALID_VALUE_ID)
constexpr size_t kMaxRank = 6;            // XNN_MAX_TENSOR_DIMS
constexpr uint32_t kFlagInput = 1;        // XNN_VALUE_FLAG_EXTERNAL_INPUT
constexpr uint32_t kFlagOutput = 2;       // XNN_VALUE_FLAG_EXTERNAL_OUTPUT

using Shape = std::vector<size_t>;

enum class Op : uint8_t {
  // Debian's XNNPACK (February 2022) has a subgraph node for these.
  FullyConnected, Conv2d, DepthwiseConv2d,
  Add, Subtract, Multiply, Divide, Minimum, Maximum,
  Clamp, Softmax, Sigmoid, Abs, Negate, Square, SquareRoot, Floor, Ceiling, HardSwish, LeakyRelu, Elu,
  MaxPool2d, AvgPool2d, GlobalAvgPool2d,
  Reshape, ConstantPad,
  ConvTranspose2d, PRelu, ResizeBilinear,
  // Newer XNNPACK only: run by the plugin's own code.
  Transpose, BatchMatMul, Concat, Slice, Copy,
  Tanh, Gelu, Exp, Log, Sin, Cos, ReciprocalSquareRoot,
  // Float <-> quantized (XNNPACK's xnn_define_convert).
  Convert,
  // FullyConnected on 8-bit dynamically quantized activations (the blob's Convert to qdint8 folded in) with
  // 8-bit per-channel or 4-bit group-wise weights: Debian's XNNPACK has no qd8 kernels, the plugin runs it.
  DynamicFullyConnected,
  // FullyConnected with qint8 input and output and per-channel (qcint8) weights: Debian's XNNPACK has only
  // per-tensor quantized FullyConnected, the plugin runs it.
  QuantizedFullyConnected,
};

// Element types of values (the blob's numbering is XNNPACK's xnn_datatype; these are etrt's).
enum class DType : uint8_t {
  fp32,
  qint8,    // per-tensor scale and zero point, int8
  quint8,   // per-tensor scale and zero point, uint8
  qint32,   // per-tensor scale (zero point 0), int32 (biases)
  qcint8,   // per-channel scales, int8 constants (weights)
  qcint32,  // per-channel scales, int32 constants (biases)
  qdint8,   // int8 with per-row scale and zero point computed at run time (dynamic quantization)
  qbint4,   // 4-bit weights with per-group bf16 scales, two per byte (+8 offset), constants only
  qcint4,   // 4-bit weights with per-channel scales, packed as qbint4, constants only
};

inline bool is_4bit(DType type) { return type == DType::qbint4 || type == DType::qcint4; }

const char* dtype_name(DType type);
size_t element_size(DType type);  // bytes per element (4-bit types: 1, a byte holds two)
// Bytes of a tensor of this type and shape (4-bit rows are padded to whole bytes).
size_t value_bytes(DType type, const Shape& shape);
inline bool is_quantized(DType type) { return type != DType::fp32; }

const char* op_name(Op op);

// Node kinds the plugin runs: Debian's XNNPACK has no subgraph node for them, or (Divide) its kernel divides the
// masked-off lanes of a tail too, 0 / 0, an invalid operation on every run that would hide the one that makes a
// real NaN (invalid_operation.h).
inline bool runs_in_plugin_op(Op op) {
  switch (op) {
    case Op::Divide:
    case Op::Transpose: case Op::BatchMatMul: case Op::Concat: case Op::Slice: case Op::Copy:
    case Op::Tanh: case Op::Gelu: case Op::Exp: case Op::Log: case Op::Sin: case Op::Cos:
    case Op::ReciprocalSquareRoot: case Op::DynamicFullyConnected: case Op::QuantizedFullyConnected:
      return true;
    default:
      return false;
  }
}

struct Value {
  uint32_t id = 0;                 // the blob's id for it
  Shape dims;                      // as declared (the upper bound for dynamic shapes)
  const void* data = nullptr;      // constants: named data (lives with the program) or owned copy
  DType dtype = DType::fp32;
  float scale = 1.0f;              // per-tensor quantization
  int32_t zero_point = 0;
  std::vector<float> scales;       // per-channel (qcint8/qcint32/qcint4) or per-group (qbint4, row-major [out, groups])
  uint32_t channel_dim = 0;        // per-channel: the dim the scales run along
  uint32_t group_size = 0;         // qbint4
  const float* f32() const { return static_cast<const float*>(data); }
  bool same_quantization(const Value& o) const {
    return dtype == o.dtype && scale == o.scale && zero_point == o.zero_point && scales == o.scales;
  }
  uint32_t external = kNone;       // position in the delegate call's arguments
  uint32_t io = 0;                 // kFlagInput / kFlagOutput
  int32_t producer = -1;           // node index, -1 for constants and inputs
  bool is_constant() const { return data != nullptr; }
  bool fp16 = false;               // stored as fp16 by the program (boundary or constant); fp32 here
};

struct Node {
  Op op{};
  uint32_t debug_handle = 0;
  uint32_t flags = 0;
  std::vector<uint32_t> inputs;    // value indices; kNone for an absent bias
  uint32_t output = kNone;         // value index
  float out_min = -std::numeric_limits<float>::infinity();
  float out_max = std::numeric_limits<float>::infinity();
  // Window ops: top, right, bottom, left; kernel/stride/dilation as (h, w).
  uint32_t pad[4] = {0, 0, 0, 0};
  uint32_t kernel[2] = {1, 1};
  uint32_t stride[2] = {1, 1};
  uint32_t dilation[2] = {1, 1};
  uint32_t adjust[2] = {0, 0};     // ConvTranspose2d: extra output rows/columns (bottom, right)
  uint32_t new_size[2] = {0, 0};   // ResizeBilinear: output height, width
  uint32_t groups = 1, group_in = 0, group_out = 0;
  uint32_t axis = 0;
  float alpha = 0.0f;              // leaky relu slope, elu alpha, pad value
  std::vector<uint32_t> list_a;    // permutation / new shape / slice begins / pad before
  std::vector<uint32_t> list_b;    // slice sizes / pad after
  bool has_clamp() const {
    return out_min != -std::numeric_limits<float>::infinity() || out_max != std::numeric_limits<float>::infinity();
  }
};

struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<uint32_t> inputs;    // value indices of external inputs, by external index
  std::vector<uint32_t> outputs;   // value indices of external outputs, by external index
  uint32_t num_externals = 0;
  std::vector<std::unique_ptr<float[]>> owned;  // constants copied out of the blob
  bool quantized = false;          // some value is quantized (Debian's XNNPACK does not see NaN there anyway)
};

// Looks up named data: returns "" and sets data/size, or an error message.
using NamedDataLookup = std::function<std::string(const char* key, const void** data, size_t* size)>;

// Parses and verifies a delegate blob. Returns "" or what is wrong with it.
// `unsupported` is set when the blob is well-formed but uses something this
// delegate cannot run (a quantized value, an unknown node type).
std::string parse_blob(const uint8_t* blob, size_t size, const NamedDataLookup& named_data, Graph* graph,
                       bool* unsupported);

// Output shape of a node from its input shapes ("" or an error).
std::string infer_shape(const Graph& graph, const Node& node, const std::vector<Shape>& shapes, Shape* out);

// Shapes of every value given the inputs' shapes (by external input order). A 0 dim is an error unless
// allow_empty (XNNPACK cannot run empty tensors; the plugin's reference path can).
std::string infer_all(const Graph& graph, const std::vector<Shape>& input_shapes, std::vector<Shape>* shapes,
                      bool allow_empty = false);

std::string shape_text(const Shape& shape);
std::string node_label(const Graph& graph, size_t index);
size_t numel(const Shape& shape);

}  // namespace etrt::xnn
