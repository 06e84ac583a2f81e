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
  // Newer XNNPACK only: run by the plugin's own code.
  Transpose, BatchMatMul, Concat, Slice, Copy,
  Tanh, Gelu, Exp, Log, Sin, Cos, ReciprocalSquareRoot,
};

const char* op_name(Op op);

struct Value {
  uint32_t id = 0;                 // the blob's id for it
  Shape dims;                      // as declared (the upper bound for dynamic shapes)
  const float* data = nullptr;     // constants: named data (lives with the program) or owned copy
  uint32_t external = kNone;       // position in the delegate call's arguments
  uint32_t io = 0;                 // kFlagInput / kFlagOutput
  int32_t producer = -1;           // node index, -1 for constants and inputs
  bool is_constant() const { return data != nullptr; }
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

// Shapes of every value given the inputs' shapes (by external input order).
std::string infer_all(const Graph& graph, const std::vector<Shape>& input_shapes, std::vector<Shape>* shapes);

std::string shape_text(const Shape& shape);
std::string node_label(const Graph& graph, size_t index);
size_t numel(const Shape& shape);

}  // namespace etrt::xnn
