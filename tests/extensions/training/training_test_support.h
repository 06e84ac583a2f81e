// Tensors the training tests own, as et_value inputs, and the paths of the exported programs.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "etrt/etrt.h"

namespace etrt::training::test {

inline std::string program_path(const std::string& name) {
  const char* dir = std::getenv("ETRT_TRAINING_PROGRAMS");
  return std::string(dir ? dir : "training_programs") + "/" + name;
}

// A dense tensor holding its own data.
template <typename T>
struct OwnedTensor {
  std::vector<T> data;
  std::vector<int64_t> sizes, strides;
  std::vector<uint8_t> dim_order;
  et_tensor tensor{};

  OwnedTensor(std::vector<int64_t> shape, std::vector<T> values, int32_t dtype)
      : data(std::move(values)), sizes(std::move(shape)) {
    strides.assign(sizes.size(), 1);
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
    for (size_t d = 0; d < sizes.size(); ++d) dim_order.push_back(static_cast<uint8_t>(d));
    tensor.struct_size = sizeof tensor;
    tensor.dtype = dtype;
    tensor.rank = static_cast<int32_t>(sizes.size());
    tensor.sizes = sizes.data();
    tensor.strides = strides.data();
    tensor.dim_order = dim_order.data();
    tensor.data = data.data();
    tensor.nbytes = tensor.capacity_bytes = data.size() * sizeof(T);
  }
  OwnedTensor(const OwnedTensor&) = delete;

  et_value value() {
    et_value v{};
    v.struct_size = sizeof v;
    v.tag = ET_VALUE_TENSOR;
    v.tensor = &tensor;
    return v;
  }
};

inline float scalar_of(const et_value& value) { return *static_cast<const float*>(value.tensor->data); }

inline size_t element_count(const et_tensor& t) {
  size_t n = 1;
  for (int32_t d = 0; d < t.rank; ++d) n *= static_cast<size_t>(t.sizes[d]);
  return n;
}

inline std::vector<float> copy_of(const et_tensor& t) {
  const auto* p = static_cast<const float*>(t.data);
  return std::vector<float>(p, p + element_count(t));
}

}  // namespace etrt::training::test
