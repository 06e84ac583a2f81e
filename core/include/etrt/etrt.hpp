// C++ layer over libetrt's C API. Header-only, so libetrt exports only C
// symbols and a host built with another standard library still links.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "etrt/etrt.h"

namespace etrt {

class Error : public std::runtime_error {
 public:
  Error(int32_t code, const std::string& message, std::string plugin = {})
      : std::runtime_error(message), code_(code), plugin_(std::move(plugin)) {}
  int32_t code() const { return code_; }
  const std::string& plugin() const { return plugin_; }

 private:
  int32_t code_;
  std::string plugin_;
};

// Throws etrt::Error when status is not ET_OK; releases the C error. Call it
// after the C function returned (not as check(f(&error), error): argument
// evaluation order would let it read `error` first).
inline void check(int32_t status, et_error* error) {
  if (status == ET_OK) return;
  std::string message = error ? et_error_message(error) : et_status_name(status);
  std::string plugin = error ? et_error_plugin(error) : "";
  et_error_destroy(error);
  throw Error(status, message, plugin);
}

struct PluginInfo {
  std::string name, version, description, library_path, manifest_path;
  int32_t state = ET_PLUGIN_DECLARED;
  int32_t source = ET_SOURCE_EXPLICIT;
  int32_t priority = 0;
  uint32_t abi_major = 0, abi_minor = 0, built_abi_major = 0, built_abi_minor = 0;
  uint32_t load_count = 0;
  std::string failure, warnings;
  std::string cpu_level, cpu_level_reason;  // the chosen library's CPU level and why it was chosen
  bool loaded() const { return state == ET_PLUGIN_LOADED; }
};

struct RegistryEntry {
  int32_t kind = ET_ENTRY_OPERATOR;
  bool is_winner = false;
  std::string name, variant, plugin, plugin_path, reason;
  int32_t priority = 0;
};

struct Rejection {
  std::string path, reason;
};

// The process' one runtime: a view of libetrt's registries and thread pool.
class Runtime {
 public:
  static Runtime& get() {
    static Runtime runtime;
    return runtime;
  }

  void load_plugin(const std::string& path) {
    et_error* error = nullptr;
    int32_t status = et_load_plugin(path.c_str(), &error);
    check(status, error);
  }
  void add_manifest(const std::string& path) {
    et_error* error = nullptr;
    int32_t status = et_add_manifest(path.c_str(), &error);
    check(status, error);
  }
  // Loads every declared plugin; returns the first failure's message or "".
  std::string load_all_plugins() {
    et_error* error = nullptr;
    if (et_load_all_plugins(&error) == ET_OK) return "";
    std::string message = et_error_message(error);
    et_error_destroy(error);
    return message;
  }

  std::vector<PluginInfo> plugins() const {
    std::vector<PluginInfo> out;
    size_t count = et_plugin_count();
    for (size_t i = 0; i < count; ++i) {
      et_plugin_record r{};
      r.struct_size = sizeof r;
      if (et_plugin_at(i, &r) != ET_OK) continue;
      out.push_back({r.name, r.version, r.description, r.library_path, r.manifest_path, r.state, r.source,
                     r.priority, r.abi_major, r.abi_minor, r.built_abi_major, r.built_abi_minor, r.load_count,
                     r.failure, r.warnings, r.cpu_level, r.cpu_level_reason});
    }
    return out;
  }

  std::vector<RegistryEntry> entries(int32_t kind) const {
    std::vector<RegistryEntry> out;
    size_t count = et_registry_count(kind);
    for (size_t i = 0; i < count; ++i) {
      et_registry_entry e{};
      e.struct_size = sizeof e;
      if (et_registry_at(kind, i, &e) != ET_OK) continue;
      out.push_back({e.kind, e.is_winner != 0, e.name, e.variant, e.plugin, e.plugin_path, e.reason, e.priority});
    }
    return out;
  }
  std::vector<RegistryEntry> operators() const { return entries(ET_ENTRY_OPERATOR); }
  std::vector<RegistryEntry> backends() const { return entries(ET_ENTRY_BACKEND); }
  std::vector<RegistryEntry> tracers() const { return entries(ET_ENTRY_TRACER); }

  std::vector<Rejection> rejections() const {
    std::vector<Rejection> out;
    size_t count = et_rejection_count();
    for (size_t i = 0; i < count; ++i) {
      et_rejection r{};
      r.struct_size = sizeof r;
      if (et_rejection_at(i, &r) == ET_OK) out.push_back({r.path, r.reason});
    }
    return out;
  }

  std::vector<std::string> manifests() const {
    std::vector<std::string> out;
    size_t count = et_manifest_count();
    for (size_t i = 0; i < count; ++i) out.emplace_back(et_manifest_at(i));
    return out;
  }

  et_kernel_descriptor find_kernel(const std::string& name) const {
    et_kernel_descriptor kernel{};
    kernel.struct_size = sizeof kernel;
    et_error* error = nullptr;
    int32_t status = et_find_kernel(name.c_str(), &kernel, &error);
    check(status, error);
    return kernel;
  }
  et_backend_descriptor find_backend(const std::string& id) const {
    et_backend_descriptor backend{};
    backend.struct_size = sizeof backend;
    et_error* error = nullptr;
    int32_t status = et_find_backend(id.c_str(), &backend, &error);
    check(status, error);
    return backend;
  }

  std::string report_json() const {
    std::unique_ptr<char, void (*)(char*)> text(et_report_json(), et_string_free);
    return text ? std::string(text.get()) : std::string();
  }

  size_t num_threads() const { return et_threadpool_size(); }
  void set_num_threads(size_t threads) {
    et_error* error = nullptr;
    int32_t status = et_threadpool_set_size(threads, &error);
    check(status, error);
  }

 private:
  Runtime() = default;
};

// A session of a tracer plugin ("etdump"): set it on one or more methods, run
// them, then fetch results. Copies share the session; methods keep it alive.
class TraceSession {
 public:
  explicit TraceSession(const std::string& tracer, size_t debug_buffer_size = 0, const std::string& label = "") {
    et_trace_options options{sizeof(et_trace_options), label.c_str(), debug_buffer_size};
    et_trace_session* handle = nullptr;
    et_error* error = nullptr;
    int32_t status = et_trace_session_create(tracer.c_str(), &options, &handle, &error);
    check(status, error);
    handle_.reset(handle, et_trace_session_destroy);
  }
  // "etdump", "debug_buffer", "chrome_trace", "operator_summary".
  std::string result(const std::string& what) const {
    void* data = nullptr;
    size_t size = 0;
    et_error* error = nullptr;
    int32_t status = et_trace_session_result(handle_.get(), what.c_str(), &data, &size, &error);
    check(status, error);
    std::string out(static_cast<const char*>(data), size);
    et_buffer_free(data);
    return out;
  }
  et_trace_session* handle() const { return handle_.get(); }

 private:
  std::shared_ptr<et_trace_session> handle_;
};

// A method of a loaded program. Move-only; keeps its program alive.
class Method {
 public:
  Method(Method&&) noexcept = default;
  Method& operator=(Method&&) noexcept = default;

  size_t num_inputs() const { return et_method_input_count(handle_.get()); }
  size_t num_outputs() const { return et_method_output_count(handle_.get()); }
  void set_input(size_t index, const et_value& value) {
    et_error* error = nullptr;
    int32_t status = et_method_set_input(handle_.get(), index, &value, &error);
    check(status, error);
  }
  void set_input(size_t index, et_tensor& tensor) {
    et_value value{};
    value.struct_size = sizeof value;
    value.tag = ET_VALUE_TENSOR;
    value.tensor = &tensor;
    set_input(index, value);
  }
  void execute() {
    et_error* error = nullptr;
    int32_t status = et_method_execute(handle_.get(), &error);
    check(status, error);
  }
  // Traces the next runs into `session` (nullptr: stop tracing).
  void set_trace_session(const TraceSession* session) {
    et_error* error = nullptr;
    int32_t status = et_method_set_trace_session(handle_.get(), session ? session->handle() : nullptr, &error);
    check(status, error);
  }
  // Valid until the next execute().
  const et_value& output(size_t index) const {
    const et_value* value = et_method_output(handle_.get(), index);
    if (value == nullptr) throw Error(ET_ERR_INVALID_ARGUMENT, "output " + std::to_string(index) + " out of range");
    return *value;
  }

 private:
  friend class Program;
  explicit Method(et_method* handle) : handle_(handle, et_method_destroy) {}
  std::unique_ptr<et_method, void (*)(et_method*)> handle_;
};

// A loaded, verified .pte. Copies share the program.
class Program {
 public:
  static Program load(const std::string& path) {
    et_program* handle = nullptr;
    et_error* error = nullptr;
    int32_t status = et_program_load_file(path.c_str(), &handle, &error);
    check(status, error);
    return Program(handle);
  }
  static Program load_bytes(const void* data, size_t size, const std::string& origin = "(program bytes)") {
    et_program* handle = nullptr;
    et_error* error = nullptr;
    int32_t status = et_program_load_bytes(data, size, origin.c_str(), &handle, &error);
    check(status, error);
    return Program(handle);
  }

  // Weights kept outside the program (.ptd); before loading the methods that use them.
  void add_data_file(const std::string& path) {
    et_error* error = nullptr;
    int32_t status = et_program_add_data_file(handle_.get(), path.c_str(), &error);
    check(status, error);
  }
  void add_data_bytes(const void* data, size_t size, const std::string& origin = "(data bytes)") {
    et_error* error = nullptr;
    int32_t status = et_program_add_data_bytes(handle_.get(), data, size, origin.c_str(), &error);
    check(status, error);
  }

  std::vector<std::string> method_names() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < et_program_method_count(handle_.get()); ++i)
      names.emplace_back(et_program_method_name(handle_.get(), i));
    return names;
  }
  et_method_info method_info(const std::string& method) const {
    et_method_info info{};
    info.struct_size = sizeof info;
    et_error* error = nullptr;
    int32_t status = et_program_method_info(handle_.get(), method.c_str(), &info, &error);
    check(status, error);
    return info;
  }
  et_value_info io_info(const std::string& method, bool output, size_t index) const {
    et_value_info info{};
    info.struct_size = sizeof info;
    et_error* error = nullptr;
    int32_t status = et_program_io_info(handle_.get(), method.c_str(), output ? 1 : 0, index, &info, &error);
    check(status, error);
    return info;
  }
  std::vector<std::string> operators(const std::string& method) const {
    std::vector<std::string> out;
    for (size_t i = 0; const char* name = et_program_operator_name(handle_.get(), method.c_str(), i); ++i)
      out.emplace_back(name);
    return out;
  }
  std::vector<std::string> delegates(const std::string& method) const {
    std::vector<std::string> out;
    for (size_t i = 0; const char* id = et_program_delegate_id(handle_.get(), method.c_str(), i); ++i)
      out.emplace_back(id);
    return out;
  }
  // Keys of the method's tensors whose data is in a .ptd file (add_data_file).
  std::vector<std::string> external_tensors(const std::string& method) const {
    std::vector<std::string> out;
    for (size_t i = 0; const char* key = et_program_external_tensor(handle_.get(), method.c_str(), i); ++i)
      out.emplace_back(key);
    return out;
  }
  Method load_method(const std::string& name) const {
    et_method* method = nullptr;
    et_error* error = nullptr;
    int32_t status = et_method_load(handle_.get(), name.c_str(), &method, &error);
    check(status, error);
    return Method(method);
  }

 private:
  explicit Program(et_program* handle) : handle_(handle, et_program_destroy) {}
  std::shared_ptr<et_program> handle_;
};

}  // namespace etrt
