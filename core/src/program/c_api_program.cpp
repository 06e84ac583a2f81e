// The exported C functions for programs and methods. Every one that allocates is fenced
// (error.h): no exception of the host's, out of memory above all, crosses into a C caller.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "../error.h"
#include "../report_json.h"
#include "etrt/etrt.h"
#include "method.h"
#include "program.h"
#include "resolver.h"
#include "tracing.h"

struct et_program {
  std::shared_ptr<etrt::Program> program;
  std::vector<std::string> method_names;
};

struct et_method {
  std::unique_ptr<etrt::Method> method;
};

struct et_trace_session {
  std::shared_ptr<etrt::TraceSession> session;
};

using etrt::fenced_status;
using etrt::fenced_value;
using etrt::hand_over;
using etrt::make_error;

namespace {

int32_t finish_load(etrt::AlignedBuffer bytes, const std::string& origin, et_program** out, et_error** error) {
  std::shared_ptr<etrt::Program> program;
  if (et_error* e = etrt::Program::load(std::move(bytes), origin, &program)) return hand_over(e, error);
  auto* handle = new et_program{std::move(program), {}};
  for (size_t i = 0; i < handle->program->method_count(); ++i)
    handle->method_names.push_back(handle->program->method_name(i));
  *out = handle;
  return ET_OK;
}

int32_t attach_data(et_program* program, etrt::AlignedBuffer bytes, const std::string& origin, et_error** error) {
  std::shared_ptr<const etrt::DataFile> file;
  if (et_error* e = etrt::DataFile::load(std::move(bytes), origin, &file)) return hand_over(e, error);
  return hand_over(program->program->add_data_file(std::move(file)), error);
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
  return fenced_status("et_program_load_file", error, [&]() -> int32_t {
    if (path == nullptr || out == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "path or out is null"), error);
    etrt::AlignedBuffer bytes;
    if (et_error* e = etrt::read_file_bytes(path, &bytes)) return hand_over(e, error);
    return finish_load(std::move(bytes), path, out, error);
  });
}

int32_t et_program_load_bytes(const void* data, size_t size, const char* origin, et_program** out, et_error** error) {
  return fenced_status("et_program_load_bytes", error, [&]() -> int32_t {
    if ((data == nullptr && size > 0) || out == nullptr)
      return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "data or out is null"), error);
    etrt::AlignedBuffer bytes(size);
    if (size > 0 && bytes.data() == nullptr) return hand_over(make_error(ET_ERR_OUT_OF_MEMORY, "cannot copy program bytes"), error);
    if (size > 0) std::memcpy(bytes.data(), data, size);
    return finish_load(std::move(bytes), origin ? origin : "(program bytes)", out, error);
  });
}

void et_program_destroy(et_program* program) { delete program; }

int32_t et_program_add_data_file(et_program* program, const char* path, et_error** error) {
  return fenced_status("et_program_add_data_file", error, [&]() -> int32_t {
    if (program == nullptr || path == nullptr)
      return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "program or path is null"), error);
    etrt::AlignedBuffer bytes;
    if (et_error* e = etrt::read_file_bytes(path, &bytes)) return hand_over(e, error);
    return attach_data(program, std::move(bytes), path, error);
  });
}

int32_t et_program_add_data_bytes(et_program* program, const void* data, size_t size, const char* origin,
                                  et_error** error) {
  return fenced_status("et_program_add_data_bytes", error, [&]() -> int32_t {
    if (program == nullptr || (data == nullptr && size > 0))
      return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "program or data is null"), error);
    etrt::AlignedBuffer bytes(size);
    if (size > 0 && bytes.data() == nullptr) return hand_over(make_error(ET_ERR_OUT_OF_MEMORY, "cannot copy data bytes"), error);
    if (size > 0) std::memcpy(bytes.data(), data, size);
    return attach_data(program, std::move(bytes), origin ? origin : "(data bytes)", error);
  });
}

size_t et_program_method_count(const et_program* program) {
  return program ? program->method_names.size() : 0;
}

const char* et_program_method_name(const et_program* program, size_t index) {
  return program && index < program->method_names.size() ? program->method_names[index].c_str() : nullptr;
}

int32_t et_program_method_info(const et_program* program, const char* method, et_method_info* out, et_error** error) {
  return fenced_status("et_program_method_info", error, [&]() -> int32_t {
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
  });
}

int32_t et_program_io_info(const et_program* program, const char* method, int32_t is_output, size_t index,
                           et_value_info* out, et_error** error) {
  return fenced_status("et_program_io_info", error, [&]() -> int32_t {
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
  });
}

const char* et_program_operator_name(const et_program* program, const char* method, size_t index) {
  return fenced_value(static_cast<const char*>(nullptr), [&]() -> const char* {
    const etrt::pte::ExecutionPlan* plan = plan_of(program, method, nullptr);
    if (plan == nullptr || plan->operators() == nullptr || index >= plan->operators()->size()) return nullptr;
    const etrt::pte::Operator* op = plan->operators()->Get(static_cast<flatbuffers::uoffset_t>(index));
    std::string name = op->name()->str();
    if (op->overload() != nullptr && op->overload()->size() > 0)
      name.append(1, '.').append(op->overload()->c_str(), op->overload()->size());
    return etrt::intern(name);
  });
}

const char* et_program_delegate_id(const et_program* program, const char* method, size_t index) {
  return fenced_value(static_cast<const char*>(nullptr), [&]() -> const char* {
    const etrt::pte::ExecutionPlan* plan = plan_of(program, method, nullptr);
    if (plan == nullptr || plan->delegates() == nullptr || index >= plan->delegates()->size()) return nullptr;
    return etrt::intern(plan->delegates()->Get(static_cast<flatbuffers::uoffset_t>(index))->id()->str());
  });
}

const char* et_program_external_tensor(const et_program* program, const char* method, size_t index) {
  return fenced_value(static_cast<const char*>(nullptr), [&]() -> const char* {
    const etrt::pte::ExecutionPlan* plan = plan_of(program, method, nullptr);
    if (plan == nullptr || plan->values() == nullptr) return nullptr;
    // validate() checked every external tensor has a name.
    for (const etrt::pte::EValue* value : *plan->values()) {
      const etrt::pte::Tensor* tensor = value != nullptr ? value->val_as_Tensor() : nullptr;
      if (tensor == nullptr || tensor->extra_tensor_info() == nullptr ||
          tensor->extra_tensor_info()->location() != etrt::pte::TensorDataLocation::EXTERNAL)
        continue;
      if (index-- == 0) return etrt::intern(tensor->extra_tensor_info()->fully_qualified_name()->str());
    }
    return nullptr;
  });
}

int32_t et_method_load(et_program* program, const char* name, et_method** out, et_error** error) {
  return fenced_status("et_method_load", error, [&]() -> int32_t {
    if (program == nullptr || name == nullptr || out == nullptr)
      return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "program, name or out is null"), error);
    std::unique_ptr<etrt::Method> method;
    if (et_error* e = etrt::Method::load(program->program, name, &method)) return hand_over(e, error);
    *out = new et_method{std::move(method)};
    return ET_OK;
  });
}

void et_method_destroy(et_method* method) { delete method; }

size_t et_method_input_count(const et_method* method) {
  return method ? method->method->input_count() : 0;
}
size_t et_method_output_count(const et_method* method) {
  return method ? method->method->output_count() : 0;
}

int32_t et_method_set_input(et_method* method, size_t index, const et_value* value, et_error** error) {
  return fenced_status("et_method_set_input", error, [&]() -> int32_t {
    if (method == nullptr || value == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "method or value is null"), error);
    return hand_over(method->method->set_input(index, *value), error);
  });
}

int32_t et_method_execute(et_method* method, et_error** error) {
  return fenced_status("et_method_execute", error, [&]() -> int32_t {
    if (method == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "method is null"), error);
    return hand_over(method->method->execute(), error);
  });
}

const et_value* et_method_output(const et_method* method, size_t index) {
  return method ? method->method->output(index) : nullptr;
}

int32_t et_trace_session_create(const char* tracer, const et_trace_options* options, et_trace_session** out,
                                et_error** error) {
  return fenced_status("et_trace_session_create", error, [&]() -> int32_t {
    if (tracer == nullptr || out == nullptr)
      return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "tracer or out is null"), error);
    constexpr size_t kMinimumSize = offsetof(et_trace_options, debug_buffer_size) + sizeof(size_t);
    if (options != nullptr && options->struct_size < kMinimumSize)
      return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "et_trace_options is too small"), error);
    std::string label = options && options->label ? options->label : "";
    size_t debug_buffer_size = options ? options->debug_buffer_size : 0;
    std::shared_ptr<etrt::TraceSession> session;
    if (et_error* e = etrt::TraceSession::create(tracer, label, debug_buffer_size, &session)) return hand_over(e, error);
    *out = new et_trace_session{std::move(session)};
    return ET_OK;
  });
}

void et_trace_session_destroy(et_trace_session* session) { delete session; }

int32_t et_method_set_trace_session(et_method* method, et_trace_session* session, et_error** error) {
  return fenced_status("et_method_set_trace_session", error, [&]() -> int32_t {
    if (method == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "method is null"), error);
    method->method->set_trace_session(session ? session->session : nullptr);
    return ET_OK;
  });
}

namespace {

int32_t session_result(etrt::TraceSession& session, const char* what, void** data, size_t* size, et_error** error) {
  if (what == nullptr || data == nullptr || size == nullptr)
    return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "what, data or size is null"), error);
  std::string bytes;
  if (et_error* e = session.result(what, &bytes)) return hand_over(e, error);
  void* copy = std::malloc(bytes.size() > 0 ? bytes.size() : 1);
  if (copy == nullptr) return hand_over(make_error(ET_ERR_OUT_OF_MEMORY, "cannot copy the trace result"), error);
  std::memcpy(copy, bytes.data(), bytes.size());
  *data = copy;
  *size = bytes.size();
  return ET_OK;
}

}  // namespace

int32_t et_trace_session_result(et_trace_session* session, const char* what, void** data, size_t* size,
                                et_error** error) {
  return fenced_status("et_trace_session_result", error, [&]() -> int32_t {
    if (session == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "session is null"), error);
    return session_result(*session->session, what, data, size, error);
  });
}

void et_buffer_free(void* data) { std::free(data); }

int32_t et_method_enable_tracer(et_method* method, const char* tracer, const et_trace_options* options,
                                et_error** error) {
  return fenced_status("et_method_enable_tracer", error, [&]() -> int32_t {
    if (method == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "method is null"), error);
    et_trace_session* session = nullptr;
    if (int32_t status = et_trace_session_create(tracer, options, &session, error); status != ET_OK) return status;
    method->method->set_trace_session(session->session);
    et_trace_session_destroy(session);  // the method holds it
    return ET_OK;
  });
}

int32_t et_method_trace_result(et_method* method, const char* what, void** data, size_t* size, et_error** error) {
  return fenced_status("et_method_trace_result", error, [&]() -> int32_t {
    if (method == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "method is null"), error);
    const std::shared_ptr<etrt::TraceSession>& session = method->method->trace_session();
    if (session == nullptr)
      return hand_over(make_error(ET_ERR_INVALID_STATE, "method '" + method->method->name() + "' is not traced"), error);
    return session_result(*session, what, data, size, error);
  });
}

}  // extern "C"

int32_t et_planned_server(int32_t kind, const char* name, int32_t* builtin, et_plugin_record* out) {
  if (name == nullptr || builtin == nullptr) return ET_ERR_INVALID_ARGUMENT;
  *builtin = etrt::builtin_server(kind, name) != nullptr ? 1 : 0;
  if (*builtin) return ET_OK;
  return et_registry_planned_provider(kind, name, out);
}
