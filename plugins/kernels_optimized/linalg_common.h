// Shared checks of the linear algebra family (matmul, convolution, pooling,
// normalisation): every check produces an error naming the operator and what
// is wrong, with the shapes involved. Arguments arrive unboxed (etrt/kernel.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels.h"

namespace etrt::kernels::linalg {

using etrt::plugin::dtype_name;
using etrt::plugin::numel;
using etrt::plugin::shape_string;
using etrt::plugin::dim_order_string;
using etrt::plugin::Call;
using etrt::plugin::IntArrayRef;
using etrt::plugin::Scalar;
using etrt::plugin::Tensor;

inline et_error* fail(int32_t code, const char* op, const std::string& what) {
  return host.error(code, std::string(op) + ": " + what);
}
inline et_error* invalid(const char* op, const std::string& what) { return fail(ET_ERR_INVALID_ARGUMENT, op, what); }
inline et_error* unsupported(const char* op, const std::string& what) { return fail(ET_ERR_NOT_SUPPORTED, op, what); }

inline std::string shape_of(std::span<const int64_t> sizes) {
  return shape_string(sizes.data(), static_cast<int64_t>(sizes.size()));
}

// Strides, paddings and dilations of convolution and pooling windows. Far above
// any real model; keeps window arithmetic such as dilation * (kernel - 1) and
// input + 2 * padding inside int64 for whatever a corrupt program holds.
constexpr int64_t kMaxWindowParameter = int64_t{1} << 24;

inline et_error* expect_dtype(const char* op, const et_tensor& t, const char* name, int32_t dtype = ET_DTYPE_FLOAT32) {
  if (t.dtype == dtype) return nullptr;
  return unsupported(op, std::string(name) + " has dtype " + dtype_name(t.dtype) + ", which is not supported (" +
                             dtype_name(dtype) + " only)");
}

// Contiguous in the default (row-major) dim order; the kernels that index
// planes directly need it.
inline et_error* expect_row_major(const char* op, const et_tensor& t, const char* name) {
  if (etrt::plugin::is_contiguous(t)) return nullptr;
  for (int32_t i = 0; i < t.rank; ++i)
    if (t.dim_order != nullptr && t.dim_order[i] != i)
      return unsupported(op, std::string(name) + " has dim order " + dim_order_string(t) +
                                 ", only the default contiguous order is supported");
  return unsupported(op, std::string(name) + " " + shape_string(t) + " is not contiguous");
}

inline et_error* expect_data(const char* op, const et_tensor& t, const char* name) {
  if (t.data != nullptr || numel(t) == 0) return nullptr;
  return invalid(op, std::string(name) + " has no data");
}

// Gives `out` the shape `sizes`: static tensors must already have it; dynamic
// ones are resized by the host within their capacity.
inline et_error* resize(const char* op, et_tensor& out, std::span<const int64_t> sizes, const char* name = "out") {
  if (static_cast<size_t>(out.rank) != sizes.size())
    return invalid(op, std::string(name) + " has rank " + std::to_string(out.rank) + " " + shape_string(out) +
                           ", the result has shape " + shape_of(sizes));
  bool same = true;
  for (size_t i = 0; i < sizes.size(); ++i) same &= out.sizes[i] == sizes[i];
  if (same) return nullptr;
  if (out.dynamism == ET_SHAPE_STATIC)
    return invalid(op, std::string(name) + " has the static shape " + shape_string(out) + ", the result has shape " +
                           shape_of(sizes));
  return host.api()->tensor_resize(&out, sizes.data(), sizes.size());
}

}  // namespace etrt::kernels::linalg
