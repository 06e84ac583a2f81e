// Running a reference program through etrt from C++: deterministic inputs,
// outputs copied out, comparison within a tolerance.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "etrt/private_library.hpp"

namespace xnnpack_test {

// Why the decoy tests cannot run in this process, or "": a sanitizer runtime refuses RTLD_DEEPBIND, so the
// plugin opens its XNNPACK without it and the decoy then takes XNNPACK's own internal calls (xnn_create_*,
// xnn_delete_runtime through its PLT) -- the very interposition these tests show DEEPBIND prevents.
inline std::string decoy_unsupported() {
  return etrt::plugin::deep_bind_allowed() ? "" : "RTLD_DEEPBIND is unavailable (a sanitizer runtime is loaded)";
}

inline std::string model_path(const std::string& model, const std::string& file) {
  return std::string(ETRT_MODELS_DIR) + "/" + model + "/" + file;
}

struct HostTensor {
  std::vector<int64_t> sizes, strides;
  std::vector<uint8_t> order;
  std::vector<float> data;
  et_tensor tensor{};

  explicit HostTensor(std::vector<int64_t> shape, float phase) : sizes(std::move(shape)) {
    size_t count = 1;
    for (int64_t s : sizes) count *= static_cast<size_t>(s);
    strides.assign(sizes.size(), 1);
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
    for (size_t d = 0; d < sizes.size(); ++d) order.push_back(static_cast<uint8_t>(d));
    data.resize(count);
    for (size_t i = 0; i < count; ++i) data[i] = std::sin(0.37f * static_cast<float>(i) + phase);
    tensor.struct_size = sizeof tensor;
    tensor.dtype = ET_DTYPE_FLOAT32;
    tensor.rank = static_cast<int32_t>(sizes.size());
    tensor.sizes = sizes.data();
    tensor.strides = strides.data();
    tensor.dim_order = order.data();
    tensor.data = data.data();
    tensor.nbytes = tensor.capacity_bytes = count * sizeof(float);
  }
};

struct Output {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// Runs `method` of a program on float inputs of the given shapes (or the
// program's declared input shapes when `shapes` is empty).
inline std::vector<Output> run(const etrt::Program& program, const std::string& method,
                               std::vector<std::vector<int64_t>> shapes = {}) {
  etrt::Method m = program.load_method(method);
  if (shapes.empty())
    for (size_t i = 0; i < m.num_inputs(); ++i) {
      et_value_info info = program.io_info(method, false, i);
      shapes.emplace_back(info.sizes, info.sizes + info.rank);
    }
  std::vector<HostTensor> inputs;
  inputs.reserve(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) inputs.emplace_back(shapes[i], 0.5f * static_cast<float>(i));
  for (size_t i = 0; i < inputs.size(); ++i) m.set_input(i, inputs[i].tensor);
  m.execute();
  std::vector<Output> outputs;
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const et_value& v = m.output(i);
    Output out;
    out.shape.assign(v.tensor->sizes, v.tensor->sizes + v.tensor->rank);
    const float* p = static_cast<const float*>(v.tensor->data);
    out.data.assign(p, p + v.tensor->nbytes / sizeof(float));
    outputs.push_back(std::move(out));
  }
  return outputs;
}

// "" when close, else what differs.
inline std::string compare(const std::vector<Output>& a, const std::vector<Output>& b, double rtol = 1e-4,
                           double atol = 1e-5) {
  if (a.size() != b.size()) return "output counts differ";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape != b[i].shape) return "output " + std::to_string(i) + ": shapes differ";
    for (size_t k = 0; k < a[i].data.size(); ++k) {
      double x = a[i].data[k], y = b[i].data[k];
      if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y)))
        return "output " + std::to_string(i) + " element " + std::to_string(k) + ": " + std::to_string(x) + " vs " +
               std::to_string(y);
    }
  }
  return "";
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace xnnpack_test
