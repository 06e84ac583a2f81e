// Runs every method of a loaded program once (or more) on zero-filled inputs of
// the declared shapes, through the C API only. Shared by the program error
// tests, the pte_probe helper and the loader fuzz target: whatever a corrupt
// program does, these calls must return (an error is fine), never crash.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "etrt/etrt.h"

namespace etrt_pte {

// Takes ownership of an error and returns its message ("" for no error).
inline std::string take_message(et_error* error) {
  if (error == nullptr) return "";
  std::string message = et_error_message(error) ? et_error_message(error) : "(null message)";
  et_error_destroy(error);
  return message.empty() ? "(empty message)" : message;
}

// Backing storage of the inputs given to one method; must outlive execute
// (inputs the program does not plan are aliased, not copied).
struct InputStorage {
  struct Tensor {
    std::vector<uint8_t> data;
    std::array<int64_t, ET_MAX_RANK> sizes{};
    std::array<uint8_t, ET_MAX_RANK> dim_order{};
    et_tensor tensor{};
    et_value value{};
  };
  std::vector<Tensor> tensors;
};

struct Options {
  size_t max_input_bytes = size_t{64} << 20;  // inputs larger than this are left unset
  int64_t scalar_inputs = 0;                  // value given to Int/Bool inputs
};

// Sets every input of `method` (a method of `program` called `name`): tensors
// zero-filled at their upper-bound shape, scalars to options.scalar_inputs.
// Returns the first set_input error ("" when all were accepted).
inline std::string set_zero_inputs(const et_program* program, const char* name, et_method* method,
                                   InputStorage* storage, const Options& options = {}) {
  std::string first_error;
  size_t count = et_method_input_count(method);
  storage->tensors.clear();
  storage->tensors.resize(count);
  for (size_t i = 0; i < count; ++i) {
    et_value_info info{};
    info.struct_size = sizeof info;
    et_error* error = nullptr;
    if (et_program_io_info(program, name, 0, i, &info, &error) != ET_OK) {
      std::string message = take_message(error);
      if (first_error.empty()) first_error = message;
      continue;
    }
    InputStorage::Tensor& slot = storage->tensors[i];
    et_value& value = slot.value;
    value.struct_size = sizeof value;
    value.tag = info.tag;
    if (info.tag == ET_VALUE_TENSOR) {
      if (info.rank < 0 || info.rank > ET_MAX_RANK || info.nbytes > options.max_input_bytes) continue;
      slot.data.assign(info.nbytes == 0 ? 1 : info.nbytes, 0);
      for (int32_t d = 0; d < info.rank; ++d) {
        slot.sizes[d] = info.sizes[d];
        slot.dim_order[d] = info.dim_order[d];
      }
      et_tensor& t = slot.tensor;
      t.struct_size = sizeof t;
      t.dtype = info.dtype;
      t.rank = info.rank;
      t.sizes = slot.sizes.data();
      t.dim_order = slot.dim_order.data();
      t.strides = nullptr;  // dense in its dim order
      t.data = slot.data.data();
      t.nbytes = info.nbytes;
      t.capacity_bytes = slot.data.size();
      t.dynamism = info.dynamism;
      value.tensor = &t;
    } else {
      value.as_int = options.scalar_inputs;
      value.as_double = static_cast<double>(options.scalar_inputs);
    }
    error = nullptr;
    if (et_method_set_input(method, i, &value, &error) != ET_OK) {
      std::string message = take_message(error);
      if (first_error.empty()) first_error = message;
    }
  }
  return first_error;
}

// What happened to one program: the first error and where it arose.
struct Outcome {
  std::string stage;    // "" (everything succeeded), "method", "input" or "execute"
  std::string message;
  size_t methods_loaded = 0;
  size_t executions = 0;  // successful ones
};

// Loads every method and runs it `rounds` times on zero inputs.
inline Outcome exercise(et_program* program, int rounds = 1, const Options& options = {}) {
  Outcome outcome;
  auto note = [&](const char* stage, std::string message) {
    if (outcome.stage.empty()) {
      outcome.stage = stage;
      outcome.message = std::move(message);
    }
  };
  size_t methods = et_program_method_count(program);
  for (size_t m = 0; m < methods; ++m) {
    const char* name = et_program_method_name(program, m);
    if (name == nullptr) continue;
    et_method* method = nullptr;
    et_error* error = nullptr;
    if (et_method_load(program, name, &method, &error) != ET_OK) {
      note("method", take_message(error));
      continue;
    }
    ++outcome.methods_loaded;
    InputStorage storage;
    for (int round = 0; round < rounds; ++round) {
      std::string input_error = set_zero_inputs(program, name, method, &storage, options);
      if (!input_error.empty()) note("input", input_error);
      error = nullptr;
      if (et_method_execute(method, &error) != ET_OK) {
        note("execute", take_message(error));
      } else {
        ++outcome.executions;
        // Read the outputs back as a host would.
        for (size_t o = 0; o < et_method_output_count(method); ++o) {
          const et_value* out = et_method_output(method, o);
          if (out != nullptr && out->tag == ET_VALUE_TENSOR && out->tensor != nullptr && out->tensor->data != nullptr &&
              out->tensor->nbytes > 0) {
            volatile uint8_t sink = static_cast<const uint8_t*>(out->tensor->data)[out->tensor->nbytes - 1];
            (void)sink;
          }
        }
      }
    }
    et_method_destroy(method);
  }
  return outcome;
}

}  // namespace etrt_pte
