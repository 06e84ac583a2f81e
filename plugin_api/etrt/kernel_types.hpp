// The argument types of typed kernels (see kernel.hpp): light views over the
// host's et_value, built once per call, never owning or allocating.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "etrt/plugin_api.h"

namespace etrt::plugin {

// Tensor arguments: `const Tensor&` (input), `Tensor&` (output), `const Tensor*` (Tensor?, null for None).
using Tensor = et_tensor;

// Tensor[]: no entry is null.
struct TensorList {
  et_tensor* const* items = nullptr;
  size_t count = 0;
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  et_tensor& operator[](size_t i) const { return *items[i]; }
  et_tensor* const* begin() const { return items; }
  et_tensor* const* end() const { return items + count; }
};

// Tensor?[]: entries may be null (None).
struct OptionalTensorList {
  et_tensor* const* items = nullptr;
  size_t count = 0;
  size_t size() const { return count; }
  const et_tensor* operator[](size_t i) const { return items[i]; }
  et_tensor* const* begin() const { return items; }
  et_tensor* const* end() const { return items + count; }
};

// int[] / SymInt[] (symbolic entries already materialised by the host) and float[] (e.g. upsample's
// scale_factors): a view of the program's list.
template <typename T>
struct ArrayRef {
  using value_type = T;
  const T* items = nullptr;
  size_t count = 0;
  const T* data() const { return items; }
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  T operator[](size_t i) const { return items[i]; }
  const T* begin() const { return items; }
  const T* end() const { return items + count; }
};
using IntArrayRef = ArrayRef<int64_t>;
using DoubleArrayRef = ArrayRef<double>;

// ScalarType (an et_dtype code). The kernel checks that it is one it supports.
enum class ScalarType : int32_t {};

// A Scalar argument: an int, a double or a bool, as the program holds it.
struct Scalar {
  enum Kind { kInt, kDouble, kBool } kind = kInt;
  int64_t i = 0;
  double d = 0;

  static Scalar of_int(int64_t v) { return Scalar{kInt, v, static_cast<double>(v)}; }
  static Scalar of_double(double v) { return Scalar{kDouble, saturate_to_int64(v), v}; }
  static Scalar of_bool(bool v) { return Scalar{kBool, v, v ? 1.0 : 0.0}; }
  // NaN -> 0 and out-of-range values -> the nearest bound (a plain cast would be UB).
  static int64_t saturate_to_int64(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
    if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(v);
  }
  double to_double() const { return kind == kDouble ? d : static_cast<double>(i); }
  int64_t to_int() const { return kind == kDouble ? saturate_to_int64(d) : i; }
  bool to_bool() const { return kind == kDouble ? d != 0 : i != 0; }
  // The dtype PyTorch gives a wrapped Python number.
  int32_t dtype() const { return kind == kDouble ? ET_DTYPE_FLOAT32 : kind == kInt ? ET_DTYPE_INT64 : ET_DTYPE_BOOL; }
  std::string text() const {
    if (kind == kBool) return i ? "True" : "False";
    if (kind == kInt) return std::to_string(i);
    return std::to_string(d);
  }
};

// The one wording of a value's kind in every message: "Tensor", "int", "None", ...
inline const char* value_kind_name(int32_t tag) {
  switch (tag) {
    case ET_VALUE_NULL: return "None";
    case ET_VALUE_INT: return "int";
    case ET_VALUE_BOOL: return "bool";
    case ET_VALUE_DOUBLE: return "double";
    case ET_VALUE_STRING: return "string";
    case ET_VALUE_TENSOR: return "Tensor";
    case ET_VALUE_INT_LIST: return "int list";
    case ET_VALUE_DOUBLE_LIST: return "double list";
    case ET_VALUE_BOOL_LIST: return "bool list";
    case ET_VALUE_TENSOR_LIST: return "Tensor list";
    case ET_VALUE_OPTIONAL_TENSOR_LIST: return "optional Tensor list";
    default: return "unknown value";
  }
}

}  // namespace etrt::plugin
