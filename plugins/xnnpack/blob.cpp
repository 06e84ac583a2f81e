// Reading a delegate blob: header, flatbuffer verification, then every value id,
// external index, constant index, named-data key/size and quantization checked
// before anything is used (nodes: blob_nodes.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "blob_parser.h"
#include "etrt/half.hpp"

namespace etrt::xnn {

namespace {

constexpr char kHeaderMagic[4] = {'X', 'H', '0', '0'};
constexpr size_t kHeaderSize = 30;        // zeros(4) magic(4) length(2) fb_off(4) fb_size(4) const_off(4) const_size(8)
constexpr size_t kMaxValues = 1u << 20;
constexpr size_t kMaxElements = size_t{1} << 32;  // per tensor; larger is a corrupt shape

template <typename T>
T read_le(const uint8_t* p) {
  T v{};
  std::memcpy(&v, p, sizeof v);  // x86-64 and aarch64 are little-endian, as the format
  return v;
}

// Text from the blob, safe to put in a message: printable ASCII, \xNN otherwise.
std::string printable(const uint8_t* p, size_t n, size_t limit = 80) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n && i < limit; ++i) {
    if (p[i] >= 32 && p[i] < 127 && p[i] != '\\' && p[i] != '\'') {
      out += static_cast<char>(p[i]);
    } else {
      out += "\\x";
      out += hex[p[i] >> 4];
      out += hex[p[i] & 15];
    }
  }
  if (n > limit) out += "...";
  return out;
}

std::string list_text(const std::vector<uint32_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

// Locates and verifies the flatbuffer; copies it so reads are aligned.
std::string BlobParser::read_container(std::vector<uint64_t>* storage, size_t* fb_size_out) {
  const uint8_t* fb_data = blob;
  size_t fb_size = size;
  if (size >= 8 && std::memcmp(blob + 4, kHeaderMagic, 4) == 0) {
    if (size < kHeaderSize)
      return "blob has the XH00 header magic but is only " + std::to_string(size) + " bytes (a header needs " +
             std::to_string(kHeaderSize) + ")";
    has_header = true;
    uint32_t fb_offset = read_le<uint32_t>(blob + 10);
    uint32_t fb_length = read_le<uint32_t>(blob + 14);
    uint32_t c_offset = read_le<uint32_t>(blob + 18);
    uint64_t c_size = read_le<uint64_t>(blob + 22);
    if (fb_offset < kHeaderSize || fb_offset > size)
      return "header: flatbuffer offset " + std::to_string(fb_offset) + " is outside the blob (" +
             std::to_string(size) + " bytes, header " + std::to_string(kHeaderSize) + ")";
    if (fb_length < 8 || fb_length > size - fb_offset)
      return "header: flatbuffer size " + std::to_string(fb_length) + " at offset " + std::to_string(fb_offset) +
             " does not fit the " + std::to_string(size) + "-byte blob";
    if (c_offset < uint64_t{fb_offset} + fb_length || c_offset > size)
      return "header: constant data offset " + std::to_string(c_offset) +
             " must follow the flatbuffer (ends at " + std::to_string(uint64_t{fb_offset} + fb_length) +
             ") and lie inside the " + std::to_string(size) + "-byte blob";
    if (c_size > size - c_offset)
      return "header: constant data size " + std::to_string(c_size) + " at offset " + std::to_string(c_offset) +
             " does not fit the " + std::to_string(size) + "-byte blob";
    fb_data = blob + fb_offset;
    fb_size = fb_length;
    const_offset = c_offset;
    const_size = c_size;
  } else if (size < 8) {
    return "blob is " + std::to_string(size) + " bytes, too small for an XNNPACK graph";
  }
  if (std::memcmp(fb_data + 4, "XN00", 4) != 0 && std::memcmp(fb_data + 4, "XN01", 4) != 0) {
    std::string id = printable(fb_data + 4, 4);
    return "flatbuffer identifier is '" + id + "', expected 'XN00' or 'XN01'";
  }
  storage->assign((fb_size + 7) / 8, 0);
  std::memcpy(storage->data(), fb_data, fb_size);
  const auto* bytes = reinterpret_cast<const uint8_t*>(storage->data());
  flatbuffers::Verifier verifier(bytes, fb_size, /*max_depth=*/64, /*max_tables=*/4 * kMaxValues);
  if (!verifier.VerifyBuffer<fb::Graph>(nullptr))
    return "flatbuffer verification failed (corrupt or truncated XNNPACK graph, " + std::to_string(fb_size) +
           " bytes)";
  root = flatbuffers::GetRoot<fb::Graph>(bytes);
  *fb_size_out = fb_size;
  return "";
}

// Finds constant `ci`'s bytes (named data or the blob's constant region); *transient when they live in the
// blob, which is only valid during init.
std::string BlobParser::constant_bytes(const std::string& label, uint32_t ci, size_t needed, const std::string& holder,
                           const void** data, bool* transient) {
  *transient = false;
  std::string need = holder + " needs " + std::to_string(needed);
  size_t available = 0;
  const auto* constants = root->constants();
  if (has_header || (constants != nullptr && constants->size() > 0)) {
    if (constants == nullptr || ci >= constants->size())
      return label + ": constant index " + std::to_string(ci) + " is outside the constant table (" +
             std::to_string(constants ? constants->size() : 0) + " entries)";
    const fb::ConstantEntry* entry = constants->Get(ci);
    if (entry->key() != nullptr && entry->key()->size() > 0) {
      std::string key = entry->key()->str();
      std::string shown = printable(entry->key()->Data(), entry->key()->size());
      if (std::strlen(key.c_str()) != key.size())
        return label + ": named-data key '" + shown + "' of constant " + std::to_string(ci) + " contains a NUL byte";
      if (std::string why = named_data(key.c_str(), data, &available); !why.empty())
        return label + ": constant " + std::to_string(ci) + ": named data '" + shown +
               "' is not in the program: " + why;
      if (available < needed)
        return label + ": named data '" + shown + "' has " + std::to_string(available) + " bytes, " + need;
    } else {
      if (!has_header)
        return label + ": constant " + std::to_string(ci) +
               " has no named-data key and the blob has no constant region";
      uint64_t offset = entry->offset();
      if (offset > const_size || needed > const_size - offset)
        return label + ": constant " + std::to_string(ci) + " at offset " + std::to_string(offset) + " (" +
               std::to_string(needed) + " bytes) is outside the blob's constant region (" +
               std::to_string(const_size) + " bytes)";
      *data = blob + const_offset + offset;
      *transient = true;
    }
  } else {
    const auto* buffers = root->legacy_buffers();
    if (buffers == nullptr || ci >= buffers->size() || buffers->Get(ci)->bytes() == nullptr)
      return label + ": constant index " + std::to_string(ci) + " is outside the blob's inline buffers (" +
             std::to_string(buffers ? buffers->size() : 0) + ")";
    const auto* bytes = buffers->Get(ci)->bytes();
    if (bytes->size() < needed)
      return label + ": inline buffer " + std::to_string(ci) + " has " + std::to_string(bytes->size()) +
             " bytes, " + need;
    *data = bytes->data();
    *transient = true;
  }
  if (*data == nullptr) return label + ": constant " + std::to_string(ci) + " has no data";
  return "";
}

std::string BlobParser::read_constant(uint32_t index, const fb::TensorValue& t) {
  Value& v = g->values[index];
  size_t needed = v.fp16 ? numel(v.dims) * 2 : value_bytes(v.dtype, v.dims);
  const void* data = nullptr;
  bool transient = false;
  std::string holder = "the tensor " + shape_text(v.dims);
  if (std::string e = constant_bytes(value_label(index), t.constant_index(), needed, holder, &data, &transient);
      !e.empty())
    return e;
  if (v.fp16) {
    std::unique_ptr<float[]> widened(new float[numel(v.dims) + 4]());
    const auto* halves = static_cast<const uint8_t*>(data);
    for (size_t k = 0; k < numel(v.dims); ++k) widened[k] = plugin::to_float(plugin::Half{read_le<uint16_t>(halves + 2 * k)});
    v.data = widened.get();
    g->owned.push_back(std::move(widened));
  } else if (transient || reinterpret_cast<uintptr_t>(data) % alignof(float) != 0) {
    std::unique_ptr<float[]> owned(new float[(needed + 3) / 4 + 4]());
    std::memcpy(owned.get(), data, needed);
    v.data = owned.get();
    g->owned.push_back(std::move(owned));
  } else {
    v.data = data;  // lives as long as the program (and so the method)
  }
  return "";
}

// Scales of a per-channel or per-group value: inline, or a constant of `count` fp32 (bf16 when `bf16`).
std::string BlobParser::read_scales(uint32_t index, const flatbuffers::Vector<float>* inline_scales, uint32_t buffer,
                        uint32_t buffer_count, size_t count, bool bf16, std::vector<float>* out) {
  std::string label = value_label(index);
  if (inline_scales != nullptr && inline_scales->size() > 0) {
    if (inline_scales->size() != count)
      return label + ": " + std::to_string(inline_scales->size()) + " scales, " + std::to_string(count) +
             " expected";
    out->assign(inline_scales->begin(), inline_scales->end());
  } else {
    if (buffer == 0) return label + ": no scales (neither inline nor a scale buffer)";
    if (buffer_count != count)
      return label + ": the scale buffer holds " + std::to_string(buffer_count) + " scales, " +
             std::to_string(count) + " expected";
    const void* data = nullptr;
    bool transient = false;
    size_t bytes = count * (bf16 ? 2 : 4);
    if (std::string e = constant_bytes(label, buffer, bytes, "the scales", &data, &transient); !e.empty()) return e;
    out->resize(count);
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t k = 0; k < count; ++k) {
      if (bf16) {
        uint32_t bits = uint32_t{read_le<uint16_t>(p + 2 * k)} << 16;
        std::memcpy(&(*out)[k], &bits, 4);
      } else {
        (*out)[k] = read_le<float>(p + 4 * k);
      }
    }
  }
  for (float s : *out)
    if (!(s > 0.0f) || !std::isfinite(s))
      return label + ": scale " + std::to_string(s) + " is not a positive finite number";
  return "";
}

// Element type and quantization parameters of a quantized value.
std::string BlobParser::read_quantization(uint32_t index, const fb::TensorValue& t, const fb::QuantizedTensorValue& q) {
  Value& v = g->values[index];
  std::string label = value_label(index);
  using E = fb::ElementType;
  using Q = fb::Quantization;
  const char* type_name = fb::EnumNameElementType(t.element_type());
  std::string type_text = type_name[0] ? type_name : "type " + std::to_string(static_cast<int>(t.element_type()));
  if (std::string e = union_table_present(q.quantization(), q.quantization_type(), fb::EnumNameQuantization, label,
                                          "quantization");
      !e.empty())
    return e;
  switch (q.quantization_type()) {
    case Q::PerTensor: {
      const fb::PerTensor* p = q.quantization_as_PerTensor();
      int32_t lo = 0, hi = 0;
      switch (t.element_type()) {
        case E::qint8: v.dtype = DType::qint8, lo = -128, hi = 127; break;
        case E::quint8: v.dtype = DType::quint8, lo = 0, hi = 255; break;
        case E::qint32: v.dtype = DType::qint32; break;
        default: return fail_unsupported(label + " is " + type_text + " with per-tensor quantization");
      }
      v.scale = p->scale();
      v.zero_point = p->zero_point();
      if (!(v.scale > 0.0f) || !std::isfinite(v.scale))
        return label + ": scale " + std::to_string(v.scale) + " is not a positive finite number";
      if (v.zero_point < lo || v.zero_point > hi)
        return label + ": zero point " + std::to_string(v.zero_point) + " is outside [" + std::to_string(lo) +
               ", " + std::to_string(hi) + "] of " + type_text;
      return "";
    }
    case Q::PerChannel: {
      const fb::PerChannel* p = q.quantization_as_PerChannel();
      if (t.element_type() == E::qcint8) {
        v.dtype = DType::qcint8;
      } else if (t.element_type() == E::qcint32) {
        v.dtype = DType::qcint32;
      } else if (t.element_type() == E::qcint4) {
        v.dtype = DType::qcint4;
        if (v.dims.size() != 2) return label + ": 4-bit per-channel weights must be 2-D, got " + shape_text(v.dims);
      } else {
        return fail_unsupported(label + " is " + type_text + " with per-channel quantization");
      }
      if (p->axis() < 0 || static_cast<size_t>(p->axis()) >= v.dims.size())
        return label + ": channel axis " + std::to_string(p->axis()) + " is outside its rank " +
               std::to_string(v.dims.size());
      v.channel_dim = static_cast<uint32_t>(p->axis());
      return read_scales(index, p->scales(), p->scales_buffer(), p->scale_count(), v.dims[v.channel_dim], false,
                         &v.scales);
    }
    case Q::PerTokenDynamic: {
      const fb::PerTokenDynamic* p = q.quantization_as_PerTokenDynamic();
      if (t.element_type() != E::qdint8)
        return fail_unsupported(label + " is " + type_text + " with dynamic per-token quantization");
      v.dtype = DType::qdint8;
      if (p->non_batch_dims() != 1)
        return fail_unsupported(label + ": dynamic quantization over " + std::to_string(p->non_batch_dims()) +
                                " non-batch dims (only the last dim is supported)");
      return "";
    }
    case Q::PerChannelGroup: {
      const fb::PerChannelGroup* p = q.quantization_as_PerChannelGroup();
      if (t.element_type() != E::qbint4)
        return fail_unsupported(label + " is " + type_text + " with per-group quantization");
      v.dtype = DType::qbint4;
      if (v.dims.size() != 2) return label + ": 4-bit group-wise weights must be 2-D, got " + shape_text(v.dims);
      if (p->axis() != 0)
        return fail_unsupported(label + ": group-wise scales along axis " + std::to_string(p->axis()));
      if (p->group() <= 0 || v.dims[1] % static_cast<size_t>(p->group()) != 0)
        return label + ": group size " + std::to_string(p->group()) + " does not divide the " +
               std::to_string(v.dims[1]) + " input channels";
      v.group_size = static_cast<uint32_t>(p->group());
      return read_scales(index, nullptr, p->scales_buffer(), p->scale_count(), v.dims[0] * (v.dims[1] / v.group_size),
                         true, &v.scales);
    }
    default:
      return label + " is quantized but has no quantization parameters";
  }
}

std::string BlobParser::read_values() {
  const auto* values = root->values();
  if (values == nullptr || values->size() == 0) return "graph has no values";
  if (values->size() > kMaxValues) return "graph has " + std::to_string(values->size()) + " values (limit " +
                                          std::to_string(kMaxValues) + ")";
  g->num_externals = root->num_externals();
  if (g->num_externals > kMaxValues)
    return "graph declares " + std::to_string(g->num_externals) + " external values (limit " +
           std::to_string(kMaxValues) + ")";
  g->values.resize(values->size());
  std::vector<int64_t> by_external(g->num_externals, -1);
  for (uint32_t i = 0; i < values->size(); ++i) {
    const fb::Value* fv = values->Get(i);
    const fb::TensorValue* t = nullptr;
    const fb::QuantizedTensorValue* q = nullptr;
    if (std::string e = union_table_present(fv->kind(), fv->kind_type(), fb::EnumNameValueKind,
                                            "value " + std::to_string(i), "kind");
        !e.empty())
      return e;
    switch (fv->kind_type()) {
      case fb::ValueKind::TensorValue: t = fv->kind_as_TensorValue(); break;
      case fb::ValueKind::QuantizedTensorValue:
        q = fv->kind_as_QuantizedTensorValue();
        t = q->base();
        break;
      default:
        return "value " + std::to_string(i) + " has no tensor (value kind " +
               std::to_string(static_cast<int>(fv->kind_type())) + ")";
    }
    if (t == nullptr) return "value " + std::to_string(i) + " has no tensor";
    Value& v = g->values[i];
    v.id = t->id();
    if (!id_to_index.emplace(v.id, i).second)
      return "value " + std::to_string(i) + " reuses id " + std::to_string(v.id) + " of value " +
             std::to_string(id_to_index[v.id]);
    // fp16 values are computed in fp32 here: constants are widened at init, delegate inputs and outputs are
    // converted at the boundary (Delegate::execute_fp16_boundary).
    v.fp16 = q == nullptr && t->element_type() == fb::ElementType::fp16;
    if (q == nullptr && t->element_type() != fb::ElementType::fp32 && !v.fp16)
      return fail_unsupported(value_label(i) + " has element type " +
                              std::string(fb::EnumNameElementType(t->element_type())[0]
                                              ? fb::EnumNameElementType(t->element_type())
                                              : "unknown") +
                              " (" + std::to_string(static_cast<int>(t->element_type())) +
                              "); this XNNPACK delegate runs float32, float16 and quantized values only");
    if (t->dynamic_quant_type() != fb::ElementType::invalid)
      return fail_unsupported(value_label(i) + " asks for dynamic quantization, which is not supported");
    const auto* shape = t->shape();
    size_t rank = shape ? shape->size() : 0;
    if (t->rank() != rank)
      return value_label(i) + ": rank field says " + std::to_string(t->rank()) + " but the shape has " +
             std::to_string(rank) + " dims";
    if (rank > kMaxRank)
      return value_label(i) + ": rank " + std::to_string(rank) + " exceeds XNNPACK's " + std::to_string(kMaxRank);
    size_t elements = 1;
    for (size_t d = 0; d < rank; ++d) {
      size_t dim = shape->Get(static_cast<flatbuffers::uoffset_t>(d));
      if (dim == 0) return value_label(i) + ": dim " + std::to_string(d) + " is 0";
      if (dim > kMaxElements || elements > kMaxElements / dim)
        return value_label(i) + ": shape has more than 2^32 elements";
      elements *= dim;
      v.dims.push_back(dim);
    }
    if (q != nullptr) {
      if (std::string e = read_quantization(i, *t, *q); !e.empty()) return e;
      g->quantized = true;
    }
    uint32_t io = t->io_flags();
    if ((io & ~(kFlagInput | kFlagOutput)) != 0)
      return value_label(i) + ": unknown flags " + std::to_string(io) + " (only external input 1 and output 2)";
    if (io == (kFlagInput | kFlagOutput)) return value_label(i) + " is flagged both external input and output";
    v.io = io;
    if (io != 0 && v.dtype != DType::fp32)
      return fail_unsupported(value_label(i) + " is a delegate input or output of type " + dtype_name(v.dtype) +
                              "; quantized values must stay inside the delegate (Convert at its boundary)");
    if (io != 0) {
      uint32_t ext = t->external_index();
      if (ext >= g->num_externals)
        return value_label(i) + ": external index " + std::to_string(ext) + " is outside the " +
               std::to_string(g->num_externals) + " external values";
      if (by_external[ext] >= 0)
        return value_label(i) + ": external index " + std::to_string(ext) + " is also used by value " +
               std::to_string(by_external[ext]);
      by_external[ext] = i;
      v.external = ext;
      if (t->constant_index() != 0) return value_label(i) + " is external and constant at once";
    } else if (t->external_index() != kNone) {
      return value_label(i) + ": external index " + std::to_string(t->external_index()) +
             " without an external input/output flag";
    }
    if (t->constant_index() != 0) {
      if (v.dtype == DType::qdint8) return value_label(i) + " is dynamically quantized and constant at once";
      if (std::string e = read_constant(i, *t); !e.empty()) return e;
    } else if (v.dtype == DType::qcint8 || v.dtype == DType::qcint32 || is_4bit(v.dtype)) {
      return fail_unsupported(value_label(i) + " is " + dtype_name(v.dtype) +
                              " but not constant (per-channel and group-wise values must be weights or biases)");
    }
  }
  for (uint32_t ext = 0; ext < g->num_externals; ++ext) {
    if (by_external[ext] < 0) continue;
    uint32_t index = static_cast<uint32_t>(by_external[ext]);
    (g->values[index].io == kFlagInput ? g->inputs : g->outputs).push_back(index);
  }
  if (g->outputs.empty()) return "graph has no external output";
  // The blob's own input/output lists, when present, must name exactly the flagged values.
  auto check_list = [&](const flatbuffers::Vector<uint32_t>* list, const std::vector<uint32_t>& flagged,
                        const char* what) -> std::string {
    if (list == nullptr || list->size() == 0) return "";
    std::vector<uint32_t> listed;
    for (uint32_t id : *list) {
      auto it = id_to_index.find(id);
      if (it == id_to_index.end())
        return std::string(what) + " id " + std::to_string(id) + " is not a value";
      listed.push_back(it->second);
    }
    std::vector<uint32_t> a = listed, b = flagged;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b)
      return std::string("the graph's ") + what + " ids " + list_text(listed) +
             " differ from the values flagged as external " + what + "s " + list_text(flagged);
    return "";
  };
  if (std::string e = check_list(root->input_ids(), g->inputs, "input"); !e.empty()) return e;
  if (std::string e = check_list(root->output_ids(), g->outputs, "output"); !e.empty()) return e;
  return "";
}

std::string BlobParser::run() {
  std::vector<uint64_t> storage;
  size_t fb_size = 0;
  if (std::string e = read_container(&storage, &fb_size); !e.empty()) return e;
  if (std::string e = read_values(); !e.empty()) return e;
  if (std::string e = read_nodes(); !e.empty()) return e;
  // The declared shapes must be what the nodes compute from the declared inputs.
  std::vector<Shape> input_shapes;
  for (uint32_t v : g->inputs) input_shapes.push_back(g->values[v].dims);
  std::vector<Shape> shapes;
  if (std::string e = infer_all(*g, input_shapes, &shapes); !e.empty()) return e;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    uint32_t v = g->nodes[i].output;
    if (shapes[v] != g->values[v].dims)
      return node_label(*g, i) + ": output " + value_label(v) + " is declared " + shape_text(g->values[v].dims) +
             " but the node computes " + shape_text(shapes[v]);
  }
  return "";
}

std::string parse_blob(const uint8_t* blob, size_t size, const NamedDataLookup& named_data, Graph* graph,
                       bool* unsupported) {
  *unsupported = false;
  if (blob == nullptr) return "no delegate blob";
  BlobParser parser{blob, size, named_data, graph, unsupported, false, 0, 0, nullptr, {}};
  return parser.run();
}

}  // namespace etrt::xnn
