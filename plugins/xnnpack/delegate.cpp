#include "delegate.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "invalid_operation.h"

namespace etrt::xnn {
namespace {

constexpr size_t kNoSlot = std::numeric_limits<size_t>::max();
constexpr size_t kAlign = 64;

size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Ops whose XNNPACK node takes output_min/output_max itself.
bool takes_range(Op op) {
  switch (op) {
    case Op::FullyConnected: case Op::Conv2d: case Op::DepthwiseConv2d: case Op::Add: case Op::Subtract:
    case Op::Multiply: case Op::Divide: case Op::Clamp: case Op::MaxPool2d: case Op::AvgPool2d:
    case Op::ConvTranspose2d:
      return true;
    case Op::GlobalAvgPool2d:
      return kGlobalAveragePoolingTakesRange;
    default:
      return false;
  }
}

bool is_contiguous_default(const et_tensor& t) {
  int64_t expected = 1;
  for (int32_t d = t.rank - 1; d >= 0; --d) {
    if (t.dim_order != nullptr && t.dim_order[d] != static_cast<uint8_t>(d)) return false;
    if (t.sizes[d] != 1 && t.strides != nullptr && t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

}  // namespace

Delegate::~Delegate() {
  for (Plan& plan : plans_) release(plan);
}

void Delegate::release(Plan& plan) {
  for (Plan::Runtime& r : plan.runtimes)
    if (r.runtime != nullptr) lib_->xnn_delete_runtime(r.runtime);
  plan.runtimes.clear();
  host_.api()->free(plan.arena);
  plan.arena = nullptr;
}

std::string Delegate::summary() const {
  size_t xnn_segments = 0, xnn_nodes = 0, plugin_nodes = 0;
  for (const Segment& s : segments_) {
    if (s.xnnpack) {
      ++xnn_segments;
      xnn_nodes += s.nodes.size();
    } else {
      plugin_nodes += s.nodes.size();
    }
  }
  std::string text = std::to_string(graph_.nodes.size()) + " nodes: " + std::to_string(xnn_nodes) + " in " +
                     std::to_string(xnn_segments) + " XNNPACK runtime(s), " + std::to_string(plugin_nodes) +
                     " run by the plugin";
  // Which node kinds the plugin runs, so a user sees what Debian's XNNPACK did not take.
  std::vector<std::pair<std::string, size_t>> kinds;
  for (const Segment& s : segments_) {
    if (s.xnnpack) continue;
    std::string name = op_name(graph_.nodes[s.nodes[0]].op);
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == name; });
    if (it == kinds.end()) kinds.emplace_back(name, 1); else ++it->second;
  }
  for (size_t k = 0; k < kinds.size(); ++k)
    text += (k ? ", " : " (") + kinds[k].first + " x" + std::to_string(kinds[k].second);
  if (!kinds.empty()) text += ")";
  return text;
}

std::string Delegate::node_kinds_json() const {
  std::string text = "{";
  for (bool xnnpack : {true, false}) {
    std::vector<std::pair<std::string, size_t>> kinds;
    for (const Segment& s : segments_) {
      if (s.xnnpack != xnnpack) continue;
      for (uint32_t i : s.nodes) {
        std::string name = op_name(graph_.nodes[i].op);
        auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == name; });
        if (it == kinds.end()) kinds.emplace_back(name, 1); else ++it->second;
      }
    }
    text += xnnpack ? "\"xnnpack\": {" : ", \"plugin\": {";
    for (size_t k = 0; k < kinds.size(); ++k)
      text += (k ? ", \"" : "\"") + kinds[k].first + "\": " + std::to_string(kinds[k].second);
    text += "}";
  }
  return text + "}";
}

// Consecutive nodes XNNPACK can express share one runtime; every other node is
// a segment of its own. A runtime of nothing but reshapes is a memcpy instead.
void Delegate::make_segments() {
  consumers_.assign(graph_.values.size(), {});
  for (uint32_t i = 0; i < graph_.nodes.size(); ++i)
    for (uint32_t v : graph_.nodes[i].inputs)
      if (v != kNone) consumers_[v].push_back(i);
  std::vector<Segment> raw;
  for (uint32_t i = 0; i < graph_.nodes.size(); ++i) {
    bool xnn = !runs_in_plugin(graph_, graph_.nodes[i]);
    if (xnn && !raw.empty() && raw.back().xnnpack) {
      raw.back().nodes.push_back(i);
    } else {
      Segment s;
      s.xnnpack = xnn;
      s.nodes.push_back(i);
      raw.push_back(std::move(s));
    }
  }
  segments_.clear();
  for (Segment& s : raw) {
    bool only_reshapes = s.xnnpack && std::all_of(s.nodes.begin(), s.nodes.end(), [&](uint32_t i) {
      return graph_.nodes[i].op == Op::Reshape && !graph_.nodes[i].has_clamp();
    });
    if (!only_reshapes) {
      segments_.push_back(std::move(s));
      continue;
    }
    for (uint32_t i : s.nodes) {
      Segment one;
      one.nodes.push_back(i);
      segments_.push_back(std::move(one));
    }
  }
  segment_of_.assign(graph_.nodes.size(), -1);
  for (size_t s = 0; s < segments_.size(); ++s)
    for (uint32_t i : segments_[s].nodes) segment_of_[i] = static_cast<int32_t>(s);
  for (size_t s = 0; s < segments_.size(); ++s) {
    Segment& seg = segments_[s];
    for (uint32_t i : seg.nodes) {
      for (uint32_t v : graph_.nodes[i].inputs) {
        if (v == kNone || graph_.values[v].is_constant()) continue;
        int32_t producer = graph_.values[v].producer;
        bool outside = producer < 0 || segment_of_[producer] != static_cast<int32_t>(s);
        if (outside && std::find(seg.inputs.begin(), seg.inputs.end(), v) == seg.inputs.end()) seg.inputs.push_back(v);
      }
      uint32_t out = graph_.nodes[i].output;
      // A value no node reads (and no delegate output) leaves its runtime into a plugin-owned buffer: XNNPACK drops
      // a value nothing consumes, and its node then has no output memory (an assertion at setup in Debian's).
      bool needed = graph_.values[out].io == kFlagOutput || !seg.xnnpack || consumers_[out].empty();
      for (uint32_t c : consumers_[out]) needed = needed || segment_of_[c] != static_cast<int32_t>(s);
      if (needed) seg.outputs.push_back(out);
    }
  }
}

// XNNPACK may read up to XNN_EXTRA_BYTES past an operand it does not pack
// (elementwise inputs); give such constants padded copies. Weights and biases
// of fully connected and convolution nodes are packed at runtime creation.
void Delegate::pad_elementwise_constants() {
  std::vector<bool> padded(graph_.values.size(), false);
  for (const Segment& seg : segments_) {
    if (!seg.xnnpack) continue;
    for (uint32_t i : seg.nodes) {
      const Node& n = graph_.nodes[i];
      bool packs = n.op == Op::FullyConnected || n.op == Op::Conv2d || n.op == Op::DepthwiseConv2d;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        uint32_t v = n.inputs[k];
        if (v == kNone || !graph_.values[v].is_constant() || padded[v] || (packs && k > 0)) continue;
        size_t bytes = value_bytes(graph_.values[v].dtype, graph_.values[v].dims);
        std::unique_ptr<float[]> copy(new float[(bytes + 3) / 4 + XNN_EXTRA_BYTES / sizeof(float)]());
        std::memcpy(copy.get(), graph_.values[v].data, bytes);
        graph_.values[v].data = copy.get();
        graph_.owned.push_back(std::move(copy));
        padded[v] = true;
      }
    }
  }
}

et_error* Delegate::init(const et_backend_init_args& args) {
  const et_host_api* api = host_.api();
  NamedDataLookup lookup = [&](const char* key, const void** data, size_t* size) -> std::string {
    if (args.named_data == nullptr) return "the program has no named data";
    if (et_error* error = api->named_data_get(args.named_data, key, data, size)) {
      std::string message = et_host_error_message(api, error, "the host has no such key");  // the host's own words
      api->error_destroy(error);
      return message;
    }
    return "";
  };
  bool unsupported = false;
  std::string problem = parse_blob(static_cast<const uint8_t*>(args.processed), args.processed_size, lookup,
                                   &graph_, &unsupported);
  if (!problem.empty())
    return host_.error(unsupported ? ET_ERR_NOT_SUPPORTED : ET_ERR_INVALID_PROGRAM,
                       (unsupported ? "unsupported XNNPACK delegate blob: " : "invalid XNNPACK delegate blob: ") +
                           problem);
  for (const Value& value : graph_.values) {
    if (value.is_constant() && value.dtype == DType::fp32 && !is_finite_data(value.f32(), numel(value.dims)))
      constants_finite_ = false;
    if (value.io != 0 && value.fp16) fp16_boundary_ = true;
  }
  make_segments();
  for (uint32_t v : graph_.inputs) infinity_risk_.push_back(infinity_risk(graph_, v, consumers_));
  pad_elementwise_constants();
  if (std::string e = prepare_plugin_weights(graph_, &prepared_); !e.empty())
    return host_.error(ET_ERR_INVALID_PROGRAM, "invalid XNNPACK delegate blob: " + e);
  // Build the runtimes for the declared input shapes now, so anything XNNPACK
  // refuses fails the method load rather than its first execute.
  std::vector<Shape> shapes;
  for (uint32_t v : graph_.inputs) shapes.push_back(graph_.values[v].dims);
  et_service_lease lease{};
  lease.struct_size = sizeof lease;
  if (et_error* error = api->service_acquire("pthreadpool", &lease)) return error;
  Plan plan;
  et_error* error = build_plan(shapes, static_cast<pthreadpool_t>(lease.handle), lease.generation, &plan);
  api->service_release(&lease);
  if (error != nullptr) return error;
  plans_.push_front(std::move(plan));
  host_.log(ET_LOG_DEBUG, "XnnpackBackend: " + summary());
  return nullptr;
}

std::string Delegate::build_runtime(const Plan& plan, size_t s, pthreadpool_t pool, Plan::Runtime* out) {
  const Segment& seg = segments_[s];
  const Library& x = *lib_;
  uint32_t num_ext = static_cast<uint32_t>(seg.inputs.size() + seg.outputs.size());
  xnn_subgraph_t sg = nullptr;
  if (xnn_status st = x.xnn_create_subgraph(num_ext, 0, &sg); st != xnn_status_success)
    return std::string("xnn_create_subgraph failed: ") + status_name(st);
  struct SubgraphGuard {
    const Library& x;
    xnn_subgraph_t sg;
    ~SubgraphGuard() { x.xnn_delete_subgraph(sg); }
  } guard{x, sg};
  std::vector<uint32_t> ids(graph_.values.size(), XNN_INVALID_VALUE_ID);
  out->externals.clear();
  for (uint32_t v : seg.inputs) out->externals.push_back(v);
  for (uint32_t v : seg.outputs) out->externals.push_back(v);
  // A value as XNNPACK sees it: fp32, per-tensor quantized or per-channel quantized.
  auto define_raw = [&](const Value& val, const Shape& dims, const void* data, uint32_t external, uint32_t flags,
                        uint32_t* id) {
    switch (val.dtype) {
      case DType::fp32:
        return x.xnn_define_tensor_value(sg, xnn_datatype_fp32, dims.size(), dims.data(), data, external, flags, id);
      case DType::qint8: case DType::quint8: case DType::qint32: {
        xnn_datatype type = val.dtype == DType::qint8    ? xnn_datatype_qint8
                            : val.dtype == DType::quint8 ? xnn_datatype_quint8
                                                         : xnn_datatype_qint32;
        return x.xnn_define_quantized_tensor_value(sg, type, val.zero_point, val.scale, dims.size(), dims.data(), data,
                                                   external, flags, id);
      }
      case DType::qcint8: case DType::qcint32:
        return x.xnn_define_channelwise_quantized_tensor_value(
            sg, val.dtype == DType::qcint8 ? xnn_datatype_qcint8 : xnn_datatype_qcint32, val.scales.data(),
            dims.size(), val.channel_dim, dims.data(), data, external, flags, id);
      default:
        return xnn_status_unsupported_parameter;  // qdint8 and 4-bit values never reach XNNPACK (plugin code)
    }
  };
  auto value = [&](uint32_t v, std::string* err) -> uint32_t {
    if (v == kNone) return XNN_INVALID_VALUE_ID;
    if (ids[v] != XNN_INVALID_VALUE_ID) return ids[v];
    uint32_t external = XNN_INVALID_VALUE_ID, flags = 0;
    auto in = std::find(seg.inputs.begin(), seg.inputs.end(), v);
    auto outp = std::find(seg.outputs.begin(), seg.outputs.end(), v);
    if (in != seg.inputs.end()) {
      external = static_cast<uint32_t>(in - seg.inputs.begin());
      flags = XNN_VALUE_FLAG_EXTERNAL_INPUT;
    } else if (outp != seg.outputs.end()) {
      external = static_cast<uint32_t>(seg.inputs.size() + (outp - seg.outputs.begin()));
      flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
    }
    const Value& val = graph_.values[v];
    uint32_t id = XNN_INVALID_VALUE_ID;
    if (xnn_status st = define_raw(val, plan.shapes[v], val.is_constant() ? val.data : nullptr, external, flags, &id);
        st != xnn_status_success) {
      *err = std::string("defining ") + dtype_name(val.dtype) + " value " + std::to_string(v) + " " +
             shape_text(plan.shapes[v]) + " failed: " + status_name(st);
      return XNN_INVALID_VALUE_ID;
    }
    ids[v] = id;
    return id;
  };
  for (uint32_t i : seg.nodes) {
    const Node& n = graph_.nodes[i];
    std::string err;
    std::vector<uint32_t> in;
    for (uint32_t v : n.inputs) {
      in.push_back(value(v, &err));
      if (!err.empty()) return node_label(graph_, i) + ": " + err;
    }
    uint32_t final_out = value(n.output, &err);
    if (!err.empty()) return node_label(graph_, i) + ": " + err;
    // Ops without their own range write a temporary that a clamp node bounds.
    uint32_t o = final_out;
    bool post_clamp = n.has_clamp() && !takes_range(n.op);
    if (post_clamp) {
      xnn_status st = define_raw(graph_.values[n.output], plan.shapes[n.output], nullptr, XNN_INVALID_VALUE_ID, 0, &o);
      if (st != xnn_status_success)
        return node_label(graph_, i) + ": temporary value: " + status_name(st);
    }
    float lo = n.out_min, hi = n.out_max;
    const uint32_t* p = n.pad;
    xnn_status st = xnn_status_success;
    switch (n.op) {
      case Op::FullyConnected:
        st = x.xnn_define_fully_connected(sg, lo, hi, in[0], in[1], in[2], o, n.flags & 5u);
        break;
      case Op::Conv2d:
        st = x.xnn_define_convolution_2d(sg, p[0], p[1], p[2], p[3], n.kernel[0], n.kernel[1], n.stride[0],
                                         n.stride[1], n.dilation[0], n.dilation[1], n.groups, n.group_in,
                                         n.group_out, lo, hi, in[0], in[1], in[2], o, 0);
        break;
      case Op::DepthwiseConv2d:
        st = x.xnn_define_depthwise_convolution_2d(sg, p[0], p[1], p[2], p[3], n.kernel[0], n.kernel[1],
                                                   n.stride[0], n.stride[1], n.dilation[0], n.dilation[1],
                                                   n.group_out / n.group_in, n.groups, lo, hi, in[0], in[1], in[2],
                                                   o, 0);
        break;
      case Op::ConvTranspose2d:
        st = x.xnn_define_deconvolution_2d(sg, p[0], p[1], p[2], p[3], n.adjust[0], n.adjust[1], n.kernel[0],
                                           n.kernel[1], n.stride[0], n.stride[1], n.dilation[0], n.dilation[1],
                                           n.groups, n.group_in, n.group_out, lo, hi, in[0], in[1], in[2], o, 0);
        break;
      case Op::PRelu: st = x.xnn_define_prelu(sg, in[0], in[1], o, 0); break;
      case Op::ResizeBilinear:
        st = x.xnn_define_static_resize_bilinear_2d(sg, n.new_size[0], n.new_size[1], in[0], o, n.flags);
        break;
      case Op::Add: st = x.xnn_define_add2(sg, lo, hi, in[0], in[1], o, 0); break;
      case Op::Subtract: st = x.xnn_define_subtract(sg, lo, hi, in[0], in[1], o, 0); break;
      case Op::Multiply: st = x.xnn_define_multiply2(sg, lo, hi, in[0], in[1], o, 0); break;
      case Op::Divide: st = x.xnn_define_divide(sg, lo, hi, in[0], in[1], o, 0); break;
      case Op::Minimum: st = x.xnn_define_minimum2(sg, in[0], in[1], o, 0); break;
      case Op::Maximum: st = x.xnn_define_maximum2(sg, in[0], in[1], o, 0); break;
      case Op::Clamp: st = x.xnn_define_clamp(sg, lo, hi, in[0], o, 0); break;
      case Op::Convert: st = x.xnn_define_convert(sg, in[0], o, 0); break;
      case Op::Softmax: st = x.xnn_define_softmax(sg, in[0], o, 0); break;
      case Op::Sigmoid: st = x.xnn_define_sigmoid(sg, in[0], o, 0); break;
      case Op::Abs: st = x.xnn_define_abs(sg, in[0], o, 0); break;
      case Op::Negate: st = x.xnn_define_negate(sg, in[0], o, 0); break;
      case Op::Square: st = x.xnn_define_square(sg, in[0], o, 0); break;
      case Op::SquareRoot: st = x.xnn_define_square_root(sg, in[0], o, 0); break;
      case Op::Floor: st = x.xnn_define_floor(sg, in[0], o, 0); break;
      case Op::Ceiling: st = x.xnn_define_ceiling(sg, in[0], o, 0); break;
      case Op::HardSwish: st = x.xnn_define_hardswish(sg, in[0], o, 0); break;
      case Op::LeakyRelu: st = x.xnn_define_leaky_relu(sg, n.alpha, in[0], o, 0); break;
      case Op::Elu: st = x.xnn_define_elu(sg, n.alpha, in[0], o, 0); break;
      case Op::MaxPool2d:
        st = x.xnn_define_max_pooling_2d(sg, p[0], p[1], p[2], p[3], n.kernel[0], n.kernel[1], n.stride[0],
                                         n.stride[1], n.dilation[0], n.dilation[1], lo, hi, in[0], o, 0);
        break;
      case Op::AvgPool2d:
        st = x.xnn_define_average_pooling_2d(sg, p[0], p[1], p[2], p[3], n.kernel[0], n.kernel[1], n.stride[0],
                                             n.stride[1], lo, hi, in[0], o, 0);
        break;
      case Op::GlobalAvgPool2d: st = x.xnn_define_global_average_pooling_2d(sg, lo, hi, in[0], o, 0); break;
      case Op::Reshape: {
        const Shape& shape = plan.shapes[n.output];  // zeros of the blob's shape already resolved
        st = x.xnn_define_static_reshape(sg, shape.size(), shape.data(), in[0], o, 0);
        break;
      }
      case Op::ConstantPad: {
        std::vector<size_t> before(n.list_a.begin(), n.list_a.end()), after(n.list_b.begin(), n.list_b.end());
        st = x.xnn_define_static_constant_pad(sg, before.data(), after.data(), n.alpha, in[0], o, 0);
        break;
      }
      default:
        return node_label(graph_, i) + ": not an XNNPACK node";
    }
    if (st != xnn_status_success) return node_label(graph_, i) + ": XNNPACK refused the node: " + status_name(st);
    if (post_clamp) {
      st = x.xnn_define_clamp(sg, lo, hi, o, final_out, 0);
      if (st != xnn_status_success) return node_label(graph_, i) + ": fused output range: " + status_name(st);
    }
  }
  xnn_runtime_t runtime = nullptr;
  if (xnn_status st = x.xnn_create_runtime_v2(sg, pool, 0, &runtime); st != xnn_status_success)
    return std::string("xnn_create_runtime_v2 failed: ") + status_name(st);
  out->runtime = runtime;
  out->bound.clear();
  out->set_up = false;
  return "";
}

et_error* Delegate::build_plan(const std::vector<Shape>& input_shapes, pthreadpool_t pool, uint64_t generation,
                               Plan* plan) {
  plan->input_shapes = input_shapes;
  plan->pool_generation = generation;
  if (std::string e = infer_all(graph_, input_shapes, &plan->shapes); !e.empty())
    return host_.error(ET_ERR_INVALID_ARGUMENT, "XnnpackBackend: inputs do not fit the graph: " + e);
  // Buffers: every value a segment hands to another (unless it is a delegate
  // output, which lives in the caller's tensor) and padded copies of delegate
  // tensors XNNPACK reads.
  size_t total = 0;
  plan->offset.assign(graph_.values.size(), kNoSlot);
  plan->staging.assign(graph_.values.size(), kNoSlot);
  auto slot = [&](uint32_t v) {
    size_t at = total;
    total += round_up(value_bytes(graph_.values[v].dtype, plan->shapes[v]) + XNN_EXTRA_BYTES, kAlign);
    return at;
  };
  for (const Segment& seg : segments_) {
    for (uint32_t v : seg.outputs)
      if (graph_.values[v].io != kFlagOutput && plan->offset[v] == kNoSlot) plan->offset[v] = slot(v);
    if (!seg.xnnpack) continue;
    for (uint32_t v : seg.inputs)
      if (graph_.values[v].io != 0 && plan->staging[v] == kNoSlot) plan->staging[v] = slot(v);
  }
  if (total > 0) {
    plan->arena = host_.api()->alloc(total, kAlign);
    if (plan->arena == nullptr)
      return host_.error(ET_ERR_OUT_OF_MEMORY,
                         "XnnpackBackend: cannot allocate " + std::to_string(total) + " bytes of intermediate buffers");
  }
  plan->runtimes.assign(segments_.size(), Plan::Runtime());
  for (size_t s = 0; s < segments_.size(); ++s) {
    if (!segments_[s].xnnpack) continue;
    if (std::string e = build_runtime(*plan, s, pool, &plan->runtimes[s]); !e.empty()) {
      release(*plan);
      return host_.error(ET_ERR_INTERNAL, "XnnpackBackend: segment " + std::to_string(s) + ": " + e);
    }
  }
  stats_.plans_built.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

Plan* Delegate::find_plan(const std::vector<Shape>& input_shapes, uint64_t generation) {
  for (auto it = plans_.begin(); it != plans_.end(); ++it) {
    if (it->pool_generation != generation || it->input_shapes != input_shapes) continue;
    if (it != plans_.begin()) plans_.splice(plans_.begin(), plans_, it);
    return &plans_.front();
  }
  return nullptr;
}

et_error* Delegate::fit_outputs(const std::vector<Shape>& shapes, const std::vector<et_tensor*>& tensors) {
  const et_host_api* api = host_.api();
  for (uint32_t v : graph_.outputs) {
    et_tensor* t = tensors[v];
    const Shape& want = shapes[v];
    bool same = t->rank == 0 ? numel(want) == 1 : static_cast<size_t>(t->rank) == want.size();
    for (size_t d = 0; same && t->rank != 0 && d < want.size(); ++d)
      same = t->sizes[d] == static_cast<int64_t>(want[d]);
    if (!same) {
      std::vector<int64_t> sizes(want.begin(), want.end());
      if (et_error* e = api->tensor_resize(t, sizes.data(), sizes.size())) return e;
    }
    if ((t->data == nullptr && numel(want) > 0) || t->nbytes < numel(want) * sizeof(float))
      return host_.error(ET_ERR_INVALID_ARGUMENT, "XnnpackBackend: output at argument " +
                                                      std::to_string(graph_.values[v].external) + " cannot hold " +
                                                      shape_text(want));
  }
  return nullptr;
}

et_error* Delegate::execute_reference(const std::vector<Shape>& input_shapes, const std::vector<et_tensor*>& tensors,
                                       et_exec_context* traced) {
  std::vector<Shape> shapes;
  if (std::string e = infer_all(graph_, input_shapes, &shapes, /*allow_empty=*/true); !e.empty())
    return host_.error(ET_ERR_INVALID_ARGUMENT, "XnnpackBackend: inputs do not fit the graph: " + e);
  if (et_error* e = fit_outputs(shapes, tensors)) return e;
  std::vector<std::vector<float>> buffers(graph_.values.size());
  auto pointer = [&](uint32_t v) -> float* {
    const Value& value = graph_.values[v];
    if (value.is_constant()) return const_cast<float*>(value.f32());
    if (tensors[v] != nullptr) return static_cast<float*>(tensors[v]->data);
    if (buffers[v].empty()) buffers[v].resize(numel(shapes[v]));
    return buffers[v].data();
  };
  Parallel serial(lib_, nullptr);
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& n = graph_.nodes[i];
    if (numel(shapes[n.output]) == 0) continue;  // nothing to compute
    std::vector<OperandView> in;
    for (uint32_t v : n.inputs)
      in.push_back(v == kNone ? OperandView{nullptr, nullptr} : OperandView{pointer(v), &shapes[v]});
    uint64_t start = traced != nullptr ? host_.api()->trace_clock_ns() : 0;
    if (std::string e = run_reference_node(graph_, n, in, pointer(n.output), shapes[n.output], serial); !e.empty())
      return host_.error(ET_ERR_NOT_SUPPORTED, "XnnpackBackend: " + node_label(graph_, i) + ": " + e);
    if (traced != nullptr) trace_node(traced, static_cast<uint32_t>(i), start);
  }
  stats_.reference_runs.fetch_add(1, std::memory_order_relaxed);
  stats_.executes.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

bool Delegate::call_is_traced(et_exec_context* ctx) const {
  const et_host_api* api = host_.api();
  return ctx != nullptr && ET_HOST_HAS(api, trace_span) && api->trace_span(ctx, nullptr, -1, 0, 0) != 0;
}

void Delegate::trace_node(et_exec_context* traced, uint32_t node, uint64_t start_ns) const {
  // Named by the node's kind as ExecuTorch's XNNPACK profiler names operators; identified by the node's index,
  // unique within the call (debug handles are not: inserted transposes share one), as the Inspector needs.
  host_.api()->trace_span(traced, op_name(graph_.nodes[node].op), node, start_ns, host_.api()->trace_clock_ns());
}

void Delegate::trace_runtime(et_exec_context* traced, size_t segment, uint64_t start_ns) {
  uint64_t end_ns = host_.api()->trace_clock_ns();
  if (runtime_event_names_.size() != segments_.size()) {
    // "XNNPACK runtime 2: FullyConnected, Clamp": the segment (names must be unique within a call) and what the
    // one span of its runtime covers.
    runtime_event_names_.assign(segments_.size(), std::string());
    for (size_t s = 0, runtime = 0; s < segments_.size(); ++s) {
      if (!segments_[s].xnnpack) continue;
      std::string& name = runtime_event_names_[s];
      name = "XNNPACK runtime " + std::to_string(runtime++) + ":";
      for (size_t k = 0; k < segments_[s].nodes.size(); ++k)
        name += std::string(k ? ", " : " ") + op_name(graph_.nodes[segments_[s].nodes[k]].op);
    }
  }
  host_.api()->trace_span(traced, runtime_event_names_[segment].c_str(), -1, start_ns, end_ns);
}

et_error* Delegate::execute_fp32(et_exec_context* ctx, et_value* const* args, size_t nargs) {
  std::lock_guard<std::mutex> lock(mutex_);
  const et_host_api* api = host_.api();
  et_exec_context* traced = call_is_traced(ctx) ? ctx : nullptr;  // untraced calls read no clock
  // Arguments: the delegate's inputs and outputs by external index.
  auto tensor_arg = [&](uint32_t v, et_tensor** out) -> et_error* {
    const Value& value = graph_.values[v];
    const char* role = value.io == kFlagInput ? "input" : "output";
    std::string where = std::string("XnnpackBackend: ") + role + " at argument " + std::to_string(value.external);
    if (value.external >= nargs)
      return host_.error(ET_ERR_INVALID_ARGUMENT, where + ": the call has only " + std::to_string(nargs) + " arguments");
    et_value* a = args[value.external];
    if (a == nullptr || a->tag != ET_VALUE_TENSOR || a->tensor == nullptr)
      return host_.error(ET_ERR_INVALID_ARGUMENT, where + " is not a tensor");
    et_tensor* t = a->tensor;
    if (t->dtype != ET_DTYPE_FLOAT32)
      return host_.error(ET_ERR_INVALID_ARGUMENT, where + " is " + plugin::dtype_name(t->dtype) + ", expected float32");
    // ExecuTorch serialises a rank-0 tensor as [1] (all-ones dims).
    bool scalar = t->rank == 0 && numel(value.dims) == 1;
    if (static_cast<size_t>(t->rank) != value.dims.size() && !scalar)
      return host_.error(ET_ERR_INVALID_ARGUMENT, where + " has rank " + std::to_string(t->rank) + ", the graph expects " +
                                                      std::to_string(value.dims.size()));
    if (!is_contiguous_default(*t))
      return host_.error(ET_ERR_INVALID_ARGUMENT, where + " is not contiguous in the default dim order");
    *out = t;
    return nullptr;
  };
  std::vector<et_tensor*> tensors(graph_.values.size(), nullptr);
  std::vector<Shape> input_shapes;
  for (uint32_t v : graph_.inputs) {
    if (et_error* e = tensor_arg(v, &tensors[v])) return e;
    Shape s;
    if (tensors[v]->rank == 0) s = graph_.values[v].dims;  // a scalar: the graph's all-ones shape
    for (int32_t d = 0; d < tensors[v]->rank; ++d) {
      if (tensors[v]->sizes[d] < 0)
        return host_.error(ET_ERR_INVALID_ARGUMENT, "XnnpackBackend: input at argument " +
                                                        std::to_string(graph_.values[v].external) + " has a dim < 0");
      s.push_back(static_cast<size_t>(tensors[v]->sizes[d]));
    }
    if ((tensors[v]->data == nullptr && numel(s) > 0) || tensors[v]->nbytes < numel(s) * sizeof(float))
      return host_.error(ET_ERR_INVALID_ARGUMENT, "XnnpackBackend: input at argument " +
                                                      std::to_string(graph_.values[v].external) + " has no data");
    input_shapes.push_back(std::move(s));
  }
  for (uint32_t v : graph_.outputs)
    if (et_error* e = tensor_arg(v, &tensors[v])) return e;

  // Debian's XNNPACK turns NaN into a finite bound in every clamp, and cannot run empty tensors: such runs
  // take the plugin's reference code. One pass over each input decides (constants were checked at init); an
  // infinity alone keeps XNNPACK when the nodes reading it cannot make NaN of it (an attention mask's -inf).
  bool reference = !constants_finite_ && !graph_.quantized;
  bool infinity_kept = false;  // an input infinity stays on XNNPACK (infinity_risk)
  for (size_t k = 0; k < graph_.inputs.size() && !reference; ++k) {
    size_t count = numel(input_shapes[k]);
    const auto* data = static_cast<const float*>(tensors[graph_.inputs[k]]->data);
    if (count == 0 && graph_.quantized) {
      return host_.error(ET_ERR_NOT_SUPPORTED, "XnnpackBackend: input at argument " +
                                                   std::to_string(graph_.values[graph_.inputs[k]].external) +
                                                   " is empty; quantized graphs cannot run empty tensors");
    } else if (count == 0) {
      reference = true;
    } else if (graph_.quantized) {
      // Quantized graphs: NaN and infinities are not representable in the quantized values anyway; XNNPACK's
      // Convert saturates them as ExecuTorch's own XNNPACK does, so no reference run.
    } else if (!is_finite_data(data, count)) {
      NonFinite found = find_non_finite(data, count);
      infinity_kept = true;
      reference = found.nan || (found.positive_infinity && infinity_risk_[k].positive) ||
                  (found.negative_infinity && infinity_risk_[k].negative);
    }
  }
  if (reference) return execute_reference(input_shapes, tensors, traced);
  // A NaN made inside the graph from finite inputs is clamped away by Debian's XNNPACK, the invalid operation that
  // made it is not: such a run is done again by the reference code (invalid_operation.h). Not watched with an
  // input infinity kept on XNNPACK: Softmax's exp raises invalid operations on -inf and still gives the right 0.
  std::optional<InvalidOperationWatch> nan_watch;
  if (!graph_.quantized && !infinity_kept) nan_watch.emplace();

  et_service_lease lease{};
  lease.struct_size = sizeof lease;
  if (et_error* e = api->service_acquire("pthreadpool", &lease)) return e;
  struct LeaseGuard {
    const et_host_api* api;
    et_service_lease* lease;
    ~LeaseGuard() { api->service_release(lease); }
  } lease_guard{api, &lease};
  auto pool = static_cast<pthreadpool_t>(lease.handle);

  Plan* plan = find_plan(input_shapes, lease.generation);
  if (plan == nullptr) {
    // A new pool invalidates every runtime bound to the old one.
    for (auto it = plans_.begin(); it != plans_.end();) {
      if (it->pool_generation != lease.generation) {
        release(*it);
        it = plans_.erase(it);
      } else {
        ++it;
      }
    }
    while (plans_.size() >= max_plans_) {
      release(plans_.back());
      plans_.pop_back();
    }
    Plan fresh;
    if (et_error* e = build_plan(input_shapes, pool, lease.generation, &fresh)) return e;
    plans_.push_front(std::move(fresh));
    plan = &plans_.front();
  }

  if (et_error* e = fit_outputs(plan->shapes, tensors)) return e;

  auto* arena = static_cast<uint8_t*>(plan->arena);
  auto pointer = [&](uint32_t v) -> float* {
    const Value& value = graph_.values[v];
    if (value.is_constant()) return const_cast<float*>(value.f32());
    if (tensors[v] != nullptr) return static_cast<float*>(tensors[v]->data);
    return reinterpret_cast<float*>(arena + plan->offset[v]);
  };
  Parallel parallel(lib_, pool);
  for (size_t s = 0; s < segments_.size(); ++s) {
    const Segment& seg = segments_[s];
    if (!seg.xnnpack) {
      const Node& n = graph_.nodes[seg.nodes[0]];
      std::vector<OperandView> in;
      for (uint32_t v : n.inputs) in.push_back(v == kNone ? OperandView{nullptr, nullptr} : OperandView{pointer(v), &plan->shapes[v]});
      uint64_t start = traced != nullptr ? api->trace_clock_ns() : 0;
      std::string e;
      if (n.op == Op::DynamicFullyConnected)
        e = run_dynamic_fully_connected(prepared_, n, in[0], pointer(n.output), plan->shapes[n.output], parallel);
      else if (n.op == Op::QuantizedFullyConnected)
        e = run_quantized_fully_connected(prepared_, n, in[0], reinterpret_cast<int8_t*>(pointer(n.output)),
                                          plan->shapes[n.output], parallel);
      else
        e = run_plugin_node(n, in, pointer(n.output), plan->shapes[n.output], parallel,
                            element_size(graph_.values[n.output].dtype));
      if (!e.empty())
        return host_.error(ET_ERR_NOT_SUPPORTED, "XnnpackBackend: " + node_label(graph_, seg.nodes[0]) + ": " + e);
      if (traced != nullptr) trace_node(traced, seg.nodes[0], start);
      stats_.plugin_node_runs.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    Plan::Runtime& rt = plan->runtimes[s];
    uint64_t start = traced != nullptr ? api->trace_clock_ns() : 0;
    std::vector<xnn_external_value> bind;
    bind.reserve(rt.externals.size());
    for (size_t id = 0; id < rt.externals.size(); ++id) {
      uint32_t v = rt.externals[id];
      float* data = pointer(v);
      if (id < seg.inputs.size() && tensors[v] != nullptr) {
        // XNNPACK may read XNN_EXTRA_BYTES past its inputs: copy unless the tensor has room.
        size_t bytes = numel(plan->shapes[v]) * sizeof(float);
        if (tensors[v]->capacity_bytes < bytes + XNN_EXTRA_BYTES) {
          float* staged = reinterpret_cast<float*>(arena + plan->staging[v]);
          std::memcpy(staged, data, bytes);
          data = staged;
        }
      }
      bind.push_back(xnn_external_value{static_cast<uint32_t>(id), data});
    }
    bool same = rt.set_up && bind.size() == rt.bound.size();
    for (size_t k = 0; same && k < bind.size(); ++k) same = bind[k].data == rt.bound[k].data;
    if (!same) {
      if (xnn_status st = lib_->xnn_setup_runtime(rt.runtime, bind.size(), bind.data()); st != xnn_status_success) {
        rt.set_up = false;
        return host_.error(ET_ERR_INTERNAL, std::string("XnnpackBackend: xnn_setup_runtime failed: ") + status_name(st));
      }
      rt.bound = std::move(bind);
      rt.set_up = true;
      stats_.setups.fetch_add(1, std::memory_order_relaxed);
    }
    if (xnn_status st = lib_->xnn_invoke_runtime(rt.runtime); st != xnn_status_success)
      return host_.error(ET_ERR_INTERNAL, std::string("XnnpackBackend: xnn_invoke_runtime failed: ") + status_name(st));
    if (traced != nullptr) trace_runtime(traced, s, start);
    stats_.xnnpack_invocations.fetch_add(1, std::memory_order_relaxed);
  }
  if (nan_watch && nan_watch->raised()) {
    stats_.nan_reruns.fetch_add(1, std::memory_order_relaxed);
    return execute_reference(input_shapes, tensors, traced);
  }
  stats_.executes.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

}  // namespace etrt::xnn
