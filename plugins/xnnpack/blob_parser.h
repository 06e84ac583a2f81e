// The delegate blob parser's state, shared by blob.cpp (container, values, constants, quantization) and
// blob_nodes.cpp (nodes, their references and order, quantized node forms). Internal to the plugin.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph.h"
#include "xnnpack_blob_generated.h"

namespace etrt::xnn {
namespace fb = etrt::xnnblob;

struct BlobParser {
  const uint8_t* blob;
  size_t size;
  const NamedDataLookup& named_data;
  Graph* g;
  bool* unsupported;

  bool has_header = false;
  uint64_t const_offset = 0, const_size = 0;
  const fb::Graph* root = nullptr;
  std::unordered_map<uint32_t, uint32_t> id_to_index;

  std::string fail_unsupported(std::string message) {
    *unsupported = true;
    return message;
  }

  std::string value_label(uint32_t index) const {
    return "value " + std::to_string(index) + " (id " + std::to_string(g->values[index].id) + ")";
  }

  // A union is a type beside an offset to that member's table, and the flatbuffer verifier accepts the type
  // without the table (a null offset). Every union of the blob (a value's kind, a quantized value's
  // quantization, a node's operation) is checked here before any of its members is read.
  template <typename Kind>
  static std::string union_table_present(const void* table, Kind kind, const char* (*kind_name)(Kind),
                                         const std::string& holder, const char* field) {
    if (kind == Kind::NONE || table != nullptr) return "";
    const char* name = kind_name(kind);
    return holder + ": its " + field + " is " + (name[0] ? std::string(name) : "type " + std::to_string(int(kind))) +
           " but holds no table";
  }

  template <typename T>
  static std::vector<uint32_t> to_list(const flatbuffers::Vector<T>* v) {
    std::vector<uint32_t> out;
    if (v != nullptr) out.assign(v->begin(), v->end());
    return out;
  }

  // blob.cpp
  std::string run();
  std::string read_container(std::vector<uint64_t>* storage, size_t* fb_size_out);
  std::string constant_bytes(const std::string& label, uint32_t ci, size_t needed, const std::string& holder,
                             const void** data, bool* transient);
  std::string read_constant(uint32_t index, const fb::TensorValue& t);
  std::string read_scales(uint32_t index, const flatbuffers::Vector<float>* inline_scales, uint32_t buffer,
                          uint32_t buffer_count, size_t count, bool bf16, std::vector<float>* out);
  std::string read_quantization(uint32_t index, const fb::TensorValue& t, const fb::QuantizedTensorValue& q);
  std::string read_values();

  // blob_nodes.cpp
  std::string ref(size_t node, const char* what, uint32_t id, uint32_t* out, bool optional = false);
  std::string read_node(size_t i, const fb::Node* fn);
  std::string read_nodes();
  void expand_shared_slopes();
  std::string check_quantized_nodes();
};

}  // namespace etrt::xnn
