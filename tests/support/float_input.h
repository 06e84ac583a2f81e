// float32 tensors for feeding methods through the public C++ API: over caller-owned
// data, or a method's input built from the shape the program declares. No test
// framework here: tools built beside the tests (tests/etdump/traced_host.cpp) use it too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"

namespace etrt_test {

// A float32 tensor over `data` of shape `sizes` (both borrowed: they must outlive it), as a method input.
inline et_tensor float32_tensor(const std::vector<int64_t>& sizes, std::vector<float>& data) {
  et_tensor t{};
  t.struct_size = sizeof t;
  t.dtype = ET_DTYPE_FLOAT32;
  t.rank = static_cast<int32_t>(sizes.size());
  t.sizes = sizes.data();
  t.data = data.data();
  t.nbytes = t.capacity_bytes = data.size() * sizeof(float);
  return t;
}

// The method's input `index` as a contiguous float32 tensor of the declared shape; it owns its storage
// (`data`, zeros until the caller fills them), so `tensor` stays valid as long as this object.
struct FloatInput {
  std::vector<float> data;
  std::vector<int64_t> sizes, strides;
  et_tensor tensor{};

  FloatInput(const etrt::Program& program, const std::string& method, size_t index = 0) {
    et_value_info info = program.io_info(method, false, index);
    if (info.dtype != ET_DTYPE_FLOAT32)
      throw etrt::Error(ET_ERR_INVALID_ARGUMENT, method + "'s input " + std::to_string(index) + " is not float32");
    sizes.assign(info.sizes, info.sizes + info.rank);
    strides.assign(sizes.size(), 1);
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
    data.resize(info.nbytes / sizeof(float));
    tensor = float32_tensor(sizes, data);
    tensor.strides = strides.data();
  }
  FloatInput(const FloatInput&) = delete;  // `tensor` points into this object's own vectors
  FloatInput& operator=(const FloatInput&) = delete;
};

}  // namespace etrt_test
