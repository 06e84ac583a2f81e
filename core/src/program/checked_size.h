// Overflow-checked size arithmetic: the one place core turns sizes it did not
// choose (a program's tensor declarations, a caller's input shapes, a view's
// requested size, a resize) into element counts, byte sizes and dense strides.
//
// A shape passes measure_shape() when every size is non-negative, its byte size
// fits size_t and its dense strides fit int64. Everything derived from a shape
// that passed (its element count, bytes, strides, any partial product) then
// cannot overflow, so code after the check may use plain arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace etrt {

// a * b and a + b, false when the result does not fit T (it is then unspecified).
template <typename T>
[[nodiscard]] inline bool checked_mul(T a, T b, T* result) {
  return !__builtin_mul_overflow(a, b, result);
}
template <typename T>
[[nodiscard]] inline bool checked_add(T a, T b, T* result) {
  return !__builtin_add_overflow(a, b, result);
}

struct ShapeSize {
  enum class Fault { kNone, kNegativeSize, kByteSizeOverflow, kStrideOverflow };
  Fault fault = Fault::kNone;
  size_t fault_dim = 0;  // where the fault was found, and the size there
  int64_t fault_size = 0;
  size_t numel = 0;   // valid when ok()
  size_t nbytes = 0;  // valid when ok()

  bool ok() const { return fault == Fault::kNone; }
  // "negative size -5 at dim 1", "byte size overflows", "sizes overflow 64-bit strides".
  std::string fault_text() const {
    switch (fault) {
      case Fault::kNone: return "";
      case Fault::kNegativeSize:
        return "negative size " + std::to_string(fault_size) + " at dim " + std::to_string(fault_dim);
      case Fault::kByteSizeOverflow: return "byte size overflows";
      case Fault::kStrideOverflow: return "sizes overflow 64-bit strides";
    }
    return "";
  }
};

// Measures a dense tensor of `rank` sizes and `element_size`-byte elements
// (element_size > 0: callers refuse unknown dtypes first; 1 measures a plain element count).
inline ShapeSize measure_shape(const int64_t* sizes, size_t rank, size_t element_size) {
  ShapeSize shape;
  auto fault = [&](ShapeSize::Fault kind, size_t dim) {
    shape.fault = kind;
    shape.fault_dim = dim;
    shape.fault_size = sizes[dim];
    return shape;
  };
  size_t bytes = element_size;  // the element count never overflows first: it is at most the byte size
  // The product of the sizes above 1: an empty tensor still gets dense strides, so a zero size must not
  // hide sizes whose strides overflow int64.
  int64_t extent = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t size = sizes[i];
    if (size < 0) return fault(ShapeSize::Fault::kNegativeSize, i);
    if (!checked_mul(bytes, static_cast<size_t>(size), &bytes)) return fault(ShapeSize::Fault::kByteSizeOverflow, i);
    if (size > 1 && !checked_mul(extent, size, &extent)) return fault(ShapeSize::Fault::kStrideOverflow, i);
  }
  shape.nbytes = bytes;
  shape.numel = bytes / element_size;
  return shape;
}

}  // namespace etrt
