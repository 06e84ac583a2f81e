// etrt::extension::Module: ExecuTorch's C++ Module over libetrt's C API.
// A host written for executorch::extension::Module compiles against it with
// the includes and the namespace changed (docs/MODULE.md):
//   #include <executorch/extension/module/module.h> -> #include <etrt/module/module.h>
//   #include <executorch/extension/tensor/tensor.h> -> #include <etrt/module/tensor.h>
//   executorch::extension / runtime / aten          -> etrt::extension / runtime / aten
//
// The program and its methods load lazily, on first need; loaded methods are
// cached until unload_method. Errors come back as Error values, never as
// exceptions; last_error_message() says what failed in libetrt's words.
// Not thread-safe: one thread at a time per Module (as ExecuTorch's).
#pragma once

#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "etrt/etrt.hpp"
#include "etrt/module/etdump.h"
#include "etrt/module/evalue.h"
#include "etrt/module/method_meta.h"
#include "etrt/module/result.h"
#include "etrt/module/tensor.h"

namespace etrt::extension {

// ExecuTorch's Module takes one for planned memory of its own; etrt plans memory itself.
class HierarchicalAllocator;

class Module {
 public:
  // ExecuTorch's load modes. etrt reads and verifies the whole program (and
  // each .ptd) into memory in every mode, so they behave the same.
  enum class LoadMode { File, Mmap, MmapUseMlock, MmapUseMlockIgnoreErrors, MmapUseMadvise };

  explicit Module(const std::string& file_path, LoadMode load_mode = LoadMode::File,
                  std::unique_ptr<EventTracer> event_tracer = nullptr)
      : file_path_(file_path), load_mode_(load_mode), event_tracer_(std::move(event_tracer)) {}
  // With external weights (a .ptd).
  Module(const std::string& file_path, const std::string& data_map_path, LoadMode load_mode = LoadMode::File,
         std::unique_ptr<EventTracer> event_tracer = nullptr)
      : Module(file_path, std::vector<std::string>{data_map_path}, load_mode, std::move(event_tracer)) {}
  Module(const std::string& file_path, std::vector<std::string> data_files, LoadMode load_mode = LoadMode::File,
         std::unique_ptr<EventTracer> event_tracer = nullptr)
      : file_path_(file_path), data_files_(std::move(data_files)), load_mode_(load_mode),
        event_tracer_(std::move(event_tracer)) {}
  // Over a program already loaded (shared with its other users).
  explicit Module(std::shared_ptr<::etrt::Program> program, std::unique_ptr<EventTracer> event_tracer = nullptr)
      : program_(std::move(program)), event_tracer_(std::move(event_tracer)) {}

  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) = delete;
  Module& operator=(Module&&) = delete;
  virtual ~Module() = default;

  // Reads and verifies the program and attaches its data files; does nothing
  // once it succeeded.
  Error load() {
    if (program_) return Error::Ok;
    return guarded([&] {
      auto program = std::make_shared<::etrt::Program>(::etrt::Program::load(file_path_));
      for (const std::string& data_file : data_files_) program->add_data_file(data_file);
      program_ = std::move(program);
    });
  }
  bool is_loaded() const { return program_ != nullptr; }
  std::shared_ptr<::etrt::Program> program() const { return program_; }
  LoadMode load_mode() const { return load_mode_; }

  Result<size_t> num_methods() {
    if (Error error = load(); error != Error::Ok) return failed<size_t>(error);
    return program_->method_names().size();
  }
  Result<std::unordered_set<std::string>> method_names() {
    if (Error error = load(); error != Error::Ok) return failed<std::unordered_set<std::string>>(error);
    std::vector<std::string> names = program_->method_names();
    return std::unordered_set<std::string>(names.begin(), names.end());
  }

  // Loads the method (resolving its operators and delegates, loading the
  // plugins that provide them) and caches it. `planned_memory` must be null:
  // etrt plans a method's memory itself. `event_tracer` traces this method
  // instead of the Module's.
  Error load_method(const std::string& method_name, HierarchicalAllocator* planned_memory = nullptr,
                    EventTracer* event_tracer = nullptr) {
    if (planned_memory != nullptr)
      return fail(Error::NotSupported, "etrt plans a method's memory itself: pass no HierarchicalAllocator");
    if (is_method_loaded(method_name)) return Error::Ok;
    if (Error error = load(); error != Error::Ok) return error;
    return guarded([&] {
      auto holder = std::make_unique<MethodHolder>();
      holder->method = std::make_unique<::etrt::Method>(program_->load_method(method_name));
      EventTracer* tracer = event_tracer ? event_tracer : event_tracer_.get();
      if (tracer != nullptr) holder->method->set_trace_session(&tracer->session());
      holder->inputs.resize(holder->method->num_inputs());
      holder->preset_outputs.resize(holder->method->num_outputs());
      methods_[method_name] = std::move(holder);
    });
  }
  Error load_forward(HierarchicalAllocator* planned_memory = nullptr, EventTracer* event_tracer = nullptr) {
    return load_method("forward", planned_memory, event_tracer);
  }
  bool unload_method(const std::string& method_name) { return methods_.erase(method_name) > 0; }
  bool unload_forward() { return unload_method("forward"); }
  bool is_method_loaded(const std::string& method_name) const { return methods_.count(method_name) > 0; }

  // From the program alone: loads the program, not the method.
  Result<MethodMeta> method_meta(const std::string& method_name) {
    if (Error error = load(); error != Error::Ok) return failed<MethodMeta>(error);
    std::optional<MethodMeta> meta;
    if (Error error = guarded([&] { meta.emplace(*program_, method_name); }); error != Error::Ok)
      return failed<MethodMeta>(error);
    return std::move(*meta);
  }

  // Sets the given inputs (positionally; inputs beyond them keep what
  // set_input gave), runs the method and returns its outputs. Output tensors
  // are valid until the method runs again or is unloaded, as ExecuTorch's.
  Result<std::vector<EValue>> execute(const std::string& method_name, const std::vector<EValue>& input_values) {
    if (Error error = load_method(method_name); error != Error::Ok) return failed<std::vector<EValue>>(error);
    MethodHolder& holder = *methods_.at(method_name);
    for (size_t index = 0; index < input_values.size(); ++index)
      if (Error error = set_input(method_name, input_values[index], index); error != Error::Ok)
        return failed<std::vector<EValue>>(error);
    std::vector<EValue> outputs;
    Error error = guarded([&] {
      holder.method->execute();
      copy_to_preset_outputs(method_name, holder);
      outputs = collect_outputs(method_name, holder);
    });
    if (error != Error::Ok) return failed<std::vector<EValue>>(error);
    return outputs;
  }
  Result<std::vector<EValue>> execute(const std::string& method_name, const EValue& input_value) {
    return execute(method_name, std::vector<EValue>{input_value});
  }
  Result<std::vector<EValue>> execute(const std::string& method_name) {
    return execute(method_name, std::vector<EValue>{});
  }
  // The first output.
  Result<EValue> get(const std::string& method_name, const std::vector<EValue>& input_values) {
    auto outputs = execute(method_name, input_values);
    if (!outputs.ok()) return Result<EValue>(outputs.error(), outputs.message());
    if (outputs->empty()) return failed<EValue>(fail(Error::InvalidArgument, method_name + " has no outputs"));
    return (*outputs)[0];
  }
  Result<EValue> get(const std::string& method_name, const EValue& input_value) {
    return get(method_name, std::vector<EValue>{input_value});
  }
  Result<EValue> get(const std::string& method_name) { return get(method_name, std::vector<EValue>{}); }
  Result<std::vector<EValue>> forward(const std::vector<EValue>& input_values) {
    return execute("forward", input_values);
  }
  Result<std::vector<EValue>> forward(const EValue& input_value) { return forward(std::vector<EValue>{input_value}); }
  Result<std::vector<EValue>> forward() { return forward(std::vector<EValue>{}); }

  // Sets one input for the next runs. A tensor is checked against the
  // program's dtype and shape; the Module keeps the value alive. A None value
  // forgets the kept value (the method keeps what it last received).
  Error set_input(const std::string& method_name, const EValue& input_value, size_t input_index) {
    if (Error error = load_method(method_name); error != Error::Ok) return error;
    MethodHolder& holder = *methods_.at(method_name);
    if (input_index >= holder.inputs.size())
      return fail(Error::InvalidArgument, method_name + " has " + std::to_string(holder.inputs.size()) +
                                              " inputs; there is no input " + std::to_string(input_index));
    InputSlot& slot = holder.inputs[input_index];
    if (input_value.isNone()) {
      slot = InputSlot{};
      return Error::Ok;
    }
    return guarded([&] {
      InputSlot next{input_value, {}};
      et_value value{};
      value.struct_size = sizeof value;
      switch (input_value.tag) {
        case Tag::Tensor:
          next.tensor = input_value.toTensor().to_et_tensor();
          value.tag = ET_VALUE_TENSOR;
          break;
        case Tag::Int: value.tag = ET_VALUE_INT; value.as_int = input_value.toInt(); break;
        case Tag::Bool: value.tag = ET_VALUE_BOOL; value.as_int = input_value.toBool() ? 1 : 0; break;
        case Tag::Double: value.tag = ET_VALUE_DOUBLE; value.as_double = input_value.toDouble(); break;
        case Tag::String: value.tag = ET_VALUE_STRING; break;
        default:
          throw ::etrt::Error(ET_ERR_NOT_SUPPORTED, std::string("input ") + std::to_string(input_index) + " of " +
                                                        method_name + ": a " + tag_to_string(input_value.tag) +
                                                        " input is not supported by etrt's Module");
      }
      slot = std::move(next);
      if (value.tag == ET_VALUE_TENSOR) value.tensor = &slot.tensor;
      if (value.tag == ET_VALUE_STRING) {
        value.items = slot.value.toString().data();
        value.count = slot.value.toString().size();
      }
      holder.method->set_input(input_index, value);
    });
  }
  Error set_input(const EValue& input_value, size_t input_index) {
    return set_input("forward", input_value, input_index);
  }
  Error set_inputs(const std::string& method_name, const std::vector<EValue>& input_values) {
    if (Error error = load_method(method_name); error != Error::Ok) return error;
    size_t expected = methods_.at(method_name)->inputs.size();
    if (input_values.size() != expected)
      return fail(Error::InvalidArgument, method_name + " takes " + std::to_string(expected) + " inputs, not " +
                                              std::to_string(input_values.size()));
    for (size_t index = 0; index < input_values.size(); ++index)
      if (Error error = set_input(method_name, input_values[index], index); error != Error::Ok) return error;
    return Error::Ok;
  }
  Error set_inputs(const std::vector<EValue>& input_values) { return set_inputs("forward", input_values); }

  // A tensor the output is written to after each run (its dtype must match and
  // its memory hold the output). etrt copies the output into it; the outputs
  // execute() returns then point at it. A None value stops it.
  Error set_output(const std::string& method_name, EValue output_value, size_t output_index = 0) {
    if (Error error = load_method(method_name); error != Error::Ok) return error;
    MethodHolder& holder = *methods_.at(method_name);
    if (output_index >= holder.preset_outputs.size())
      return fail(Error::InvalidArgument, method_name + " has " + std::to_string(holder.preset_outputs.size()) +
                                              " outputs; there is no output " + std::to_string(output_index));
    if (output_value.isNone()) {
      holder.preset_outputs[output_index].reset();
      return Error::Ok;
    }
    if (!output_value.isTensor())
      return fail(Error::InvalidArgument, "output " + std::to_string(output_index) + " of " + method_name +
                                              ": set_output takes a tensor, not a " + tag_to_string(output_value.tag));
    return guarded([&] {
      et_value_info info = program_->io_info(method_name, true, output_index);
      const Tensor& tensor = output_value.toTensor();
      if (info.tag != ET_VALUE_TENSOR)
        throw ::etrt::Error(ET_ERR_INVALID_ARGUMENT, "output " + std::to_string(output_index) + " of " + method_name +
                                                         " is not a tensor");
      if (static_cast<int32_t>(tensor.scalar_type()) != info.dtype)
        throw ::etrt::Error(ET_ERR_INVALID_ARGUMENT,
                            "output " + std::to_string(output_index) + " of " + method_name + " is " +
                                toString(static_cast<ScalarType>(info.dtype)) + "; the tensor given is " +
                                toString(tensor.scalar_type()));
      if (tensor.nbytes() < info.nbytes)
        throw ::etrt::Error(ET_ERR_INVALID_ARGUMENT, "output " + std::to_string(output_index) + " of " + method_name +
                                                         " needs " + std::to_string(info.nbytes) +
                                                         " bytes; the tensor given has " +
                                                         std::to_string(tensor.nbytes()));
      holder.preset_outputs[output_index] = tensor;
    });
  }
  Error set_output(EValue output_value, size_t output_index = 0) {
    return set_output("forward", std::move(output_value), output_index);
  }
  Error set_outputs(const std::string& method_name, const std::vector<EValue>& output_values) {
    for (size_t index = 0; index < output_values.size(); ++index)
      if (Error error = set_output(method_name, output_values[index], index); error != Error::Ok) return error;
    return Error::Ok;
  }
  Error set_outputs(const std::vector<EValue>& output_values) { return set_outputs("forward", output_values); }

  // The outputs of the method's last run.
  Result<std::vector<EValue>> get_outputs(const std::string& method_name) {
    if (Error error = load_method(method_name); error != Error::Ok) return failed<std::vector<EValue>>(error);
    std::vector<EValue> outputs;
    if (Error error = guarded([&] { outputs = collect_outputs(method_name, *methods_.at(method_name)); });
        error != Error::Ok)
      return failed<std::vector<EValue>>(error);
    return outputs;
  }
  Result<std::vector<EValue>> get_outputs() { return get_outputs("forward"); }
  Result<EValue> get_output(const std::string& method_name, size_t output_index = 0) {
    auto outputs = get_outputs(method_name);
    if (!outputs.ok()) return Result<EValue>(outputs.error(), outputs.message());
    if (output_index >= outputs->size())
      return failed<EValue>(fail(Error::InvalidArgument, method_name + " has " + std::to_string(outputs->size()) +
                                                             " outputs; there is no output " +
                                                             std::to_string(output_index)));
    return (*outputs)[output_index];
  }
  Result<EValue> get_output(size_t output_index = 0) { return get_output("forward", output_index); }

  EventTracer* event_tracer() const { return event_tracer_.get(); }

  // What the last failed call failed on ("" after a success), in libetrt's words.
  const std::string& last_error_message() const { return last_error_; }

 protected:
  // The loaded method (loading it on first need), or nullptr with last_error_message() set: for
  // subclasses that drive the method themselves (BundledModule).
  ::etrt::Method* loaded_method(const std::string& method_name) {
    if (load_method(method_name) != Error::Ok) return nullptr;
    return methods_.at(method_name)->method.get();
  }
  Error fail(Error error, std::string message) {
    last_error_ = std::move(message);
    return error;
  }

 private:
  struct InputSlot {
    EValue value;       // keeps the tensor's shape and data alive
    et_tensor tensor{}; // what the method was given (it may alias an unplanned input's data)
  };
  struct MethodHolder {
    std::unique_ptr<::etrt::Method> method;
    std::vector<InputSlot> inputs;
    std::vector<std::optional<Tensor>> preset_outputs;
  };

  // Runs `body`, turning libetrt's exceptions into an Error and a message.
  template <typename Body>
  Error guarded(Body&& body) {
    try {
      body();
      last_error_.clear();
      return Error::Ok;
    } catch (const ::etrt::Error& error) {
      return fail(error_from_status(error.code()), error.what());
    } catch (const std::bad_alloc&) {
      return fail(Error::MemoryAllocationFailed, "out of memory");
    }
  }
  template <typename T>
  Result<T> failed(Error error) const {
    return Result<T>(error, last_error_);
  }

  void copy_to_preset_outputs(const std::string& method_name, MethodHolder& holder) {
    for (size_t i = 0; i < holder.preset_outputs.size(); ++i) {
      if (!holder.preset_outputs[i]) continue;
      const et_tensor* produced = holder.method->output(i).tensor;
      Tensor& target = *holder.preset_outputs[i];
      if (produced->nbytes > target.nbytes())
        throw ::etrt::Error(ET_ERR_INVALID_ARGUMENT, "output " + std::to_string(i) + " of " + method_name + " has " +
                                                         std::to_string(produced->nbytes) +
                                                         " bytes; the tensor set_output gave holds " +
                                                         std::to_string(target.nbytes()));
      if (produced->nbytes > 0) std::memmove(target.mutable_data_ptr(), produced->data, produced->nbytes);
    }
  }

  std::vector<EValue> collect_outputs(const std::string& method_name, MethodHolder& holder) {
    std::vector<EValue> outputs;
    for (size_t i = 0; i < holder.method->num_outputs(); ++i) {
      const et_value& value = holder.method->output(i);
      switch (value.tag) {
        case ET_VALUE_TENSOR: {
          const et_tensor& t = *value.tensor;
          void* data = holder.preset_outputs[i] ? holder.preset_outputs[i]->mutable_data_ptr() : t.data;
          std::vector<int32_t> sizes(t.sizes, t.sizes + t.rank);
          std::vector<uint8_t> dim_order(t.dim_order, t.dim_order + t.rank);
          outputs.emplace_back(Tensor(std::make_shared<TensorImpl>(static_cast<ScalarType>(t.dtype), std::move(sizes),
                                                                   data, std::move(dim_order))));
          break;
        }
        case ET_VALUE_INT: outputs.emplace_back(value.as_int); break;
        case ET_VALUE_BOOL: outputs.emplace_back(value.as_int != 0); break;
        case ET_VALUE_DOUBLE: outputs.emplace_back(value.as_double); break;
        case ET_VALUE_STRING:
          outputs.emplace_back(std::string(static_cast<const char*>(value.items), value.count));
          break;
        case ET_VALUE_NULL: outputs.emplace_back(); break;
        default:
          throw ::etrt::Error(ET_ERR_NOT_SUPPORTED,
                              "output " + std::to_string(i) + " of " + method_name + " is a " +
                                  tag_to_string(tag_from_value_tag(value.tag)) +
                                  ", which etrt's Module does not return; use etrt::Method for list outputs");
      }
    }
    return outputs;
  }

  std::string file_path_;
  std::vector<std::string> data_files_;
  LoadMode load_mode_ = LoadMode::File;
  std::shared_ptr<::etrt::Program> program_;
  std::unique_ptr<EventTracer> event_tracer_;
  std::unordered_map<std::string, std::unique_ptr<MethodHolder>> methods_;
  std::string last_error_;
};

}  // namespace etrt::extension

// ExecuTorch spreads these names over executorch::extension, ::runtime,
// ::aten and ::etdump; etrt keeps them in one namespace, reachable by each name.
namespace etrt {
namespace runtime = extension;
namespace aten = extension;
namespace etdump = extension;
}  // namespace etrt
