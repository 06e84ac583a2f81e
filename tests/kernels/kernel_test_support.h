// Calling kernels the way the executor does: arguments as the program lists
// them (schema arguments, then the return value), tensors owned by the test.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"

namespace etrt_test {

// A float32 (or other dtype, see `as`) contiguous tensor with random contents.
struct Tensor {
  std::vector<float> data;
  std::vector<int64_t> sizes, strides;
  std::vector<uint8_t> order;
  et_tensor t{};
  et_value v{};

  explicit Tensor(std::vector<int64_t> shape, size_t capacity = 0, int32_t dynamism = ET_SHAPE_STATIC)
      : sizes(std::move(shape)), strides(sizes.size()), order(sizes.size()) {
    size_t n = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = static_cast<int64_t>(n);
      n *= static_cast<size_t>(sizes[i]);
      order[i] = static_cast<uint8_t>(i);
    }
    data.resize(std::max(n, capacity));
    std::mt19937 rng(static_cast<unsigned>(n * 7 + sizes.size()));
    std::uniform_real_distribution<float> dist(-2, 2);
    for (float& x : data) x = dist(rng);
    t.struct_size = sizeof t;
    t.dtype = ET_DTYPE_FLOAT32;
    t.rank = static_cast<int32_t>(sizes.size());
    t.sizes = sizes.data();
    t.strides = strides.data();
    t.dim_order = order.data();
    t.data = data.data();
    t.nbytes = n * sizeof(float);
    t.capacity_bytes = data.size() * sizeof(float);
    t.dynamism = dynamism;
    v.struct_size = sizeof v;
    v.tag = ET_VALUE_TENSOR;
    v.tensor = &t;
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  float at(const std::vector<int64_t>& index) const {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
    return data[static_cast<size_t>(offset)];
  }
};

inline et_value scalar(int64_t x) {
  et_value v{};
  v.struct_size = sizeof v;
  v.tag = ET_VALUE_INT;
  v.as_int = x;
  return v;
}

inline et_value scalar_double(double x) {
  et_value v{};
  v.struct_size = sizeof v;
  v.tag = ET_VALUE_DOUBLE;
  v.as_double = x;
  return v;
}

// Runs `op` with `args` plus the last argument again as the return value (the
// program convention for single-output out variants). Returns the error
// message, "" on success.
inline std::string run_kernel(const char* op, std::vector<et_value*> args, bool append_return = true) {
  et_kernel_descriptor kernel = etrt::Runtime::get().find_kernel(op);
  if (append_return && !args.empty()) args.push_back(args.back());
  et_error* error = kernel.fn(kernel.user_data, nullptr, args.data(), args.size());
  std::string message = error ? et_error_message(error) : "";
  et_error_destroy(error);
  return message;
}

// One instruction of `op` as a method runs it when the kernel prepares (ABI 1.4): prepared once with these
// arguments (plus the last again as the return value), then every call() goes to run_prepared, or to fn when the
// kernel declined; released at the end. The arguments stay the test's: change their data or shapes between calls.
class PreparedInstruction {
 public:
  PreparedInstruction(const char* op, std::vector<et_value*> args) : args_(std::move(args)) {
    kernel_ = etrt::Runtime::get().find_kernel(op);
    if (!args_.empty()) args_.push_back(args_.back());
    if (kernel_.prepare != nullptr) {
      et_error* error = kernel_.prepare(kernel_.user_data, args_.data(), args_.size(), &state_);
      prepare_error_ = error ? et_error_message(error) : "";
      et_error_destroy(error);
    }
  }
  ~PreparedInstruction() {
    if (state_ != nullptr) kernel_.release(kernel_.user_data, state_);
  }
  PreparedInstruction(const PreparedInstruction&) = delete;
  PreparedInstruction& operator=(const PreparedInstruction&) = delete;

  bool prepared() const { return state_ != nullptr; }
  const std::string& prepare_error() const { return prepare_error_; }
  // The error message of one call, "" on success.
  std::string call() {
    et_error* error = state_ != nullptr
                          ? kernel_.run_prepared(kernel_.user_data, state_, nullptr, args_.data(), args_.size())
                          : kernel_.fn(kernel_.user_data, nullptr, args_.data(), args_.size());
    std::string message = error ? et_error_message(error) : "";
    et_error_destroy(error);
    return message;
  }

 private:
  et_kernel_descriptor kernel_{};
  std::vector<et_value*> args_;
  void* state_ = nullptr;
  std::string prepare_error_;
};

}  // namespace etrt_test
