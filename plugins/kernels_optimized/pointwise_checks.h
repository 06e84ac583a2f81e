// Argument checks of the pointwise kernel family: messages naming the
// operator, PyTorch's dtype promotion and casting rules, data/dtype checks,
// dim normalisation, output resizing and broadcast shapes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels.h"

namespace etrt::kernels::pw {

using etrt::plugin::dtype_name;
using etrt::plugin::element_size;
using etrt::plugin::dim_order_string;
using etrt::plugin::shape_string;
using etrt::plugin::Call;
using etrt::plugin::Prepare;
using etrt::plugin::prepared;
using etrt::plugin::DoubleArrayRef;
using etrt::plugin::IntArrayRef;
using etrt::plugin::KernelDef;
using etrt::plugin::OptionalTensorList;
using etrt::plugin::Scalar;
using etrt::plugin::ScalarType;
using etrt::plugin::Tensor;
using etrt::plugin::TensorList;

// Elements per parallel chunk: large enough that dispatch costs nothing.
constexpr size_t kGrain = 1 << 14;

// ------------------------------------------------------------------ messages

inline std::string str(int64_t v) { return std::to_string(v); }
inline std::string list_str(const IntArrayRef& l) { return shape_string(l.items, static_cast<int64_t>(l.count)); }

// Error paths are cold and out of line, so that the checks below inline into every kernel as a few compares.
[[gnu::cold, gnu::noinline]] inline et_error* fail(int32_t code, const char* op, const std::string& what) {
  return host.error(code, std::string(op) + ": " + what);
}
inline et_error* invalid(const char* op, const std::string& what) { return fail(ET_ERR_INVALID_ARGUMENT, op, what); }
inline et_error* unsupported(const char* op, const std::string& what) { return fail(ET_ERR_NOT_SUPPORTED, op, what); }

// ------------------------------------------------------------------- dtypes

inline bool is_float(int32_t d) {
  return d == ET_DTYPE_FLOAT32 || d == ET_DTYPE_FLOAT64 || d == ET_DTYPE_FLOAT16 || d == ET_DTYPE_BFLOAT16;
}
inline bool is_integral(int32_t d) {  // bool excluded
  return d == ET_DTYPE_UINT8 || d == ET_DTYPE_INT8 || d == ET_DTYPE_INT16 || d == ET_DTYPE_INT32 || d == ET_DTYPE_INT64;
}
// The storage dtypes this family reads and writes.
inline bool is_storage_supported(int32_t d) { return is_integral(d) || d == ET_DTYPE_FLOAT32 || d == ET_DTYPE_FLOAT64 || d == ET_DTYPE_BOOL; }

// PyTorch's promote_types for the real dtypes.
inline int32_t promote_types(int32_t a, int32_t b) {
  if (a == b) return a;
  if (a == ET_DTYPE_BOOL) return b;
  if (b == ET_DTYPE_BOOL) return a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    if (a == ET_DTYPE_FLOAT64 || b == ET_DTYPE_FLOAT64) return ET_DTYPE_FLOAT64;
    return ET_DTYPE_FLOAT32;  // f32 with a half type, or f16 with bf16
  }
  if (a == ET_DTYPE_UINT8 || b == ET_DTYPE_UINT8) {
    int32_t other = a == ET_DTYPE_UINT8 ? b : a;
    return other == ET_DTYPE_INT8 ? ET_DTYPE_INT16 : other;
  }
  return element_size(a) >= element_size(b) ? a : b;
}

// 0 bool, 1 integral, 2 floating.
inline int category(int32_t d) { return d == ET_DTYPE_BOOL ? 0 : is_float(d) ? 2 : 1; }

// torch.can_cast: no float -> integral, no non-bool -> bool.
inline bool can_cast(int32_t from, int32_t to) {
  if (is_float(from) && !is_float(to)) return false;
  if (from != ET_DTYPE_BOOL && to == ET_DTYPE_BOOL) return false;
  return true;
}

// The op's result type must cast to the output's dtype (PyTorch's out= rule).
[[gnu::cold, gnu::noinline]] inline et_error* result_cast_error(const char* op, int32_t result, int32_t out_dtype) {
  return invalid(op, std::string("result type ") + dtype_name(result) + " can't be cast to the output dtype " +
                         dtype_name(out_dtype));
}
inline et_error* check_result_cast(const char* op, int32_t result, int32_t out_dtype) {
  if (result == out_dtype || can_cast(result, out_dtype)) [[likely]] return nullptr;
  return result_cast_error(op, result, out_dtype);
}

// PyTorch's result_type over tensors (dimensioned tensors outrank rank-0
// ones, which outrank wrapped scalars, unless a lower-priority operand is of
// a higher category).
struct ResultType {
  int32_t dim = -1, zero = -1, wrapped = -1;
  void add(const et_tensor& t) {
    int32_t& slot = t.rank > 0 ? dim : zero;
    slot = slot < 0 ? t.dtype : promote_types(slot, t.dtype);
  }
  void add(const Scalar& s) { wrapped = wrapped < 0 ? s.dtype() : promote_types(wrapped, s.dtype()); }
  static int32_t combine(int32_t higher, int32_t lower) {
    if (higher < 0) return lower;
    if (lower < 0) return higher;
    if (is_float(higher)) return higher;
    if (higher == ET_DTYPE_BOOL || is_float(lower)) return promote_types(higher, lower);
    return higher;
  }
  int32_t get() const { return combine(dim, combine(zero, wrapped)); }
};

// The promoted dtype of two operands (PyTorch's result_type).
inline int32_t promoted(const et_tensor& a, const et_tensor& b) {
  ResultType rt;
  rt.add(a);
  rt.add(b);
  return rt.get();
}
inline int32_t promoted(const et_tensor& a, const Scalar& b) {
  ResultType rt;
  rt.add(a);
  rt.add(b);
  return rt.get();
}

// Dtype checks.
[[gnu::cold, gnu::noinline]] inline et_error* storage_error(const char* op, const et_tensor& t, const char* name) {
  return unsupported(op, std::string(name) + " dtype " + dtype_name(t.dtype) +
                             " is not supported (supported: float32, float64, int8-int64, uint8, bool)");
}
inline et_error* check_storage(const char* op, const et_tensor& t, const char* name) {
  if (t.dtype == ET_DTYPE_FLOAT32 || is_storage_supported(t.dtype)) [[likely]] return nullptr;
  return storage_error(op, t, name);
}
// Operators that only move or convert elements (copy_view) also take float16 and bfloat16.
inline bool is_movable(int32_t d) { return is_storage_supported(d) || d == ET_DTYPE_FLOAT16 || d == ET_DTYPE_BFLOAT16; }
[[gnu::cold, gnu::noinline]] inline et_error* movable_error(const char* op, const et_tensor& t, const char* name) {
  return unsupported(op, std::string(name) + " dtype " + dtype_name(t.dtype) +
                             " is not supported (supported: float16, bfloat16, float32, float64, int8-int64, uint8, bool)");
}
inline et_error* check_movable(const char* op, const et_tensor& t, const char* name) {
  if (is_movable(t.dtype)) [[likely]] return nullptr;
  return movable_error(op, t, name);
}
inline et_error* check_float(const char* op, const et_tensor& t, const char* name) {
  if (t.dtype == ET_DTYPE_FLOAT32 || t.dtype == ET_DTYPE_FLOAT64) return nullptr;
  return unsupported(op, std::string(name) + " dtype " + dtype_name(t.dtype) + " is not supported (float32, float64)");
}
// The full check (an empty tensor may have no data), out of line: check_data's inlined test covers the usual case.
[[gnu::noinline]] inline et_error* check_data_slow(const char* op, const et_tensor& t, const char* name) {
  size_t n = etrt::plugin::numel(t);
  if (n > 0 && t.data == nullptr) return invalid(op, std::string(name) + " has no data");
  if (t.rank < 0 || t.rank > ET_MAX_RANK) return invalid(op, std::string(name) + " has rank " + str(t.rank));
  return nullptr;
}
inline et_error* check_data(const char* op, const et_tensor& t, const char* name) {
  if (t.data != nullptr && static_cast<uint32_t>(t.rank) <= ET_MAX_RANK) [[likely]] return nullptr;
  return check_data_slow(op, t, name);
}

// Normalises a possibly negative dim against `rank` (rank 0 accepts -1 and 0).
[[gnu::cold, gnu::noinline]] inline et_error* dim_error(const char* op, int64_t dim, int64_t rank, const char* what) {
  int64_t r = rank == 0 ? 1 : rank;
  return invalid(op, std::string(what) + " " + str(dim) + " is out of range for a tensor of rank " + str(rank) +
                         " (expected [" + str(-r) + ", " + str(r - 1) + "])");
}
inline et_error* normalize_dim(const char* op, int64_t dim, int64_t rank, int64_t* out, const char* what = "dim") {
  int64_t r = rank == 0 ? 1 : rank;
  if (dim < -r || dim >= r) [[unlikely]] return dim_error(op, dim, rank, what);
  *out = dim < 0 ? dim + r : dim;
  return nullptr;
}

// Resizes `out` to the result shape, with messages naming the operator. The common case, an output that already
// has the shape, is a few compares inlined into the kernel; the rest is out of line.
[[gnu::noinline]] inline et_error* resize_out_slow(const char* op, et_tensor& out, const int64_t* sizes, int64_t rank) {
  if (rank != out.rank)
    return invalid(op, "output has rank " + str(out.rank) + " " + shape_string(out) + " but the result has shape " +
                           shape_string(sizes, rank));
  bool same = true;
  size_t n = 1;
  for (int64_t i = 0; i < rank; ++i) {
    same &= sizes[i] == out.sizes[i];
    n *= static_cast<size_t>(sizes[i]);
  }
  if (same) return nullptr;
  if (out.dynamism == ET_SHAPE_STATIC)
    return invalid(op, "output shape " + shape_string(out) + " does not match the result shape " +
                           shape_string(sizes, rank) + " and the output has a static shape");
  if (n * element_size(out.dtype) > out.capacity_bytes)
    return invalid(op, "result shape " + shape_string(sizes, rank) + " needs " + str(int64_t(n * element_size(out.dtype))) +
                           " bytes but the output holds only " + str(int64_t(out.capacity_bytes)));
  return host.api()->tensor_resize(&out, sizes, static_cast<size_t>(rank));
}
inline et_error* resize_out(const char* op, et_tensor& out, const int64_t* sizes, int64_t rank) {
  if (rank == out.rank) [[likely]] {
    bool same = true;
    for (int64_t i = 0; i < rank; ++i) same &= sizes[i] == out.sizes[i];
    if (same) return nullptr;
  }
  return resize_out_slow(op, out, sizes, rank);
}

// Broadcast shape of two shapes (right-aligned).
inline bool broadcast_shapes(const int64_t* a, int64_t ra, const int64_t* b, int64_t rb, int64_t* out, int64_t* rank) {
  int64_t r = std::max(ra, rb);
  for (int64_t i = 0; i < r; ++i) {
    int64_t ai = i - (r - ra), bi = i - (r - rb);
    int64_t as = ai >= 0 ? a[ai] : 1, bs = bi >= 0 ? b[bi] : 1;
    if (as != bs && as != 1 && bs != 1) return false;
    out[i] = as == 1 ? bs : as;
  }
  *rank = r;
  return true;
}


}  // namespace etrt::kernels::pw
