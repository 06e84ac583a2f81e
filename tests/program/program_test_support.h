// What the program tests share: owning wrappers over the C API's programs,
// methods and inputs, and checks that a failure left the process usable.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "etrt/etrt.h"
#include "pte_exercise.h"

namespace program_test {

inline const std::string kModels = ETRT_MODELS_DIR;

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string model(const std::string& name, const std::string& file = "portable.pte") {
  return kModels + "/" + name + "/" + file;
}

// ----------------------------------------------------------------- RAII

struct Program {
  et_program* p = nullptr;
  int32_t status = ET_OK;
  int32_t code = ET_OK;  // the error's code
  std::string error;
  Program() = default;
  Program(Program&& other) noexcept
      : p(std::exchange(other.p, nullptr)), status(other.status), code(other.code), error(std::move(other.error)) {}
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() { et_program_destroy(p); }
  static Program file(const std::string& path) {
    Program r;
    et_error* e = nullptr;
    r.status = et_program_load_file(path.c_str(), &r.p, &e);
    if (e != nullptr) r.code = et_error_code(e);
    r.error = etrt_pte::take_message(e);
    return r;
  }
  static Program bytes(const uint8_t* data, size_t size, const char* origin) {
    Program r;
    et_error* e = nullptr;
    r.status = et_program_load_bytes(data, size, origin, &r.p, &e);
    if (e != nullptr) r.code = et_error_code(e);
    r.error = etrt_pte::take_message(e);
    return r;
  }
};

struct Method {
  et_method* m = nullptr;
  int32_t status = ET_OK;
  std::string error;
  Method(et_program* program, const char* name) {
    et_error* e = nullptr;
    status = et_method_load(program, name, &m, &e);
    error = etrt_pte::take_message(e);
  }
  ~Method() { et_method_destroy(m); }
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;
};

// A caller-owned input tensor.
struct Input {
  std::vector<uint8_t> data;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  std::vector<uint8_t> order;
  et_tensor tensor{};
  et_value value{};
  Input(int32_t dtype, std::vector<int64_t> shape, size_t element_size) : sizes(std::move(shape)) {
    size_t numel = 1;
    for (int64_t s : sizes) numel *= static_cast<size_t>(std::max<int64_t>(s, 0));
    data.assign(std::max<size_t>(numel * element_size, 1), 0);
    for (size_t i = 0; i < sizes.size(); ++i) order.push_back(static_cast<uint8_t>(i));
    tensor.struct_size = sizeof tensor;
    tensor.dtype = dtype;
    tensor.rank = static_cast<int32_t>(sizes.size());
    tensor.sizes = sizes.data();
    tensor.dim_order = order.data();
    tensor.strides = nullptr;
    tensor.data = data.data();
    tensor.nbytes = numel * element_size;
    tensor.capacity_bytes = data.size();
    value.struct_size = sizeof value;
    value.tag = ET_VALUE_TENSOR;
    value.tensor = &tensor;
  }
  static Input f32(std::vector<int64_t> shape) { return Input(ET_DTYPE_FLOAT32, std::move(shape), 4); }
  float* floats() { return reinterpret_cast<float*>(data.data()); }
};

inline std::string set_input(et_method* method, size_t index, const et_value* value, int32_t* code = nullptr) {
  et_error* e = nullptr;
  int32_t status = et_method_set_input(method, index, value, &e);
  if (code != nullptr) *code = e ? et_error_code(e) : status;
  return status == ET_OK ? "" : etrt_pte::take_message(e);
}

inline std::string execute(et_method* method, int32_t* code = nullptr) {
  et_error* e = nullptr;
  int32_t status = et_method_execute(method, &e);
  if (code != nullptr) *code = e ? et_error_code(e) : status;
  return status == ET_OK ? "" : etrt_pte::take_message(e);
}

// Every operator of every method of `program` that no plugin provides.
inline std::vector<std::string> missing_kernels(const et_program* program) {
  std::vector<std::string> missing;
  for (size_t m = 0; m < et_program_method_count(program); ++m) {
    const char* method = et_program_method_name(program, m);
    for (size_t i = 0; const char* op = et_program_operator_name(program, method, i); ++i) {
      if (et_operator_is_builtin(op)) continue;
      et_kernel_descriptor kernel{};
      kernel.struct_size = sizeof kernel;
      et_error* e = nullptr;
      if (et_find_kernel(op, &kernel, &e) != ET_OK) missing.push_back(op);
      et_error_destroy(e);
    }
  }
  return missing;
}

// The process still loads and runs a good program.
inline void expect_process_usable() {
  Program good = Program::file(model("op_add"));
  ASSERT_EQ(good.status, ET_OK) << good.error;
  etrt_pte::Outcome outcome = etrt_pte::exercise(good.p);
  EXPECT_EQ(outcome.stage, "") << outcome.message;
  EXPECT_EQ(outcome.executions, 3u);
}

}  // namespace program_test
