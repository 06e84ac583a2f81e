// What a method takes and returns, read from the program alone (no plugin is
// loaded): ExecuTorch's MethodMeta and TensorInfo over et_program_io_info.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "etrt/module/evalue.h"
#include "etrt/module/result.h"
#include "etrt/module/tensor.h"

namespace etrt::extension {

class TensorInfo {
 public:
  explicit TensorInfo(const et_value_info& info)
      : type_(static_cast<ScalarType>(info.dtype)), memory_planned_(info.memory_id != 0), nbytes_(info.nbytes) {
    for (int32_t i = 0; i < info.rank; ++i) {
      sizes_.push_back(static_cast<int32_t>(info.sizes[i]));
      dim_order_.push_back(info.dim_order[i]);
    }
  }
  // For a dynamic shape, its upper bound.
  ArrayRef<int32_t> sizes() const { return sizes_; }
  ArrayRef<uint8_t> dim_order() const { return dim_order_; }
  ScalarType scalar_type() const { return type_; }
  // True when the program plans the tensor's memory (an input is copied into
  // it); false when the caller provides the data.
  bool is_memory_planned() const { return memory_planned_; }
  size_t nbytes() const { return nbytes_; }
  std::string name() const { return {}; }  // .pte inputs and outputs carry no names

 private:
  std::vector<int32_t> sizes_;
  std::vector<uint8_t> dim_order_;
  ScalarType type_;
  bool memory_planned_;
  size_t nbytes_;
};

class MethodMeta {
 public:
  // Throws etrt::Error when the program has no such method.
  MethodMeta(const ::etrt::Program& program, const std::string& name) : name_(name) {
    et_method_info info = program.method_info(name);
    for (size_t i = 0; i < info.num_inputs; ++i) inputs_.push_back(program.io_info(name, false, i));
    for (size_t i = 0; i < info.num_outputs; ++i) outputs_.push_back(program.io_info(name, true, i));
    for (const std::string& id : program.delegates(name)) {
      bool seen = false;
      for (const std::string& known : backends_) seen = seen || known == id;
      if (!seen) backends_.push_back(id);
    }
    num_planned_buffers_ = info.num_planned_buffers;
    planned_bytes_ = info.planned_bytes;
    num_instructions_ = info.num_instructions;
  }

  const char* name() const { return name_.c_str(); }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  Result<Tag> input_tag(size_t index) const { return tag(inputs_, index, "input"); }
  Result<Tag> output_tag(size_t index) const { return tag(outputs_, index, "output"); }
  Result<TensorInfo> input_tensor_meta(size_t index) const { return tensor_meta(inputs_, index, "input"); }
  Result<TensorInfo> output_tensor_meta(size_t index) const { return tensor_meta(outputs_, index, "output"); }
  size_t num_memory_planned_buffers() const { return num_planned_buffers_; }
  // etrt's program reader gives the planned buffers' total, not each one's size.
  uint64_t memory_planned_bytes() const { return planned_bytes_; }
  bool uses_backend(const char* backend_name) const {
    for (const std::string& id : backends_)
      if (id == backend_name) return true;
    return false;
  }
  size_t num_backends() const { return backends_.size(); }
  Result<const char*> get_backend_name(size_t index) const {
    if (index >= backends_.size())
      return Result<const char*>(Error::InvalidArgument, "backend " + std::to_string(index) + " of " +
                                                             std::to_string(backends_.size()) + " in " + name_);
    return backends_[index].c_str();
  }
  size_t num_instructions() const { return num_instructions_; }

 private:
  Result<Tag> tag(const std::vector<et_value_info>& values, size_t index, const char* what) const {
    if (index >= values.size()) return Result<Tag>(Error::InvalidArgument, out_of_range(values, index, what));
    return tag_from_value_tag(values[index].tag);
  }
  Result<TensorInfo> tensor_meta(const std::vector<et_value_info>& values, size_t index, const char* what) const {
    if (index >= values.size()) return Result<TensorInfo>(Error::InvalidArgument, out_of_range(values, index, what));
    if (values[index].tag != ET_VALUE_TENSOR)
      return Result<TensorInfo>(Error::InvalidArgument, std::string(what) + " " + std::to_string(index) + " of " +
                                                            name_ + " is a " +
                                                            tag_to_string(tag_from_value_tag(values[index].tag)) +
                                                            ", not a tensor");
    return TensorInfo(values[index]);
  }
  std::string out_of_range(const std::vector<et_value_info>& values, size_t index, const char* what) const {
    return name_ + " has " + std::to_string(values.size()) + " " + what + "s; there is no " + what + " " +
           std::to_string(index);
  }

  std::string name_;
  std::vector<et_value_info> inputs_, outputs_;
  std::vector<std::string> backends_;
  size_t num_planned_buffers_ = 0;
  uint64_t planned_bytes_ = 0;
  size_t num_instructions_ = 0;
};

}  // namespace etrt::extension
