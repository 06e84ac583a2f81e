// The exported C functions for programs and methods.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "../error.h"
#include "../report_json.h"
#include "etrt/etrt.h"
#include "method.h"
#include "program.h"

struct et_program {
  std::shared_ptr<etrt::Program> program;
  std::vector<std::string> method_names;
};

struct et_method {
  std::unique_ptr<etrt::Method> method;
};

using etrt::hand_over;
using etrt::make_error;

namespace {

// Files larger than this are refused before reading (a .pte holds weights; 16 GiB is plenty).
constexpr uintmax_t kMaxProgramBytes = uintmax_t{16} << 30;

int32_t finish_load(etrt::AlignedBuffer bytes, const std::string& origin, et_program** out, et_error** error) {
  std::shared_ptr<etrt::Program> program;
  if (et_error* e = etrt::Program::load(std::move(bytes), origin, &program)) return hand_over(e, error);
  auto* handle = new et_program{std::move(program), {}};
  for (size_t i = 0; i < handle->program->method_count(); ++i)
    handle->method_names.push_back(handle->program->method_name(i));
  *out = handle;
  return ET_OK;
}

void fill_value_info(const etrt::pte::EValue& value, et_value_info* out) {
  switch (value.val_type()) {
    case etrt::pte::KernelTypes::Tensor: {
      const etrt::pte::Tensor* t = value.val_as_Tensor();
      out->tag = ET_VALUE_TENSOR;
      out->dtype = static_cast<int32_t>(t->scalar_type());
      out->rank = static_cast<int32_t>(t->sizes() ? t->sizes()->size() : 0);
      out->dynamism = static_cast<int32_t>(t->shape_dynamism());
      for (int32_t i = 0; i < out->rank; ++i) {
        out->sizes[i] = t->sizes()->Get(static_cast<flatbuffers::uoffset_t>(i));
        out->dim_order[i] = t->dim_order()->Get(static_cast<flatbuffers::uoffset_t>(i));
      }
      std::string ignored;
      etrt::Program::tensor_nbytes(*t, &out->nbytes, &ignored);
      if (t->allocation_info() != nullptr) out->memory_id = static_cast<int32_t>(t->allocation_info()->memory_id());
      break;
    }
    case etrt::pte::KernelTypes::Int: out->tag = ET_VALUE_INT; break;
    case etrt::pte::KernelTypes::Bool: out->tag = ET_VALUE_BOOL; break;
    case etrt::pte::KernelTypes::Double: out->tag = ET_VALUE_DOUBLE; break;
    case etrt::pte::KernelTypes::String: out->tag = ET_VALUE_STRING; break;
    default: out->tag = ET_VALUE_NULL; break;
  }
}

const etrt::pte::ExecutionPlan* plan_of(const et_program* program, const char* method, et_error** error) {
  const etrt::pte::ExecutionPlan* plan =
      program && method ? program->program->plan(method) : nullptr;
  if (plan == nullptr)
    hand_over(make_error(ET_ERR_NOT_FOUND, std::string("no method named '") + (method ? method : "(null)") + "'"), error);
  return plan;
}

}  // namespace

extern "C" {

int32_t et_program_load_file(const char* path, et_program** out, et_error** error) {
  if (path == nullptr || out == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "path or out is null"), error);
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return hand_over(make_error(ET_ERR_NOT_FOUND, std::string(path) + ": cannot open: " + ec.message()), error);
  if (size > kMaxProgramBytes)
    return hand_over(make_error(ET_ERR_INVALID_PROGRAM, std::string(path) + ": " + std::to_string(size) + " bytes is larger than the 16 GiB limit"), error);
  etrt::AlignedBuffer bytes(static_cast<size_t>(size));
  if (size > 0 && bytes.data() == nullptr)
    return hand_over(make_error(ET_ERR_OUT_OF_MEMORY, std::string(path) + ": cannot allocate " + std::to_string(size) + " bytes"), error);
  std::ifstream stream(path, std::ios::binary);
  if (!stream.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    return hand_over(make_error(ET_ERR_NOT_FOUND, std::string(path) + ": cannot read"), error);
  return finish_load(std::move(bytes), path, out, error);
}

int32_t et_program_load_bytes(const void* data, size_t size, const char* origin, et_program** out, et_error** error) {
  if ((data == nullptr && size > 0) || out == nullptr)
    return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "data or out is null"), error);
  etrt::AlignedBuffer bytes(size);
  if (size > 0 && bytes.data() == nullptr) return hand_over(make_error(ET_ERR_OUT_OF_MEMORY, "cannot copy program bytes"), error);
  if (size > 0) std::memcpy(bytes.data(), data, size);
  return finish_load(std::move(bytes), origin ? origin : "(program bytes)", out, error);
}

void et_program_destroy(et_program* program) { delete program; }

size_t et_program_method_count(const et_program* program) { return program ? program->method_names.size() : 0; }

const char* et_program_method_name(const et_program* program, size_t index) {
  return program && index < program->method_names.size() ? program->method_names[index].c_str() : nullptr;
}

int32_t et_program_method_info(const et_program* program, const char* method, et_method_info* out, et_error** error) {
  const etrt::pte::ExecutionPlan* plan = plan_of(program, method, error);
  if (plan == nullptr) return ET_ERR_NOT_FOUND;
  if (out == nullptr || out->struct_size < sizeof(et_method_info))
    return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "et_method_info is null or too small"), error);
  *out = et_method_info{};
  out->struct_size = sizeof(et_method_info);
  out->num_inputs = plan->inputs() ? plan->inputs()->size() : 0;
  out->num_outputs = plan->outputs() ? plan->outputs()->size() : 0;
  out->num_operators = plan->operators() ? plan->operators()->size() : 0;
  out->num_delegates = plan->delegates() ? plan->delegates()->size() : 0;
  if (plan->chains())
    for (const auto* chain : *plan->chains()) out->num_instructions += chain->instructions() ? chain->instructions()->size() : 0;
  if (const auto* sizes = plan->non_const_buffer_sizes(); sizes && sizes->size() > 1) {
    out->num_planned_buffers = sizes->size() - 1;
    for (size_t i = 1; i < sizes->size(); ++i) out->planned_bytes += static_cast<uint64_t>(sizes->Get(static_cast<flatbuffers::uoffset_t>(i)));
  }
  return ET_OK;
}

int32_t et_program_io_info(const et_program* program, const char* method, int32_t is_output, size_t index,
                           et_value_info* out, et_error** error) {
  const etrt::pte::ExecutionPlan* plan = plan_of(program, method, error);
  if (plan == nullptr) return ET_ERR_NOT_FOUND;
  const auto* list = is_output ? plan->outputs() : plan->inputs();
  // Callers built before memory_id existed pass the shorter struct; write what fits.
  constexpr size_t kMinimumSize = offsetof(et_value_info, memory_id);
  if (out == nullptr || out->struct_size < kMinimumSize)
    return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "et_value_info is null or too small"), error);
  const size_t caller_size = out->struct_size;
  if (list == nullptr || index >= list->size())
    return hand_over(make_error(ET_ERR_NOT_FOUND, std::string(is_output ? "output " : "input ") + std::to_string(index) + " out of range"), error);
  const etrt::pte::EValue* value = plan->values()->Get(static_cast<flatbuffers::uoffset_t>(list->Get(static_cast<flatbuffers::uoffset_t>(index))));
  et_value_info info{};
  info.struct_size = std::min(caller_size, sizeof(et_value_info));
  fill_value_info(*value, &info);
  std::memcpy(out, &info, info.struct_size);
  return ET_OK;
}

const char* et_program_operator_name(const et_program* program, const char* method, size_t index) {
  const etrt::pte::ExecutionPlan* plan = plan_of(program, method, nullptr);
  if (plan == nullptr || plan->operators() == nullptr || index >= plan->operators()->size()) return nullptr;
  const etrt::pte::Operator* op = plan->operators()->Get(static_cast<flatbuffers::uoffset_t>(index));
  std::string name = op->name()->str();
  if (op->overload() != nullptr && op->overload()->size() > 0) name += "." + op->overload()->str();
  return etrt::intern(name);
}

const char* et_program_delegate_id(const et_program* program, const char* method, size_t index) {
  const etrt::pte::ExecutionPlan* plan = plan_of(program, method, nullptr);
  if (plan == nullptr || plan->delegates() == nullptr || index >= plan->delegates()->size()) return nullptr;
  return etrt::intern(plan->delegates()->Get(static_cast<flatbuffers::uoffset_t>(index))->id()->str());
}

int32_t et_method_load(et_program* program, const char* name, et_method** out, et_error** error) {
  if (program == nullptr || name == nullptr || out == nullptr)
    return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "program, name or out is null"), error);
  std::unique_ptr<etrt::Method> method;
  if (et_error* e = etrt::Method::load(program->program, name, &method)) return hand_over(e, error);
  *out = new et_method{std::move(method)};
  return ET_OK;
}

void et_method_destroy(et_method* method) { delete method; }

size_t et_method_input_count(const et_method* method) { return method ? method->method->input_count() : 0; }
size_t et_method_output_count(const et_method* method) { return method ? method->method->output_count() : 0; }

int32_t et_method_set_input(et_method* method, size_t index, const et_value* value, et_error** error) {
  if (method == nullptr || value == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "method or value is null"), error);
  return hand_over(method->method->set_input(index, *value), error);
}

int32_t et_method_execute(et_method* method, et_error** error) {
  if (method == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "method is null"), error);
  return hand_over(method->method->execute(), error);
}

const et_value* et_method_output(const et_method* method, size_t index) {
  return method ? method->method->output(index) : nullptr;
}

}  // extern "C"
