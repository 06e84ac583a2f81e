// Dtype dispatch of the pointwise family: the C++ type of each storage dtype,
// bool bytes read safely, conversions, the copy/fill/convert entry points
// (tensor_copy.cpp), output buffers in a computation dtype, and exp_fast.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "etrt/half.hpp"
#include "strided_loop.h"

namespace etrt::kernels::pw {

// ------------------------------------------------------ dtype dispatching

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) for the C++ type stored for `dtype` (storage dtypes only).
template <typename F>
inline decltype(auto) dispatch_storage(int32_t dtype, F&& f) {
  switch (dtype) {
    case ET_DTYPE_UINT8: return f(Tag<uint8_t>{});
    case ET_DTYPE_INT8: return f(Tag<int8_t>{});
    case ET_DTYPE_INT16: return f(Tag<int16_t>{});
    case ET_DTYPE_INT32: return f(Tag<int32_t>{});
    case ET_DTYPE_INT64: return f(Tag<int64_t>{});
    case ET_DTYPE_FLOAT64: return f(Tag<double>{});
    case ET_DTYPE_BOOL: return f(Tag<bool>{});
    default: return f(Tag<float>{});
  }
}

using etrt::plugin::BFloat16;
using etrt::plugin::Half;
template <typename T>
constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// dispatch_storage plus float16 and bfloat16 (as Half / BFloat16, which only
// convert to and from float): for code that only moves or converts elements.
template <typename F>
inline decltype(auto) dispatch_any(int32_t dtype, F&& f) {
  if (dtype == ET_DTYPE_FLOAT16) return f(Tag<Half>{});
  if (dtype == ET_DTYPE_BFLOAT16) return f(Tag<BFloat16>{});
  return dispatch_storage(dtype, static_cast<F&&>(f));
}

template <typename T>
constexpr int32_t dtype_of() {
  if constexpr (std::is_same_v<T, float>) return ET_DTYPE_FLOAT32;
  else if constexpr (std::is_same_v<T, Half>) return ET_DTYPE_FLOAT16;
  else if constexpr (std::is_same_v<T, BFloat16>) return ET_DTYPE_BFLOAT16;
  else if constexpr (std::is_same_v<T, double>) return ET_DTYPE_FLOAT64;
  else if constexpr (std::is_same_v<T, int64_t>) return ET_DTYPE_INT64;
  else if constexpr (std::is_same_v<T, int32_t>) return ET_DTYPE_INT32;
  else if constexpr (std::is_same_v<T, int16_t>) return ET_DTYPE_INT16;
  else if constexpr (std::is_same_v<T, int8_t>) return ET_DTYPE_INT8;
  else if constexpr (std::is_same_v<T, uint8_t>) return ET_DTYPE_UINT8;
  else return ET_DTYPE_BOOL;
}

// Bool tensors are read as bytes and normalised (!= 0): a program's constants or
// a NumPy buffer may hold bytes other than 0 and 1, and loading those as `bool`
// is undefined behaviour. Stored<T> is the type to read memory of T as.
template <typename T>
using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
template <typename T>
inline T load(Stored<T> x) {
  if constexpr (std::is_same_v<T, bool>) return x != 0;
  else return x;
}

// The dtype computations run in: float32, float64, int64 (all integral
// types) or bool.
inline int32_t compute_dtype(int32_t dtype) {
  if (dtype == ET_DTYPE_FLOAT64) return ET_DTYPE_FLOAT64;
  if (is_float(dtype)) return ET_DTYPE_FLOAT32;
  if (dtype == ET_DTYPE_BOOL) return ET_DTYPE_BOOL;
  return ET_DTYPE_INT64;
}

// Half types convert through float, as c10's do (so double -> float16 rounds twice, like PyTorch).
template <typename To, typename From>
inline To convert(From x) {
  if constexpr (is_half_v<From>) return convert<To>(etrt::plugin::to_float(x));
  else if constexpr (is_half_v<To>) return etrt::plugin::half_cast<To>(convert<float>(x));
  else if constexpr (std::is_same_v<To, bool>) return x != From(0);
  else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // Out-of-range float -> int is undefined in C++; saturate NaN to 0 like most hardware paths would not.
    if (!(x == x)) return To(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    double v = static_cast<double>(x);
    if (v <= lo) return std::numeric_limits<To>::min();
    if (v >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else return static_cast<To>(x);
}


// ------------------------------------------------- copies (tensor_copy.cpp)

// out[i] = convert(in[i]) over out's shape; `in` has out's rank and sizes,
// or size 1 / stride 0 where it is broadcast. Any strides, any dtypes of the
// storage set. Parallel, memcpy for contiguous runs, blocked for transposes.
void copy_view(const View& out, const View& in);
// The elements of loop operand 1 into operand 0, both of one dtype of `element_bytes` (not bool: see copy_view).
void copy_loop(const Loop& L, size_t element_bytes);
// out <- src (a strided view of self of out's logical shape), checking dtypes and resizing out.
et_error* view_copy_into(const char* op, const et_tensor& self, const View& src, et_tensor& out);
// `t` itself, or for a bool tensor a dense copy with its bytes normalised to 0/1
// (in `scratch`, described by `*storage` and `strides`); null when out of memory.
const et_tensor* normalized_bools(const et_tensor& t, Scratch& scratch, et_tensor* storage, int64_t* strides);
// Every element of `out` = value converted to out's dtype.
void fill_view(const View& out, const Scalar& value);
// A contiguous view of `in` in `dtype`: `in` itself when it already is one,
// else a converted copy in `scratch`. Returns false when memory ran out.
bool contiguous_as(const View& in, int32_t dtype, Scratch& scratch, View* result);

// Output helper: computations write `view()` (contiguous, in compute dtype
// when `dtype` differs from the tensor's, else the tensor itself when it is
// row-major contiguous); finish() converts/copies into the tensor.
class OutputBuffer {
 public:
  // need_contiguous: the computation needs a row-major buffer; otherwise
  // the tensor is written through its strides when its dtype matches.
  bool init(const et_tensor& out, int32_t dtype, bool need_contiguous = true) {
    target_ = view_of(out);
    if (out.dtype == dtype && (!need_contiguous || target_.contiguous())) {
      view_ = target_;
      direct_ = true;
      return true;
    }
    direct_ = false;
    void* p = scratch_.get(static_cast<size_t>(target_.numel()) * element_size(dtype));
    if (p == nullptr) return false;
    view_ = contiguous_view(dtype, target_.rank, target_.sizes, p);
    return true;
  }
  const View& view() const { return view_; }
  void finish() {
    if (!direct_) copy_view(target_, view_);
  }

 private:
  View target_, view_;
  bool direct_ = true;
  Scratch scratch_;
};

// `in` itself when it has `dtype`, else a contiguous converted copy.
inline bool as_dtype(const View& in, int32_t dtype, Scratch& scratch, View* result) {
  if (in.dtype == dtype) {
    *result = in;
    return true;
  }
  return contiguous_as(in, dtype, scratch, result);
}

// A rank-0 view of a scalar converted to `dtype`, stored in `storage`.
inline View scalar_view(const Scalar& s, int32_t dtype, uint64_t* storage) {
  View v;
  v.dtype = dtype;
  v.rank = 0;
  v.data = reinterpret_cast<char*>(storage);
  *storage = 0;
  dispatch_any(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T x;
    if constexpr (is_half_v<T>) x = convert<T>(static_cast<float>(s.to_double()));
    else if constexpr (std::is_same_v<T, bool>) x = s.to_bool();
    else if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(s.to_double());
    else x = s.kind == Scalar::kDouble ? convert<T>(s.d) : static_cast<T>(s.i);
    std::memcpy(storage, &x, sizeof(T));
  });
  return v;
}

inline et_error* out_of_memory(const char* op) { return fail(ET_ERR_OUT_OF_MEMORY, op, "out of scratch memory"); }

// -------------------------------------------------------------- math helpers

// exp(x) for float, written so GCC vectorises it: range reduction by ln 2,
// degree-7 polynomial, exponent by bit manipulation. Relative error ~2 ulp;
// 0 below -87.3 (and for -inf), +inf above 88.3, NaN propagates.
inline float exp_fast(float x) {
  const float xc = x != x ? 0.0f : std::min(std::max(x, -87.3f), 88.3f);  // NaN is returned below
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float result = p * std::bit_cast<float>(bits);
  result = x > 88.3f ? std::numeric_limits<float>::infinity() : result;
  result = x < -87.3f ? 0.0f : result;
  return x != x ? x : result;
}
inline double exp_fast(double x) { return std::exp(x); }


}  // namespace etrt::kernels::pw
