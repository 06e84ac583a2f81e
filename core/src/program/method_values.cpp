// A method's values and memory: planned buffers, the value table kernels see,
// and inputs set by the caller.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "../error.h"
#include "checked_size.h"
#include "etrt/plugin.hpp"
#include "method.h"
#include "resource_limits.h"
#include "tensor_shape.h"

namespace etrt {
namespace {

const pte::EValue* declared(const pte::ExecutionPlan& plan, size_t v) {
  return plan.values()->Get(static_cast<flatbuffers::uoffset_t>(v));
}

uint64_t offset_of(const pte::AllocationDetails& alloc) {
  return (static_cast<uint64_t>(alloc.memory_offset_high()) << 32) | alloc.memory_offset_low();
}

}  // namespace

et_error* Method::init_values() {
  const size_t count = plan_->values() ? plan_->values()->size() : 0;
  values_ = std::vector<Value>(count);  // never resized again: kernels hold pointers into it
  if (et_error* error = plan_memory()) return error;
  for (size_t v = 0; v < count; ++v) {
    const pte::EValue* source = declared(*plan_, v);
    et_value& value = values_[v].value;
    value.struct_size = sizeof(et_value);
    switch (source->val_type()) {
      case pte::KernelTypes::Int:
        value.tag = ET_VALUE_INT;
        value.as_int = source->val_as_Int()->int_val();
        break;
      case pte::KernelTypes::Bool:
        value.tag = ET_VALUE_BOOL;
        value.as_int = source->val_as_Bool()->bool_val() ? 1 : 0;
        break;
      case pte::KernelTypes::Double:
        value.tag = ET_VALUE_DOUBLE;
        value.as_double = source->val_as_Double()->double_val();
        break;
      case pte::KernelTypes::String: {
        const flatbuffers::String* s = source->val_as_String()->string_val();
        value.tag = ET_VALUE_STRING;
        value.items = s ? s->c_str() : "";
        value.count = s ? s->size() : 0;
        break;
      }
      case pte::KernelTypes::DoubleList: {
        const auto* items = source->val_as_DoubleList()->items();
        value.tag = ET_VALUE_DOUBLE_LIST;
        value.items = items ? items->data() : nullptr;
        value.count = items ? items->size() : 0;
        break;
      }
      case pte::KernelTypes::BoolList: {
        const auto* items = source->val_as_BoolList()->items();
        value.tag = ET_VALUE_BOOL_LIST;
        value.items = items ? items->data() : nullptr;
        value.count = items ? items->size() : 0;
        break;
      }
      case pte::KernelTypes::Tensor:
        if (et_error* error = init_tensor(*source->val_as_Tensor(), values_[v])) return error;
        break;
      default:
        value.tag = ET_VALUE_NULL;  // lists are filled in once every value exists
        break;
    }
  }
  init_lists();
  return nullptr;
}

// Planned memory: only as much of each buffer as the tensors in it use, so a
// corrupt buffer size cannot make us allocate more than the file justifies.
et_error* Method::plan_memory() {
  const auto* buffer_sizes = plan_->non_const_buffer_sizes();
  size_t buffer_count = buffer_sizes ? buffer_sizes->size() : 0;
  std::vector<uint64_t> used(buffer_count, 0);
  for (size_t v = 0; v < values_.size(); ++v) {
    const pte::Tensor* t = declared(*plan_, v)->val_as_Tensor();
    if (t == nullptr || t->allocation_info() == nullptr) continue;
    size_t nbytes = 0;
    std::string ignored;
    Program::tensor_nbytes(*t, &nbytes, &ignored);  // validated at program load
    uint64_t& end = used[t->allocation_info()->memory_id()];
    end = std::max<uint64_t>(end, offset_of(*t->allocation_info()) + nbytes);  // inside its buffer: validated
  }
  uint64_t total = 0;
  for (uint64_t u : used)
    if (!checked_add(total, u, &total)) {
      total = UINT64_MAX;  // saturates: far beyond any limit
      break;
    }
  if (total > planned_memory_limit())
    return make_error(ET_ERR_OUT_OF_MEMORY, program_->origin() + ": method '" + name_ + "' plans " +
                                                std::to_string(total) + " bytes of memory, more than the " +
                                                planned_memory_limit_text());
  planned_.reserve(buffer_count);
  for (size_t i = 0; i < buffer_count; ++i) {
    planned_.emplace_back(static_cast<size_t>(used[i]));
    if (used[i] > 0 && planned_.back().data() == nullptr)
      return make_error(ET_ERR_OUT_OF_MEMORY, program_->origin() + ": cannot allocate " + std::to_string(used[i]) +
                                                  " bytes of planned memory for method '" + name_ + "'");
  }
  return nullptr;
}

et_error* Method::init_tensor(const pte::Tensor& t, Value& value) {
  value.tensor = std::make_unique<TensorState>();
  TensorState& state = *value.tensor;
  et_tensor& tensor = state.tensor;
  tensor.struct_size = sizeof(et_tensor);
  tensor.dtype = static_cast<int32_t>(t.scalar_type());
  tensor.rank = static_cast<int32_t>(t.sizes() ? t.sizes()->size() : 0);
  for (int32_t i = 0; i < tensor.rank; ++i) {
    state.sizes[i] = t.sizes()->Get(static_cast<flatbuffers::uoffset_t>(i));
    state.dim_order[i] = t.dim_order()->Get(static_cast<flatbuffers::uoffset_t>(i));
  }
  tensor.sizes = state.sizes;
  tensor.strides = state.strides;
  tensor.dim_order = state.dim_order;
  plugin::dense_strides(tensor.sizes, tensor.dim_order, tensor.rank, state.strides);
  size_t nbytes = 0;
  std::string ignored;
  Program::tensor_nbytes(t, &nbytes, &ignored);
  tensor.nbytes = nbytes;
  tensor.capacity_bytes = nbytes;
  std::copy(state.sizes, state.sizes + tensor.rank, state.bound);
  state.bound_bytes = nbytes;
  tensor.dynamism = static_cast<int32_t>(t.shape_dynamism());
  if (const pte::AllocationDetails* alloc = t.allocation_info()) {
    state.memory_id = alloc->memory_id();
    state.memory_offset = offset_of(*alloc);
    tensor.data = planned_[state.memory_id].data() + state.memory_offset;
    state.planned = true;
    if (t.data_buffer_idx() > 0 && nbytes > 0) {  // an empty tensor may have no buffer: memcpy(nullptr) is UB
      ByteSpan initial = program_->mutable_initial_data(t.data_buffer_idx());
      std::memcpy(tensor.data, initial.data, nbytes);
    }
  } else if (t.extra_tensor_info() != nullptr && t.extra_tensor_info()->location() == pte::TensorDataLocation::EXTERNAL) {
    ByteSpan external;
    if (et_error* error = program_->external_tensor(t, &external)) return error;
    tensor.data = const_cast<uint8_t*>(external.data);
    tensor.is_const = 1;
  } else if (t.data_buffer_idx() > 0) {
    tensor.data = const_cast<uint8_t*>(program_->constant_data(t.data_buffer_idx()).data);
    tensor.is_const = 1;
  }
  value.value.tag = ET_VALUE_TENSOR;
  value.value.tensor = &tensor;
  return nullptr;
}

// Lists refer to other values, which now all exist.
void Method::init_lists() {
  for (size_t v = 0; v < values_.size(); ++v) {
    const pte::EValue* source = declared(*plan_, v);
    Value& slot = values_[v];
    et_value& value = slot.value;
    if (source->val_type() == pte::KernelTypes::IntList) {
      const auto* items = source->val_as_IntList()->items();
      size_t n = items ? items->size() : 0;
      slot.ints.assign(n, 0);
      slot.item_values.resize(n);
      for (size_t i = 0; i < n; ++i)
        slot.item_values[i] = static_cast<int32_t>(items->Get(static_cast<flatbuffers::uoffset_t>(i)));
      value.tag = ET_VALUE_INT_LIST;
      value.items = slot.ints.data();
      value.count = n;
      value.value_indices = slot.item_values.data();
      materialise(static_cast<int32_t>(v));
    } else if (source->val_type() == pte::KernelTypes::TensorList ||
               source->val_type() == pte::KernelTypes::OptionalTensorList) {
      bool optional = source->val_type() == pte::KernelTypes::OptionalTensorList;
      const auto* items = optional ? source->val_as_OptionalTensorList()->items() : source->val_as_TensorList()->items();
      for (size_t i = 0; items != nullptr && i < items->size(); ++i) {
        int32_t item = items->Get(static_cast<flatbuffers::uoffset_t>(i));
        TensorState* state = item >= 0 ? tensor_state(item) : nullptr;
        slot.tensors.push_back(state != nullptr ? &state->tensor : nullptr);
      }
      value.tag = optional ? ET_VALUE_OPTIONAL_TENSOR_LIST : ET_VALUE_TENSOR_LIST;
      value.items = slot.tensors.data();
      value.count = slot.tensors.size();
      value.value_indices = items ? items->data() : nullptr;
    }
  }
}

// Through the value, not the slot's own storage: after a Move the value is the source's list (of the same
// length, verify_instructions), and its items are the ones a kernel reads.
void Method::materialise(int32_t v) {
  const et_value& list = values_[v].value;
  auto* ints = const_cast<int64_t*>(static_cast<const int64_t*>(list.items));  // some slot's `ints`
  for (size_t i = 0; i < list.count; ++i) ints[i] = values_[list.value_indices[i]].value.as_int;
}

// The memory planner gives an input's bytes to later tensors once the input is
// dead, so after a run such an input no longer holds what the caller set.
void Method::find_reused_inputs() {
  auto overlaps = [](const TensorState& a, const TensorState& b) {
    return a.memory_id == b.memory_id && a.memory_offset < b.memory_offset + b.tensor.capacity_bytes &&
           b.memory_offset < a.memory_offset + a.tensor.capacity_bytes;
  };
  input_memory_reused_.assign(inputs_.size(), false);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const TensorState* input = tensor_state(inputs_[i]);
    if (input == nullptr || !input->planned || input->tensor.capacity_bytes == 0) continue;
    for (size_t v = 0; v < values_.size() && !input_memory_reused_[i]; ++v) {
      const TensorState* other = tensor_state(static_cast<int32_t>(v));
      if (static_cast<int32_t>(v) == inputs_[i] || other == nullptr || !other->planned) continue;
      input_memory_reused_[i] = overlaps(*input, *other);
    }
  }
}

// Scalar inputs are constants baked into the program; they must match its declaration.
et_error* Method::set_scalar_input(size_t index, const et_value& given, const std::string& where) {
  const pte::EValue* declaration = declared(*plan_, static_cast<size_t>(inputs_[index]));
  bool same = false;
  switch (declaration->val_type()) {
    case pte::KernelTypes::Int:
      same = given.tag == ET_VALUE_INT && given.as_int == declaration->val_as_Int()->int_val();
      break;
    case pte::KernelTypes::Bool:
      same = given.tag == ET_VALUE_BOOL && (given.as_int != 0) == declaration->val_as_Bool()->bool_val();
      break;
    case pte::KernelTypes::Double: {
      double want = declaration->val_as_Double()->double_val();
      same = given.tag == ET_VALUE_DOUBLE && std::fabs(given.as_double - want) <= 1e-4 + 1e-5 * std::fabs(want);
      break;
    }
    default:
      same = given.tag == values_[inputs_[index]].value.tag;
      break;
  }
  if (!same)
    return make_error(ET_ERR_INVALID_ARGUMENT, where + ": this input is a constant baked into the program and the value given differs");
  input_set_[index] = true;
  return nullptr;
}

et_error* Method::set_input(size_t index, const et_value& value) {
  std::string where = "method '" + name_ + "', input " + std::to_string(index);
  if (index >= inputs_.size())
    return make_error(ET_ERR_INVALID_ARGUMENT, where + ": out of range (the method has " +
                                                   std::to_string(inputs_.size()) + " inputs)");
  // The program's declaration decides (a move may have changed the value since).
  TensorState* slot = tensor_state(inputs_[index]);
  if (slot == nullptr) return set_scalar_input(index, value, where);
  if (value.tag != ET_VALUE_TENSOR || value.tensor == nullptr)
    return make_error(ET_ERR_INVALID_ARGUMENT, where + ": expected a tensor");
  const et_tensor& given = *value.tensor;
  et_tensor& t = slot->tensor;
  if (given.dtype != t.dtype)
    return make_error(ET_ERR_INVALID_ARGUMENT, where + ": expected dtype " + scalar_type_name(t.dtype) + ", got " +
                                                   scalar_type_name(given.dtype));
  if (given.rank != t.rank)
    return make_error(ET_ERR_INVALID_ARGUMENT, where + ": expected rank " + std::to_string(t.rank) + " " +
                                                   plugin::shape_string(slot->bound, t.rank) + ", got rank " + std::to_string(given.rank) +
                                                   " " + plugin::shape_string(given.sizes, given.rank));
  // Every check before anything changes, so a refused input leaves the method as it was.
  for (int32_t i = 0; i < t.rank; ++i)
    if (given.sizes[i] < 0)
      return make_error(ET_ERR_INVALID_ARGUMENT, where + ": negative size in " + plugin::shape_string(given.sizes, given.rank));
  for (int32_t i = 0; i < t.rank; ++i) {
    bool fits = t.dynamism == ET_SHAPE_STATIC ? given.sizes[i] == slot->bound[i]
                                              : given.sizes[i] >= 0 && given.sizes[i] <= slot->bound[i];
    if (!fits)
      return make_error(ET_ERR_INVALID_ARGUMENT,
                        where + ": shape " + plugin::shape_string(given.sizes, given.rank) + " does not fit the program's " +
                            (t.dynamism == ET_SHAPE_STATIC ? "static shape " : "bound ") + plugin::shape_string(slot->bound, t.rank) +
                            " (dim " + std::to_string(i) + ")");
  }
  // The caller's data must be dense in the input's dim order (row-major when it gives none).
  bool same_order = true;
  for (int32_t i = 0; i < t.rank; ++i)
    same_order = same_order && t.dim_order[i] == (given.dim_order ? given.dim_order[i] : static_cast<uint8_t>(i));
  if (!same_order || (given.strides != nullptr && !plugin::is_dense_in_dim_order(given)))
    return make_error(ET_ERR_NOT_SUPPORTED, where + ": data must be dense in the input's dim order");
  // Within the bound, which passed the same measure at load.
  const ShapeSize given_shape = measure_shape(given.sizes, static_cast<size_t>(t.rank), dtype_size(t.dtype));
  if (given.data == nullptr && given_shape.numel > 0) return make_error(ET_ERR_INVALID_ARGUMENT, where + ": tensor has no data");

  if (!slot->planned) t.capacity_bytes = slot->bound_bytes;  // an aliased input may grow back to its bound
  if (et_error* error = resize_tensor(&t, given.sizes, static_cast<size_t>(t.rank))) {
    std::string message = where + ": " + error->message;
    delete error;
    return make_error(ET_ERR_INVALID_ARGUMENT, message);
  }
  if (slot->planned) {
    if (t.nbytes > 0) std::memcpy(t.data, given.data, t.nbytes);
  } else {
    t.data = given.data;
  }
  input_set_[index] = true;
  return nullptr;
}

}  // namespace etrt
