// The XNNPACK graph mutations of fuzz/structure/graph_mutations.h. Node tables come
// in fifteen shapes (Binary, Unary, Convolution, ...); fields_of() lists each
// shape's value ids, parameters and lists so that one mutation serves every node
// kind.
#include "graph_mutations.h"

#include <algorithm>
#include <string>
#include <utility>

#include "list_mutations.h"
#include "mutation_table.h"

namespace etrt_fuzz {
namespace {

using xnnblob::Operation;

enum class Family {
  None, Binary, Unary, FullyConnected, Convolution, Pooling, Transpose, ResizeBilinear, ConstantPad,
  Concatenation, Elu, Reshape, Slice, Attention, ArgMaxPool2d, LeakyRelu,
};

Family family_of(Operation op) {
  switch (op) {
    case Operation::Add: case Operation::Divide: case Operation::Minimum: case Operation::Multiply:
    case Operation::Subtract: case Operation::Maximum: case Operation::PRelu: case Operation::BatchMatMul:
      return Family::Binary;
    case Operation::Softmax: case Operation::Sigmoid: case Operation::Clamp: case Operation::Floor:
    case Operation::Convert: case Operation::GlobalAveragePool2d: case Operation::SquareRoot:
    case Operation::Ceiling: case Operation::HardSwish: case Operation::Negate: case Operation::Square:
    case Operation::Absolute: case Operation::ReciprocalSquareRoot: case Operation::Log: case Operation::Gelu:
    case Operation::Tanh: case Operation::Exp: case Operation::Sine: case Operation::Copy: case Operation::Cosine:
      return Family::Unary;
    case Operation::Conv2d: case Operation::DepthwiseConv2d: case Operation::ConvTranspose2d:
      return Family::Convolution;
    case Operation::AveragePool2d: case Operation::MaxPool2d: return Family::Pooling;
    case Operation::Concat2: case Operation::Concat3: case Operation::Concat4: case Operation::Concat5:
      return Family::Concatenation;
    case Operation::FullyConnected: return Family::FullyConnected;
    case Operation::Transpose: return Family::Transpose;
    case Operation::ResizeBilinear: return Family::ResizeBilinear;
    case Operation::ConstantPad: return Family::ConstantPad;
    case Operation::Elu: return Family::Elu;
    case Operation::Reshape: return Family::Reshape;
    case Operation::Slice: return Family::Slice;
    case Operation::Attention: return Family::Attention;
    case Operation::ArgMaxPool2d: return Family::ArgMaxPool2d;
    case Operation::LeakyRelu: return Family::LeakyRelu;
    case Operation::NONE: return Family::None;
  }
  return Family::None;  // a type this schema does not have
}

void* new_table(Family family) {
  switch (family) {
    case Family::Binary: return new xnnblob::BinaryT();
    case Family::Unary: return new xnnblob::UnaryT();
    case Family::FullyConnected: return new xnnblob::FullyConnectedT();
    case Family::Convolution: return new xnnblob::ConvolutionT();
    case Family::Pooling: return new xnnblob::PoolingT();
    case Family::Transpose: return new xnnblob::TransposeT();
    case Family::ResizeBilinear: return new xnnblob::ResizeBilinearT();
    case Family::ConstantPad: return new xnnblob::ConstantPadT();
    case Family::Concatenation: return new xnnblob::ConcatenationT();
    case Family::Elu: return new xnnblob::EluT();
    case Family::Reshape: return new xnnblob::ReshapeT();
    case Family::Slice: return new xnnblob::SliceT();
    case Family::Attention: return new xnnblob::AttentionT();
    case Family::ArgMaxPool2d: return new xnnblob::ArgMaxPool2dT();
    case Family::LeakyRelu: return new xnnblob::LeakyReluT();
    case Family::None: break;
  }
  return nullptr;
}

// The fields of one node: value ids it reads and writes, numeric parameters, float parameters, lists.
struct NodeFields {
  std::vector<uint32_t*> inputs, outputs, params;
  std::vector<float*> reals;
  std::vector<std::vector<uint32_t>*> lists;
};

void collect(xnnblob::BinaryT& t, NodeFields& f) { f = {{&t.lhs, &t.rhs}, {&t.output}, {&t.flags}, {}, {}}; }
void collect(xnnblob::UnaryT& t, NodeFields& f) { f = {{&t.input}, {&t.output}, {&t.flags}, {}, {}}; }
void collect(xnnblob::FullyConnectedT& t, NodeFields& f) {
  f = {{&t.input, &t.weights, &t.bias}, {&t.output}, {&t.flags}, {}, {}};
}
void collect(xnnblob::ConvolutionT& t, NodeFields& f) {
  f = {{&t.input, &t.weights, &t.bias},
       {&t.output},
       {&t.pad_top, &t.pad_right, &t.pad_bottom, &t.pad_left, &t.kernel_h, &t.kernel_w, &t.stride_h, &t.stride_w,
        &t.dilation_h, &t.dilation_w, &t.group_in_channels, &t.group_out_channels, &t.groups, &t.adjust_h,
        &t.adjust_w, &t.flags},
       {},
       {}};
}
void collect(xnnblob::PoolingT& t, NodeFields& f) {
  f = {{&t.input},
       {&t.output},
       {&t.pad_top, &t.pad_right, &t.pad_bottom, &t.pad_left, &t.window_h, &t.window_w, &t.stride_h, &t.stride_w,
        &t.dilation_h, &t.dilation_w, &t.flags},
       {},
       {}};
}
void collect(xnnblob::TransposeT& t, NodeFields& f) { f = {{&t.input}, {&t.output}, {&t.rank, &t.flags}, {}, {&t.permutation}}; }
void collect(xnnblob::ResizeBilinearT& t, NodeFields& f) {
  f = {{&t.input}, {&t.output}, {&t.height, &t.width, &t.flags}, {}, {}};
}
void collect(xnnblob::ConstantPadT& t, NodeFields& f) {
  f = {{&t.input}, {&t.output}, {&t.flags}, {&t.value}, {&t.before, &t.after}};
}
void collect(xnnblob::ConcatenationT& t, NodeFields& f) {
  f = {{&t.input1, &t.input2, &t.input3, &t.input4, &t.input5}, {&t.output}, {&t.axis, &t.flags}, {}, {}};
}
void collect(xnnblob::EluT& t, NodeFields& f) { f = {{&t.input}, {&t.output}, {&t.flags}, {&t.alpha}, {}}; }
void collect(xnnblob::ReshapeT& t, NodeFields& f) { f = {{&t.input}, {&t.output}, {&t.rank, &t.flags}, {}, {&t.shape}}; }
void collect(xnnblob::SliceT& t, NodeFields& f) {
  f = {{&t.input}, {&t.output}, {&t.rank, &t.flags}, {}, {&t.begins, &t.sizes}};
}
void collect(xnnblob::AttentionT& t, NodeFields& f) {
  f = {{&t.query, &t.key, &t.value, &t.scale, &t.mask}, {&t.output}, {&t.flags}, {}, {}};
}
void collect(xnnblob::ArgMaxPool2dT& t, NodeFields& f) {
  f = {{&t.input},
       {&t.output_values, &t.output_indices},
       {&t.pad_top, &t.pad_right, &t.pad_bottom, &t.pad_left, &t.window_h, &t.window_w, &t.flags},
       {},
       {}};
}
void collect(xnnblob::LeakyReluT& t, NodeFields& f) { f = {{&t.input}, {&t.output}, {&t.flags}, {&t.slope}, {}}; }

template <typename T>
void collect_table(void* table, NodeFields& f) {
  collect(*static_cast<T*>(table), f);
}

NodeFields fields_of(xnnblob::NodeT& node) {
  NodeFields f;
  void* table = node.op.value;
  if (table != nullptr) {
    switch (family_of(node.op.type)) {
      case Family::Binary: collect_table<xnnblob::BinaryT>(table, f); break;
      case Family::Unary: collect_table<xnnblob::UnaryT>(table, f); break;
      case Family::FullyConnected: collect_table<xnnblob::FullyConnectedT>(table, f); break;
      case Family::Convolution: collect_table<xnnblob::ConvolutionT>(table, f); break;
      case Family::Pooling: collect_table<xnnblob::PoolingT>(table, f); break;
      case Family::Transpose: collect_table<xnnblob::TransposeT>(table, f); break;
      case Family::ResizeBilinear: collect_table<xnnblob::ResizeBilinearT>(table, f); break;
      case Family::ConstantPad: collect_table<xnnblob::ConstantPadT>(table, f); break;
      case Family::Concatenation: collect_table<xnnblob::ConcatenationT>(table, f); break;
      case Family::Elu: collect_table<xnnblob::EluT>(table, f); break;
      case Family::Reshape: collect_table<xnnblob::ReshapeT>(table, f); break;
      case Family::Slice: collect_table<xnnblob::SliceT>(table, f); break;
      case Family::Attention: collect_table<xnnblob::AttentionT>(table, f); break;
      case Family::ArgMaxPool2d: collect_table<xnnblob::ArgMaxPool2dT>(table, f); break;
      case Family::LeakyRelu: collect_table<xnnblob::LeakyReluT>(table, f); break;
      case Family::None: break;
    }
  }
  if (node.clamp) f.reals.insert(f.reals.end(), {&node.clamp->low, &node.clamp->high});
  return f;
}

xnnblob::TensorValueT* tensor_of(xnnblob::ValueT& value) {
  if (auto* t = value.kind.AsTensorValue()) return t;
  if (auto* q = value.kind.AsQuantizedTensorValue()) return q->base.get();
  return nullptr;
}

// Some value's id (most of the time), or any 32-bit id.
uint32_t some_value_id(xnnblob::GraphT& graph, uint32_t current, Random& random) {
  if (!graph.values.empty() && !random.one_in(3))
    if (xnnblob::TensorValueT* t = tensor_of(*random.pick(graph.values))) return t->id;
  return random.uint32(current, static_cast<uint32_t>(graph.values.size()));
}

template <typename Union>
void drop_table(Union& u) {
  auto type = u.type;
  u.Reset();
  u.type = type;
}

constexpr xnnblob::ElementType kElementTypes[] = {
    xnnblob::ElementType::invalid, xnnblob::ElementType::fp32,   xnnblob::ElementType::fp16,
    xnnblob::ElementType::qint8,   xnnblob::ElementType::quint8, xnnblob::ElementType::qint32,
    xnnblob::ElementType::qcint8,  xnnblob::ElementType::qcint32, xnnblob::ElementType::qcint4,
    xnnblob::ElementType::qdint8,  xnnblob::ElementType::qbint4, xnnblob::ElementType::qpint8,
    xnnblob::ElementType::int32,   xnnblob::ElementType::pfp32,  xnnblob::ElementType::bf16,
    static_cast<xnnblob::ElementType>(15), static_cast<xnnblob::ElementType>(-1)};

bool node_kind(XnnBlob& blob, Random& random) {
  auto& nodes = blob.graph->nodes;
  if (nodes.empty()) return false;
  xnnblob::NodeT& node = *random.pick(nodes);
  const int last = static_cast<int>(Operation::MAX);
  Family family = family_of(node.op.type);
  std::vector<Operation> same;
  for (int i = 1; i <= last; ++i)
    if (family_of(static_cast<Operation>(i)) == family && static_cast<Operation>(i) != node.op.type)
      same.push_back(static_cast<Operation>(i));
  if (family != Family::None && node.op.value != nullptr && !same.empty() && random.one_in(2)) {
    node.op.type = random.pick(same);  // the same table read as another operation
    return true;
  }
  // Another table shape, wired to the same values.
  NodeFields old = fields_of(node);
  std::vector<uint32_t> inputs, outputs;
  for (uint32_t* id : old.inputs) inputs.push_back(*id);
  for (uint32_t* id : old.outputs) outputs.push_back(*id);
  auto op = static_cast<Operation>(1 + random.below(static_cast<size_t>(last)));
  if (random.one_in(16)) op = static_cast<Operation>(last + 1 + static_cast<int>(random.below(static_cast<size_t>(255 - last))));
  node.op.Reset();
  node.op.type = op;
  node.op.value = new_table(family_of(op));
  NodeFields fresh = fields_of(node);
  for (size_t i = 0; i < fresh.inputs.size(); ++i)
    *fresh.inputs[i] = inputs.empty() ? some_value_id(*blob.graph, 0, random) : inputs[i % inputs.size()];
  for (size_t i = 0; i < fresh.outputs.size(); ++i)
    *fresh.outputs[i] = outputs.empty() ? some_value_id(*blob.graph, 0, random) : outputs[i % outputs.size()];
  for (uint32_t* p : fresh.params) *p = 1;
  return true;
}

// A union that names a type without its table: the verifier accepts it.
bool null_union(XnnBlob& blob, Random& random) {
  xnnblob::GraphT& graph = *blob.graph;
  switch (random.below(3)) {
    case 0:
      if (graph.nodes.empty()) return false;
      drop_table(random.pick(graph.nodes)->op);
      return true;
    case 1:
      if (graph.values.empty()) return false;
      drop_table(random.pick(graph.values)->kind);
      return true;
    default: {
      std::vector<xnnblob::QuantizedTensorValueT*> quantized;
      for (auto& value : graph.values)
        if (auto* q = value->kind.AsQuantizedTensorValue()) quantized.push_back(q);
      if (quantized.empty()) return false;
      xnnblob::QuantizedTensorValueT& q = *random.pick(quantized);
      if (random.one_in(4)) q.base.reset();
      else drop_table(q.quantization);
      return true;
    }
  }
}

bool value_rewire(XnnBlob& blob, Random& random) {
  if (blob.graph->nodes.empty()) return false;
  NodeFields f = fields_of(*random.pick(blob.graph->nodes));
  std::vector<uint32_t*> ids = f.inputs;
  ids.insert(ids.end(), f.outputs.begin(), f.outputs.end());
  if (ids.empty()) return false;
  uint32_t& id = *random.pick(ids);
  id = some_value_id(*blob.graph, id, random);
  return true;
}

// A value loses a consumer: the node reading it goes, or reads something else instead -- most often
// another value of the same shape and element type (one there before the reader runs, when there is one), so
// that the graph still passes the shape checks and reaches XNNPACK with a node output nothing reads.
bool drop_consumer(XnnBlob& blob, Random& random) {
  auto& nodes = blob.graph->nodes;
  struct Use {
    size_t node;
    uint32_t* field;
  };
  std::vector<Use> uses;
  for (size_t n = 0; n < nodes.size(); ++n)
    for (uint32_t* input : fields_of(*nodes[n]).inputs)
      if (*input != 0xFFFFFFFFu) uses.push_back({n, input});
  if (uses.empty()) return false;
  Use use = random.pick(uses);
  if (random.one_in(3)) {
    nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(use.node));
    return true;
  }
  const xnnblob::TensorValueT* dropped = nullptr;
  std::vector<const xnnblob::TensorValueT*> tensors;
  for (auto& value : blob.graph->values)
    if (const xnnblob::TensorValueT* t = tensor_of(*value)) {
      tensors.push_back(t);
      if (t->id == *use.field) dropped = t;
    }
  // Values there before the reader runs (graph inputs, constants, earlier nodes' outputs) keep the order valid.
  std::vector<uint32_t> earlier;
  for (size_t n = 0; n < use.node; ++n)
    for (uint32_t* output : fields_of(*nodes[n]).outputs) earlier.push_back(*output);
  std::vector<uint32_t> available_alike, alike, others;
  for (const xnnblob::TensorValueT* t : tensors) {
    if (t->id == *use.field) continue;
    others.push_back(t->id);
    if (dropped == nullptr || t->shape != dropped->shape || t->element_type != dropped->element_type) continue;
    alike.push_back(t->id);
    if ((t->io_flags & 1) != 0 || t->constant_index != 0 || std::find(earlier.begin(), earlier.end(), t->id) != earlier.end())
      available_alike.push_back(t->id);
  }
  if (!available_alike.empty() && !random.one_in(3)) *use.field = random.pick(available_alike);
  else if (!alike.empty() && !random.one_in(4)) *use.field = random.pick(alike);
  else *use.field = others.empty() ? some_value_id(*blob.graph, *use.field, random) : random.pick(others);
  return true;
}

bool node_list(XnnBlob& blob, Random& random) { return change_owned_length(blob.graph->nodes, random); }

bool value_field(XnnBlob& blob, Random& random) {
  xnnblob::GraphT& graph = *blob.graph;
  if (graph.values.empty()) return false;
  xnnblob::TensorValueT* t = tensor_of(*random.pick(graph.values));
  if (t == nullptr) return false;
  switch (random.below(9)) {
    case 0: t->element_type = kElementTypes[random.below(sizeof kElementTypes / sizeof kElementTypes[0])]; return true;
    case 1: t->rank = random.uint32(t->rank, static_cast<uint32_t>(t->shape.size())); return true;
    case 2:
      if (t->shape.empty()) return false;
      if (random.one_in(4)) {
        uint32_t dim = random.uint32(0, 0);
        for (uint32_t& d : t->shape) d = dim;
      } else {
        uint32_t& dim = random.pick(t->shape);
        dim = random.uint32(dim, 0);
      }
      return true;
    case 3: return change_length(t->shape, random, random.uint32(1, 0));
    case 4: t->constant_index = random.uint32(t->constant_index, static_cast<uint32_t>(graph.constants.size())); return true;
    case 5: t->external_index = random.uint32(t->external_index, graph.num_externals); return true;
    case 6: t->io_flags = static_cast<uint32_t>(random.below(5)); return true;
    case 7: t->id = some_value_id(graph, t->id, random); return true;
    default: t->dynamic_quant_type = kElementTypes[random.below(sizeof kElementTypes / sizeof kElementTypes[0])]; return true;
  }
}

void fresh_quantization(xnnblob::QuantizationUnion& q, Random& random) {
  switch (random.below(4)) {
    case 0: {
      xnnblob::PerTensorT p;
      p.scale = static_cast<float>(random.real(0.5));
      p.zero_point = random.int32(0);
      q.Set(std::move(p));
      break;
    }
    case 1: {
      xnnblob::PerChannelT p;
      p.scales.assign(1 + random.below(4), static_cast<float>(random.real(0.5)));
      p.axis = random.int32(0);
      q.Set(std::move(p));
      break;
    }
    case 2: {
      xnnblob::PerTokenDynamicT p;
      p.non_batch_dims = random.int32(1);
      q.Set(std::move(p));
      break;
    }
    default: {
      xnnblob::PerChannelGroupT p;
      p.scales.assign(1 + random.below(4), 0.25f);
      p.group = random.int32(32);
      q.Set(std::move(p));
      break;
    }
  }
}

bool value_kind(XnnBlob& blob, Random& random) {
  xnnblob::GraphT& graph = *blob.graph;
  if (graph.values.empty()) return false;
  xnnblob::ValueKindUnion& kind = random.pick(graph.values)->kind;
  if (auto* t = kind.AsTensorValue()) {  // becomes quantized
    xnnblob::QuantizedTensorValueT q;
    q.base = std::make_unique<xnnblob::TensorValueT>(*t);
    fresh_quantization(q.quantization, random);
    kind.Set(std::move(q));
  } else if (auto* q = kind.AsQuantizedTensorValue(); q != nullptr && q->base) {
    xnnblob::TensorValueT base = *q->base;
    kind.Set(std::move(base));
  } else {
    kind.Reset();
    kind.type = static_cast<xnnblob::ValueKind>(random.below(256));
  }
  return true;
}

bool quantization(XnnBlob& blob, Random& random) {
  std::vector<xnnblob::QuantizedTensorValueT*> quantized;
  for (auto& value : blob.graph->values)
    if (auto* q = value->kind.AsQuantizedTensorValue()) quantized.push_back(q);
  if (quantized.empty()) return false;
  xnnblob::QuantizationUnion& q = random.pick(quantized)->quantization;
  if (q.value == nullptr || random.one_in(4)) {
    fresh_quantization(q, random);
    return true;
  }
  auto scale = [&](float s) { return static_cast<float>(random.real(s)); };
  if (auto* p = q.AsPerTensor()) {
    if (random.one_in(2)) p->scale = scale(p->scale);
    else p->zero_point = random.int32(p->zero_point);
  } else if (auto* c = q.AsPerChannel()) {
    switch (random.below(5)) {
      case 0: return change_length(c->scales, random, 1.0f);
      case 1:
        if (c->scales.empty()) return false;
        random.pick(c->scales) = scale(1.0f);
        break;
      case 2: c->axis = random.int32(c->axis); break;
      case 3: c->scales_buffer = random.uint32(c->scales_buffer, 4); break;
      default: c->scale_count = random.uint32(c->scale_count, static_cast<uint32_t>(c->scales.size())); break;
    }
  } else if (auto* d = q.AsPerTokenDynamic()) {
    d->non_batch_dims = random.int32(d->non_batch_dims);
  } else if (auto* g = q.AsPerChannelGroup()) {
    switch (random.below(4)) {
      case 0: return change_length(g->scales, random, 1.0f);
      case 1: g->axis = random.int32(g->axis); break;
      case 2: g->group = random.int32(g->group); break;
      default: g->scale_count = random.uint32(g->scale_count, static_cast<uint32_t>(g->scales.size())); break;
    }
  }
  return true;
}

bool node_param(XnnBlob& blob, Random& random) {
  if (blob.graph->nodes.empty()) return false;
  NodeFields f = fields_of(*random.pick(blob.graph->nodes));
  switch (random.below(3)) {
    case 0: {
      if (f.params.empty()) return false;
      uint32_t& p = *random.pick(f.params);
      p = random.uint32(p, 4);
      return true;
    }
    case 1: {
      if (f.reals.empty()) return false;
      float& r = *random.pick(f.reals);
      r = static_cast<float>(random.real(r));
      return true;
    }
    default: {
      if (f.lists.empty()) return false;
      std::vector<uint32_t>& list = *random.pick(f.lists);
      if (list.empty() || random.one_in(2)) return change_length(list, random, random.uint32(1, 4));
      uint32_t& entry = random.pick(list);
      entry = random.uint32(entry, static_cast<uint32_t>(list.size()));
      return true;
    }
  }
}

bool graph_io(XnnBlob& blob, Random& random) {
  xnnblob::GraphT& graph = *blob.graph;
  if (random.one_in(4)) {
    graph.num_externals = random.uint32(graph.num_externals, static_cast<uint32_t>(graph.values.size()));
    return true;
  }
  std::vector<uint32_t>& ids = random.one_in(2) ? graph.input_ids : graph.output_ids;
  if (ids.empty() || random.one_in(2)) return change_length(ids, random, some_value_id(graph, 0, random));
  uint32_t& id = random.pick(ids);
  id = some_value_id(graph, id, random);
  return true;
}

bool constants(XnnBlob& blob, Random& random) {
  auto& table = blob.graph->constants;
  if (table.empty() || random.one_in(4)) {
    if (random.one_in(2) || table.empty()) {
      blob.constants.resize(random.one_in(2) ? blob.constants.size() / 2 : blob.constants.size() + 64);
      return true;
    }
    return change_owned_length(table, random);
  }
  xnnblob::ConstantEntryT& entry = *random.pick(table);
  switch (random.below(3)) {
    case 0: entry.offset = random.uint64(entry.offset); return true;
    case 1: entry.size = random.uint64(entry.size); return true;
    default: {
      const std::string keys[] = {random.pick(table)->key, "missing", "", std::string("a\0b", 3)};
      entry.key = keys[random.below(4)];
      return true;
    }
  }
}

bool values_table(XnnBlob& blob, Random& random) {
  auto& values = blob.graph->values;
  if (values.empty() || !random.one_in(2)) return change_owned_length(values, random);
  auto copy = std::make_unique<xnnblob::ValueT>(*random.pick(values));  // a new value with an unused id
  uint32_t next = 0;
  for (auto& value : values)
    if (xnnblob::TensorValueT* t = tensor_of(*value)) next = std::max(next, t->id + 1);
  if (xnnblob::TensorValueT* t = tensor_of(*copy)) t->id = next;
  values.push_back(std::move(copy));
  return true;
}

constexpr Mutation<XnnBlob> kMutations[] = {
    {"node_kind", node_kind, 3},         {"null_union", null_union, 2},     {"value_rewire", value_rewire, 5},
    {"drop_consumer", drop_consumer, 3}, {"node_list", node_list, 2},       {"graph_value_field", value_field, 5},
    {"graph_value_kind", value_kind, 1}, {"quantization", quantization, 3}, {"node_param", node_param, 4},
    {"graph_io", graph_io, 2},           {"constants", constants, 2},       {"graph_values_table", values_table, 2},
};

}  // namespace

const char* mutate_graph(XnnBlob& blob, Random& random) { return apply_one(kMutations, blob, random); }

const std::vector<const char*>& graph_mutation_names() {
  static const std::vector<const char*> names = names_of(kMutations);
  return names;
}

const char* cross_graphs(XnnBlob& blob, const XnnBlob& donor, Random& random) {
  xnnblob::GraphT& graph = *blob.graph;
  if (random.one_in(2) && !donor.graph->nodes.empty()) {
    auto node = std::make_unique<xnnblob::NodeT>(*donor.graph->nodes[random.below(donor.graph->nodes.size())]);
    graph.nodes.insert(graph.nodes.begin() + static_cast<std::ptrdiff_t>(random.below(graph.nodes.size() + 1)),
                       std::move(node));
    return "cross_node";
  }
  if (donor.graph->values.empty()) return nullptr;
  graph.values.push_back(std::make_unique<xnnblob::ValueT>(*donor.graph->values[random.below(donor.graph->values.size())]));
  return "cross_graph_value";
}

}  // namespace etrt_fuzz
