// Shared argument handling of the linear algebra family (matmul, convolution,
// pooling, normalisation): every check produces an error naming the operator
// and what is wrong, with the shapes involved.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels.h"

namespace etrt::kernels::linalg {

using etrt::plugin::dtype_name;
using etrt::plugin::numel;
using etrt::plugin::shape_string;

inline et_error* fail(int32_t code, const char* op, const std::string& what) {
  return host.error(code, std::string(op) + ": " + what);
}
inline et_error* invalid(const char* op, const std::string& what) { return fail(ET_ERR_INVALID_ARGUMENT, op, what); }
inline et_error* unsupported(const char* op, const std::string& what) { return fail(ET_ERR_NOT_SUPPORTED, op, what); }

inline std::string shape_of(std::span<const int64_t> sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

inline std::string dim_order_string(const et_tensor& t) {
  std::string s = "(";
  for (int32_t i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::to_string(t.dim_order ? t.dim_order[i] : i);
  return s + ")";
}

// Argument count plus non-null value pointers.
inline et_error* expect_count(const char* op, et_value* const* args, size_t nargs, size_t expected) {
  if (nargs != expected)
    return invalid(op, "expected " + std::to_string(expected) + " arguments, got " + std::to_string(nargs));
  for (size_t i = 0; i < nargs; ++i)
    if (args == nullptr || args[i] == nullptr) return invalid(op, "argument " + std::to_string(i) + " is null");
  return nullptr;
}

inline et_error* get_tensor(const char* op, const et_value* v, const char* name, et_tensor** out) {
  if (v->tag != ET_VALUE_TENSOR || v->tensor == nullptr) return invalid(op, std::string(name) + " must be a tensor");
  *out = v->tensor;
  return nullptr;
}

// Tensor? arguments: Null means absent (*out = nullptr).
inline et_error* get_optional_tensor(const char* op, const et_value* v, const char* name, et_tensor** out) {
  if (v->tag == ET_VALUE_NULL) {
    *out = nullptr;
    return nullptr;
  }
  if (v->tag != ET_VALUE_TENSOR || v->tensor == nullptr)
    return invalid(op, std::string(name) + " must be a tensor or None");
  *out = v->tensor;
  return nullptr;
}

inline et_error* get_scalar(const char* op, const et_value* v, const char* name, double* out) {
  if (v->tag == ET_VALUE_INT || v->tag == ET_VALUE_BOOL) *out = static_cast<double>(v->as_int);
  else if (v->tag == ET_VALUE_DOUBLE) *out = v->as_double;
  else return invalid(op, std::string(name) + " must be a scalar");
  return nullptr;
}

inline et_error* get_int(const char* op, const et_value* v, const char* name, int64_t* out) {
  if (v->tag != ET_VALUE_INT) return invalid(op, std::string(name) + " must be an int");
  *out = v->as_int;
  return nullptr;
}

inline et_error* get_bool(const char* op, const et_value* v, const char* name, bool* out) {
  if (v->tag != ET_VALUE_BOOL && v->tag != ET_VALUE_INT) return invalid(op, std::string(name) + " must be a bool");
  *out = v->as_int != 0;
  return nullptr;
}

inline et_error* get_int_list(const char* op, const et_value* v, const char* name, std::span<const int64_t>* out) {
  if (v->tag != ET_VALUE_INT_LIST || (v->items == nullptr && v->count != 0))
    return invalid(op, std::string(name) + " must be an int list");
  *out = {static_cast<const int64_t*>(v->items), v->count};
  return nullptr;
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

// The kernels of this family (defined in matmul.cpp, convolution.cpp, pooling.cpp, normalization.cpp).
et_error* mm_out(void*, et_exec_context*, et_value* const* args, size_t nargs);
et_error* addmm_out(void*, et_exec_context*, et_value* const* args, size_t nargs);
et_error* bmm_out(void*, et_exec_context*, et_value* const* args, size_t nargs);
et_error* linear_out(void*, et_exec_context*, et_value* const* args, size_t nargs);
et_error* convolution_out(void*, et_exec_context*, et_value* const* args, size_t nargs);
et_error* batch_norm_no_training_out(void*, et_exec_context*, et_value* const* args, size_t nargs);
et_error* layer_norm_out(void*, et_exec_context*, et_value* const* args, size_t nargs);
et_error* max_pool2d_with_indices_out(void*, et_exec_context*, et_value* const* args, size_t nargs);
et_error* avg_pool2d_out(void*, et_exec_context*, et_value* const* args, size_t nargs);
et_error* adaptive_avg_pool2d_out(void*, et_exec_context*, et_value* const* args, size_t nargs);

}  // namespace etrt::kernels::linalg
