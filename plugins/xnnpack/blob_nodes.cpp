// Reading a delegate blob's nodes: every operation mapped to etrt's Op with its
// parameters, every value reference resolved, the node order checked, and the
// quantized node forms this delegate runs chosen.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "blob_parser.h"

namespace etrt::xnn {

namespace {
constexpr size_t kMaxNodes = 1u << 20;
}  // namespace

// Maps a blob id to a value index.
std::string BlobParser::ref(size_t node, const char* what, uint32_t id, uint32_t* out, bool optional) {
  if (optional && id == kNone) {
    *out = kNone;
    return "";
  }
  auto it = id_to_index.find(id);
  if (it == id_to_index.end())
    return "node " + std::to_string(node) + " (" + op_name(g->nodes[node].op) + "): " + what + " id " +
           (id == kNone ? std::string("0xFFFFFFFF") : std::to_string(id)) + " is not a value";
  *out = it->second;
  return "";
}

std::string BlobParser::read_node(size_t i, const fb::Node* fn) {
  Node& n = g->nodes[i];
  n.debug_handle = fn->debug_handle();
  if (const fb::ClampRange* c = fn->clamp()) {
    n.out_min = c->low();
    n.out_max = c->high();
    if (!(n.out_min <= n.out_max))  // also rejects NaN
      return "node " + std::to_string(i) + ": output range [" + std::to_string(n.out_min) + ", " +
             std::to_string(n.out_max) + "] is empty or NaN";
  }
  auto in = [&](const char* what, uint32_t id, bool optional = false) -> std::string {
    uint32_t index = kNone;
    std::string e = ref(i, what, id, &index, optional);
    if (e.empty()) n.inputs.push_back(index);
    return e;
  };
  auto out = [&](uint32_t id) { return ref(i, "output", id, &n.output); };
#define TRY(expr) \
if (std::string e_ = (expr); !e_.empty()) return e_
  auto unary = [&](Op op, const fb::Unary* u) -> std::string {
    n.op = op;
    n.flags = u->flags();
    TRY(in("input", u->input()));
    return out(u->output());
  };
  auto binary = [&](Op op, const fb::Binary* b) -> std::string {
    n.op = op;
    n.flags = b->flags();
    TRY(in("first input", b->lhs()));
    TRY(in("second input", b->rhs()));
    return out(b->output());
  };
  auto conv = [&](Op op, const fb::Convolution* c) -> std::string {
    n.op = op;
    n.pad[0] = c->pad_top(), n.pad[1] = c->pad_right(), n.pad[2] = c->pad_bottom(), n.pad[3] = c->pad_left();
    n.kernel[0] = c->kernel_h(), n.kernel[1] = c->kernel_w();
    n.stride[0] = c->stride_h(), n.stride[1] = c->stride_w();
    n.dilation[0] = c->dilation_h(), n.dilation[1] = c->dilation_w();
    n.group_in = c->group_in_channels(), n.group_out = c->group_out_channels(), n.groups = c->groups();
    n.flags = c->flags();
    TRY(in("input", c->input()));
    TRY(in("weights", c->weights()));
    TRY(in("bias", c->bias(), /*optional=*/true));
    return out(c->output());
  };
  auto pool = [&](Op op, const fb::Pooling* p) -> std::string {
    n.op = op;
    n.pad[0] = p->pad_top(), n.pad[1] = p->pad_right(), n.pad[2] = p->pad_bottom(), n.pad[3] = p->pad_left();
    n.kernel[0] = p->window_h(), n.kernel[1] = p->window_w();
    n.stride[0] = p->stride_h(), n.stride[1] = p->stride_w();
    n.dilation[0] = p->dilation_h(), n.dilation[1] = p->dilation_w();
    n.flags = p->flags();
    TRY(in("input", p->input()));
    return out(p->output());
  };
  auto concat = [&](const fb::Concatenation* c, int count) -> std::string {
    n.op = Op::Concat;
    n.axis = c->axis();
    n.flags = c->flags();
    const uint32_t ids[5] = {c->input1(), c->input2(), c->input3(), c->input4(), c->input5()};
    for (int k = 0; k < count; ++k) TRY(in("input", ids[k]));
    return out(c->output());
  };
  // Transpose, Reshape and Slice state their rank beside one or two lists (already in list_a, list_b)
  // that must each have that many entries.
  auto ranked = [&](const char* kind, const auto* node, const char* list_a_name,
                    const char* list_b_name) -> std::string {
    n.flags = node->flags();
    const uint32_t rank = node->rank();
    if (rank != n.list_a.size() || (list_b_name && rank != n.list_b.size())) {
      std::string e = "node " + std::to_string(i) + " (" + kind + "): rank " + std::to_string(rank) + " but " +
                      std::to_string(n.list_a.size()) + " " + list_a_name;
      if (list_b_name) e += " and " + std::to_string(n.list_b.size()) + " " + list_b_name;
      return e;
    }
    TRY(in("input", node->input()));
    return out(node->output());
  };
  using T = fb::Operation;
  switch (fn->op_type()) {
    case T::Add: return binary(Op::Add, fn->op_as_Add());
    case T::Subtract: return binary(Op::Subtract, fn->op_as_Subtract());
    case T::Multiply: return binary(Op::Multiply, fn->op_as_Multiply());
    case T::Divide: return binary(Op::Divide, fn->op_as_Divide());
    case T::Minimum: return binary(Op::Minimum, fn->op_as_Minimum());
    case T::Maximum: return binary(Op::Maximum, fn->op_as_Maximum());
    case T::BatchMatMul: return binary(Op::BatchMatMul, fn->op_as_BatchMatMul());
    case T::FullyConnected: {
      const fb::FullyConnected* f = fn->op_as_FullyConnected();
      n.op = Op::FullyConnected;
      n.flags = f->flags();
      TRY(in("input", f->input()));
      TRY(in("weights", f->weights()));
      TRY(in("bias", f->bias(), /*optional=*/true));
      return out(f->output());
    }
    case T::Softmax: return unary(Op::Softmax, fn->op_as_Softmax());
    case T::Sigmoid: return unary(Op::Sigmoid, fn->op_as_Sigmoid());
    case T::Clamp: return unary(Op::Clamp, fn->op_as_Clamp());
    case T::Floor: return unary(Op::Floor, fn->op_as_Floor());
    case T::Ceiling: return unary(Op::Ceiling, fn->op_as_Ceiling());
    case T::SquareRoot: return unary(Op::SquareRoot, fn->op_as_SquareRoot());
    case T::HardSwish: return unary(Op::HardSwish, fn->op_as_HardSwish());
    case T::Negate: return unary(Op::Negate, fn->op_as_Negate());
    case T::Square: return unary(Op::Square, fn->op_as_Square());
    case T::Absolute: return unary(Op::Abs, fn->op_as_Absolute());
    case T::GlobalAveragePool2d: return unary(Op::GlobalAvgPool2d, fn->op_as_GlobalAveragePool2d());
    case T::ReciprocalSquareRoot: return unary(Op::ReciprocalSquareRoot, fn->op_as_ReciprocalSquareRoot());
    case T::Log: return unary(Op::Log, fn->op_as_Log());
    case T::Gelu: return unary(Op::Gelu, fn->op_as_Gelu());
    case T::Tanh: return unary(Op::Tanh, fn->op_as_Tanh());
    case T::Exp: return unary(Op::Exp, fn->op_as_Exp());
    case T::Sine: return unary(Op::Sin, fn->op_as_Sine());
    case T::Cosine: return unary(Op::Cos, fn->op_as_Cosine());
    case T::Copy: return unary(Op::Copy, fn->op_as_Copy());
    case T::Convert: return unary(Op::Convert, fn->op_as_Convert());
    case T::Conv2d: return conv(Op::Conv2d, fn->op_as_Conv2d());
    case T::ConvTranspose2d: {
      const fb::Convolution* c = fn->op_as_ConvTranspose2d();
      n.adjust[0] = c->adjust_h(), n.adjust[1] = c->adjust_w();
      return conv(Op::ConvTranspose2d, c);
    }
    case T::PRelu: return binary(Op::PRelu, fn->op_as_PRelu());
    case T::ResizeBilinear: {
      const fb::ResizeBilinear* r = fn->op_as_ResizeBilinear();
      n.op = Op::ResizeBilinear;
      n.flags = r->flags();
      n.new_size[0] = r->height(), n.new_size[1] = r->width();
      TRY(in("input", r->input()));
      return out(r->output());
    }
    case T::ArgMaxPool2d:
      // ExecuTorch 1.5.1 claims max.dim only when its indices go unused, and then serializes a MaxPooling2d;
      // the index output (a node's second output) has no place in this delegate's one-output nodes.
      return fail_unsupported("node " + std::to_string(i) +
                              ": operation ArgMaxPool2d (max pooling with indices) is not supported by this "
                              "XNNPACK delegate: nodes with an index output are not implemented");
    case T::Attention:
      return fail_unsupported("node " + std::to_string(i) +
                              ": operation ScaledDotProductAttention is not supported by this XNNPACK delegate "
                              "(Debian's XNNPACK has no attention node, and ExecuTorch 1.5.1 lowers attention "
                              "as BatchMatrixMultiply and Softmax nodes)");
    case T::DepthwiseConv2d: return conv(Op::DepthwiseConv2d, fn->op_as_DepthwiseConv2d());
    case T::MaxPool2d: return pool(Op::MaxPool2d, fn->op_as_MaxPool2d());
    case T::AveragePool2d: return pool(Op::AvgPool2d, fn->op_as_AveragePool2d());
    case T::Concat2: return concat(fn->op_as_Concat2(), 2);
    case T::Concat3: return concat(fn->op_as_Concat3(), 3);
    case T::Concat4: return concat(fn->op_as_Concat4(), 4);
    case T::Concat5: return concat(fn->op_as_Concat5(), 5);
    case T::Transpose: {
      const fb::Transpose* t = fn->op_as_Transpose();
      n.op = Op::Transpose;
      n.list_a = to_list(t->permutation());
      return ranked("Transpose", t, "permutation entries", nullptr);
    }
    case T::Reshape: {
      const fb::Reshape* r = fn->op_as_Reshape();
      n.op = Op::Reshape;
      n.list_a = to_list(r->shape());
      return ranked("Reshape", r, "new sizes", nullptr);
    }
    case T::Slice: {
      const fb::Slice* s = fn->op_as_Slice();
      n.op = Op::Slice;
      n.list_a = to_list(s->begins());
      n.list_b = to_list(s->sizes());
      return ranked("Slice", s, "offsets", "sizes");
    }
    case T::ConstantPad: {
      const fb::ConstantPad* p = fn->op_as_ConstantPad();
      n.op = Op::ConstantPad;
      n.flags = p->flags();
      n.alpha = p->value();
      n.list_a = to_list(p->before());
      n.list_b = to_list(p->after());
      TRY(in("input", p->input()));
      return out(p->output());
    }
    case T::LeakyRelu: {
      const fb::LeakyRelu* l = fn->op_as_LeakyRelu();
      n.op = Op::LeakyRelu;
      n.flags = l->flags();
      n.alpha = l->slope();
      TRY(in("input", l->input()));
      return out(l->output());
    }
    case T::Elu: {
      const fb::Elu* l = fn->op_as_Elu();
      n.op = Op::Elu;
      n.flags = l->flags();
      n.alpha = l->alpha();
      TRY(in("input", l->input()));
      return out(l->output());
    }
    case T::NONE:
      return "node " + std::to_string(i) + " has no operation";
    default: {
      const char* name = static_cast<int>(fn->op_type()) <= static_cast<int>(T::MAX)
                             ? fb::EnumNameOperation(fn->op_type())
                             : "";
      std::string kind = name[0] ? std::string(name) : "type " + std::to_string(static_cast<int>(fn->op_type()));
      return fail_unsupported("node " + std::to_string(i) + ": operation " + kind +
                              " is not supported by this XNNPACK delegate");
    }
  }
#undef TRY
}

std::string BlobParser::read_nodes() {
  const auto* nodes = root->nodes();
  if (nodes == nullptr || nodes->size() == 0) return "graph has no nodes";
  if (nodes->size() > kMaxNodes) return "graph has " + std::to_string(nodes->size()) + " nodes";
  g->nodes.resize(nodes->size());
  for (uint32_t i = 0; i < nodes->size(); ++i) {
    const fb::Node* fn = nodes->Get(i);
    if (std::string e = union_table_present(fn->op(), fn->op_type(), fb::EnumNameOperation,
                                            "node " + std::to_string(i), "operation");
        !e.empty())
      return e;
    if (std::string e = read_node(i, fn); !e.empty()) return e;
  }
  // Order: every input defined before use, every value produced once.
  for (uint32_t i = 0; i < g->nodes.size(); ++i) {
    Node& n = g->nodes[i];
    for (uint32_t v : n.inputs) {
      if (v == kNone) continue;
      const Value& value = g->values[v];
      if (!value.is_constant() && value.io != kFlagInput && value.producer < 0)
        return node_label(*g, i) + ": input " + value_label(v) + " is not produced by an earlier node";
    }
    Value& o = g->values[n.output];
    if (o.is_constant()) return node_label(*g, i) + ": output " + value_label(n.output) + " is a constant";
    if (o.io == kFlagInput) return node_label(*g, i) + ": output " + value_label(n.output) + " is an external input";
    if (o.producer >= 0)
      return node_label(*g, i) + ": output " + value_label(n.output) + " is already produced by node " +
             std::to_string(o.producer);
    for (uint32_t v : n.inputs)
      if (v == n.output) return node_label(*g, i) + ": reads its own output " + value_label(v);
    o.producer = static_cast<int32_t>(i);
  }
  for (uint32_t v : g->outputs)
    if (g->values[v].producer < 0) return "external output " + value_label(v) + " is produced by no node";
  expand_shared_slopes();
  if (g->quantized) return check_quantized_nodes();
  return "";
}

// nn.PReLU() has one slope for every channel; XNNPACK's PReLU reads one per channel: give it a copy per channel.
void BlobParser::expand_shared_slopes() {
  uint32_t next_id = 0;
  for (const Value& v : g->values) next_id = std::max(next_id, v.id + 1);
  for (Node& n : g->nodes) {
    if (n.op != Op::PRelu) continue;
    const Value& x = g->values[n.inputs[0]];
    const Value& slope = g->values[n.inputs[1]];
    if (!slope.is_constant() || slope.dtype != DType::fp32 || numel(slope.dims) != 1 || x.dims.size() != 4 ||
        x.dims[3] == 1)
      continue;
    size_t channels = x.dims[3];
    std::unique_ptr<float[]> data(new float[channels + 4]());
    std::fill(data.get(), data.get() + channels, slope.f32()[0]);
    Value expanded;
    expanded.id = next_id++;
    expanded.dims = {channels};
    expanded.data = data.get();
    g->owned.push_back(std::move(data));
    n.inputs[1] = static_cast<uint32_t>(g->values.size());
    g->values.push_back(std::move(expanded));
  }
}

// Which quantized node forms this delegate runs; folds each Convert to qdint8 into the FullyConnected nodes
// reading it (DynamicFullyConnected takes the float input and quantizes it per row itself).
std::string BlobParser::check_quantized_nodes() {
  auto type = [&](uint32_t v) { return v == kNone ? DType::fp32 : g->values[v].dtype; };
  std::vector<bool> folded(g->nodes.size(), false);
  for (uint32_t i = 0; i < g->nodes.size(); ++i) {
    Node& n = g->nodes[i];
    DType out = type(n.output);
    bool any_quantized = is_quantized(out);
    for (uint32_t v : n.inputs) any_quantized = any_quantized || is_quantized(type(v));
    if (!any_quantized) continue;
    std::string label = node_label(*g, i);
    switch (n.op) {
      case Op::Convert: {
        DType in = type(n.inputs[0]);
        bool to_static = in == DType::fp32 && (out == DType::qint8 || out == DType::quint8);
        bool from_static = (in == DType::qint8 || in == DType::quint8) && out == DType::fp32;
        bool to_dynamic = in == DType::fp32 && out == DType::qdint8;
        if (!to_static && !from_static && !to_dynamic)
          return fail_unsupported(label + ": conversion from " + dtype_name(in) + " to " + dtype_name(out));
        if (to_dynamic) folded[i] = true;  // checked with its readers below
        break;
      }
      case Op::FullyConnected: {
        DType in = type(n.inputs[0]), w = type(n.inputs[1]), b = type(n.inputs[2]);
        if (in != DType::qdint8) {
          if (is_4bit(w))
            return fail_unsupported(label + ": 4-bit " + dtype_name(w) +
                                    " weights need dynamically quantized (qdint8) input");
          if (w == DType::qcint8) {  // per-channel static: plugin code
            if (in != DType::qint8 || out != DType::qint8 || (b != DType::qcint32 && n.inputs[2] != kNone))
              return fail_unsupported(label + ": per-channel weights with " + dtype_name(in) + " input, " +
                                      dtype_name(b) + " bias and " + dtype_name(out) +
                                      " output (qint8, qcint32, qint8 expected)");
            if (g->values[n.inputs[1]].channel_dim != 0 || (n.flags & 1u) != 0)
              return fail_unsupported(label + ": per-channel weights must be [out, in] with scales per output");
            n.op = Op::QuantizedFullyConnected;
          }
          break;  // per-tensor: XNNPACK checks the combination when the runtime is built
        }
        if (w != DType::qcint8 && !is_4bit(w))
          return fail_unsupported(label + ": dynamically quantized input with " + dtype_name(w) +
                                  " weights (qcint8, qcint4 or qbint4 expected)");
        if ((w != DType::qbint4 && g->values[n.inputs[1]].channel_dim != 0) || (n.flags & 1u) != 0)
          return fail_unsupported(label + ": per-channel weights must be [out, in] with scales per output channel");
        if (b != DType::fp32 || out != DType::fp32)
          return fail_unsupported(label + ": dynamically quantized input needs an fp32 bias and output, got " +
                                  dtype_name(b) + " and " + dtype_name(out));
        int32_t convert = g->values[n.inputs[0]].producer;
        if (convert < 0 || g->nodes[convert].op != Op::Convert)
          return label + ": its qdint8 input is not made by a Convert node";
        n.op = Op::DynamicFullyConnected;
        n.inputs[0] = g->nodes[convert].inputs[0];
        break;
      }
      case Op::ConvTranspose2d:
        if (n.adjust[0] >= n.stride[0] || n.adjust[1] >= n.stride[1])
          return fail_unsupported(label + ": quantized with an output adjustment not smaller than the stride "
                                          "(XNNPACK cannot, and the plugin's transposed convolution is fp32 only)");
        break;
      case Op::Transpose: case Op::Concat: case Op::Slice: case Op::Copy: {
        // Moves bytes (plugin code): every input must carry the output's quantization.
        for (uint32_t v : n.inputs)
          if (!g->values[v].same_quantization(g->values[n.output]) || g->values[v].dtype == DType::qdint8)
            return fail_unsupported(label + ": input " + value_label(v) + " (" + dtype_name(type(v)) +
                                    ") and output (" + dtype_name(out) +
                                    ") differ in quantization; the plugin only moves quantized bytes");
        if (n.has_clamp()) return fail_unsupported(label + ": a fused output range on quantized data");
        break;
      }
      default:
        if (runs_in_plugin_op(n.op))
          return fail_unsupported(label + ": quantized " + op_name(n.op) +
                                  " (this node runs in plugin code, which has no quantized form of it)");
        for (uint32_t v : n.inputs)
          if (type(v) == DType::qdint8 || is_4bit(type(v)))
            return fail_unsupported(label + ": input " + value_label(v) + " is " + dtype_name(type(v)) +
                                    " (only FullyConnected takes it)");
        break;  // XNNPACK validates the rest when the runtime is built
    }
  }
  // Every reader of a qdint8 value must have been folded.
  for (uint32_t i = 0; i < g->nodes.size(); ++i)
    for (uint32_t v : g->nodes[i].inputs)
      if (type(v) == DType::qdint8)
        return fail_unsupported(node_label(*g, i) + ": reads the dynamically quantized " + value_label(v) +
                                " (only FullyConnected can)");
  // Drop the folded Converts; renumber producers.
  std::vector<Node> kept;
  for (uint32_t i = 0; i < g->nodes.size(); ++i)
    if (!folded[i]) kept.push_back(std::move(g->nodes[i]));
  g->nodes = std::move(kept);
  for (Value& v : g->values) v.producer = -1;
  for (uint32_t i = 0; i < g->nodes.size(); ++i) g->values[g->nodes[i].output].producer = static_cast<int32_t>(i);
  return "";
}

}  // namespace etrt::xnn
