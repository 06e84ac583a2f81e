// Helpers for the pointwise kernel tests: tensors of any dtype (with
// transposed strides or other dim orders on request), boxed argument values,
// logical-index iteration and a seeded random generator.
#pragma once

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "etrt/half.hpp"
#include "kernel_test_support.h"

namespace pw_test {

inline size_t esize(int32_t dtype) {
  switch (dtype) {
    case ET_DTYPE_UINT8: case ET_DTYPE_INT8: case ET_DTYPE_BOOL: return 1;
    case ET_DTYPE_INT16: case ET_DTYPE_FLOAT16: case ET_DTYPE_BFLOAT16: return 2;
    case ET_DTYPE_INT32: case ET_DTYPE_FLOAT32: return 4;
    default: return 8;
  }
}

inline size_t count(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t s : shape) n *= static_cast<size_t>(s);
  return n;
}

// Calls fn(index) for every index of `shape` in row-major order.
inline void for_each_index(const std::vector<int64_t>& shape, const std::function<void(const std::vector<int64_t>&)>& fn) {
  size_t n = count(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t flat = 0; flat < n; ++flat) {
    fn(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// A tensor of any dtype; data read and written as double through strides.
struct TT {
  int32_t dtype;
  std::vector<int64_t> sizes, strides;
  std::vector<uint8_t> order;
  std::vector<uint64_t> storage;  // 8-byte aligned bytes
  et_tensor t{};
  et_value v{};

  // layout: "" row-major; "T" last two dims transposed in memory; or an
  // explicit dim order via with_dim_order().
  TT(std::vector<int64_t> shape, int32_t dt = ET_DTYPE_FLOAT32, unsigned seed = 1, size_t capacity = 0,
     int32_t dynamism = ET_SHAPE_STATIC, bool transposed = false)
      : dtype(dt), sizes(std::move(shape)), strides(sizes.size()), order(sizes.size()) {
    size_t n = count(sizes);
    std::vector<size_t> perm(sizes.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    if (transposed && sizes.size() >= 2) std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    set_layout(perm);
    size_t elems = std::max(n, capacity);
    storage.assign((elems * esize(dtype) + 7) / 8 + 1, 0);
    t.struct_size = sizeof t;
    t.dtype = dtype;
    t.rank = static_cast<int32_t>(sizes.size());
    t.sizes = sizes.data();
    t.strides = strides.data();
    t.dim_order = order.data();
    t.data = storage.data();
    t.nbytes = n * esize(dtype);
    t.capacity_bytes = elems * esize(dtype);
    t.dynamism = dynamism;
    v.struct_size = sizeof v;
    v.tag = ET_VALUE_TENSOR;
    v.tensor = &t;
    randomize(seed);
  }
  TT(const TT&) = delete;
  TT& operator=(const TT&) = delete;

  // Memory order: perm[0] outermost ... perm[last] innermost (a dim order).
  void set_layout(const std::vector<size_t>& perm) {
    int64_t s = 1;
    for (size_t i = perm.size(); i-- > 0;) {
      strides[perm[i]] = s;
      s *= std::max<int64_t>(sizes[perm[i]], 1);
    }
    bool is_default = true;
    for (size_t i = 0; i < perm.size(); ++i) is_default &= perm[i] == i;
    // Transposed strides keep the default dim order (a strided view), an
    // explicit dim order is recorded.
    for (size_t i = 0; i < perm.size(); ++i) order[i] = static_cast<uint8_t>(i);
    (void)is_default;
  }
  void with_dim_order(const std::vector<size_t>& perm) {
    set_layout(perm);
    for (size_t i = 0; i < perm.size(); ++i) order[i] = static_cast<uint8_t>(perm[i]);
  }

  size_t numel() const { return count(sizes); }
  char* bytes() { return reinterpret_cast<char*>(storage.data()); }
  const char* bytes() const { return reinterpret_cast<const char*>(storage.data()); }

  size_t offset(const std::vector<int64_t>& idx) const {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    return static_cast<size_t>(off);
  }
  double load(size_t off) const {
    const char* p = bytes() + off * esize(dtype);
    switch (dtype) {
      case ET_DTYPE_FLOAT32: { float x; std::memcpy(&x, p, 4); return x; }
      case ET_DTYPE_FLOAT64: { double x; std::memcpy(&x, p, 8); return x; }
      case ET_DTYPE_INT64: { int64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
      case ET_DTYPE_INT32: { int32_t x; std::memcpy(&x, p, 4); return x; }
      case ET_DTYPE_INT16: { int16_t x; std::memcpy(&x, p, 2); return x; }
      case ET_DTYPE_INT8: { int8_t x; std::memcpy(&x, p, 1); return x; }
      case ET_DTYPE_UINT8: { uint8_t x; std::memcpy(&x, p, 1); return x; }
      case ET_DTYPE_BOOL: { uint8_t x; std::memcpy(&x, p, 1); return x ? 1 : 0; }
      case ET_DTYPE_FLOAT16: { etrt::plugin::Half x; std::memcpy(&x, p, 2); return etrt::plugin::to_float(x); }
      case ET_DTYPE_BFLOAT16: { etrt::plugin::BFloat16 x; std::memcpy(&x, p, 2); return etrt::plugin::to_float(x); }
      default: return NAN;
    }
  }
  void store(size_t off, double v) {
    char* p = bytes() + off * esize(dtype);
    switch (dtype) {
      case ET_DTYPE_FLOAT32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
      case ET_DTYPE_FLOAT64: std::memcpy(p, &v, 8); break;
      case ET_DTYPE_INT64: { int64_t x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
      // Narrow integers through int64, which wraps (a double outside the narrow type's range, e.g. -1 stored
      // into uint8, is undefined behaviour when converted directly: UBSan reported it).
      case ET_DTYPE_INT32: { int32_t x = static_cast<int32_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 4); break; }
      case ET_DTYPE_INT16: { int16_t x = static_cast<int16_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 2); break; }
      case ET_DTYPE_INT8: { int8_t x = static_cast<int8_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 1); break; }
      case ET_DTYPE_UINT8: { uint8_t x = static_cast<uint8_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 1); break; }
      case ET_DTYPE_BOOL: { uint8_t x = v != 0; std::memcpy(p, &x, 1); break; }
      case ET_DTYPE_FLOAT16: { auto x = etrt::plugin::half_from_float(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
      case ET_DTYPE_BFLOAT16: { auto x = etrt::plugin::bfloat16_from_float(static_cast<float>(v)); std::memcpy(p, &x, 2); break; }
      default: break;
    }
  }
  double get(const std::vector<int64_t>& idx) const { return load(offset(idx)); }
  void set(const std::vector<int64_t>& idx, double v) { store(offset(idx), v); }
  // Logical row-major element i.
  double flat(size_t i) const {
    std::vector<int64_t> idx(sizes.size());
    for (size_t d = sizes.size(); d-- > 0;) {
      idx[d] = static_cast<int64_t>(i % static_cast<size_t>(sizes[d]));
      i /= static_cast<size_t>(sizes[d]);
    }
    return get(idx);
  }
  void set_flat(size_t i, double v) {
    std::vector<int64_t> idx(sizes.size());
    for (size_t d = sizes.size(); d-- > 0;) {
      idx[d] = static_cast<int64_t>(i % static_cast<size_t>(sizes[d]));
      i /= static_cast<size_t>(sizes[d]);
    }
    set(idx, v);
  }
  void set_values(const std::vector<double>& values) {
    for (size_t i = 0; i < values.size(); ++i) set_flat(i, values[i]);
  }
  std::vector<double> values() const {
    std::vector<double> out(numel());
    for (size_t i = 0; i < out.size(); ++i) out[i] = flat(i);
    return out;
  }

  // Random contents: floats in [-3, 3], ints in [-5, 5], bools 50/50.
  void randomize(unsigned seed, double lo = -3, double hi = 3) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> real(lo, hi);
    std::uniform_int_distribution<int> integer(static_cast<int>(std::ceil(std::max(lo, -5.0))),
                                               static_cast<int>(std::floor(std::min(hi, 5.0))));
    size_t n = storage.size() * 8 / std::max<size_t>(esize(dtype), 1) - 1;
    for (size_t i = 0; i < n; ++i) {
      if (dtype == ET_DTYPE_FLOAT32 || dtype == ET_DTYPE_FLOAT64 || dtype == ET_DTYPE_FLOAT16 ||
          dtype == ET_DTYPE_BFLOAT16)
        store(i, real(rng));
      else if (dtype == ET_DTYPE_BOOL) store(i, rng() & 1);
      else store(i, integer(rng));
    }
  }
};

// Boxed argument values that own their items.
struct Val {
  et_value v{};
  std::vector<int64_t> ints;
  std::vector<et_tensor*> tensors;
  std::string text;
  Val() { v.struct_size = sizeof v; }
  Val(const Val&) = delete;
  Val& operator=(const Val&) = delete;
};
using ValPtr = std::unique_ptr<Val>;

inline ValPtr none() {
  auto p = std::make_unique<Val>();
  p->v.tag = ET_VALUE_NULL;
  return p;
}
inline ValPtr integer(int64_t x) {
  auto p = std::make_unique<Val>();
  p->v.tag = ET_VALUE_INT;
  p->v.as_int = x;
  return p;
}
inline ValPtr real(double x) {
  auto p = std::make_unique<Val>();
  p->v.tag = ET_VALUE_DOUBLE;
  p->v.as_double = x;
  return p;
}
inline ValPtr boolean(bool x) {
  auto p = std::make_unique<Val>();
  p->v.tag = ET_VALUE_BOOL;
  p->v.as_int = x;
  return p;
}
inline ValPtr string(const std::string& s) {
  auto p = std::make_unique<Val>();
  p->text = s;
  p->v.tag = ET_VALUE_STRING;
  p->v.items = p->text.data();
  p->v.count = p->text.size();
  return p;
}
inline ValPtr int_list(std::vector<int64_t> items) {
  auto p = std::make_unique<Val>();
  p->ints = std::move(items);
  p->v.tag = ET_VALUE_INT_LIST;
  p->v.items = p->ints.data();
  p->v.count = p->ints.size();
  return p;
}
inline ValPtr tensor_list(std::vector<et_tensor*> items, bool optional = false) {
  auto p = std::make_unique<Val>();
  p->tensors = std::move(items);
  p->v.tag = optional ? ET_VALUE_OPTIONAL_TENSOR_LIST : ET_VALUE_TENSOR_LIST;
  p->v.items = p->tensors.data();
  p->v.count = p->tensors.size();
  return p;
}

// Runs a kernel with the out tensor appended again as the return value.
inline std::string run(const char* op, std::vector<et_value*> args, bool append_return = true) {
  return etrt_test::run_kernel(op, std::move(args), append_return);
}

inline double tol(double expected, double abs_tol = 1e-5, double rel_tol = 1e-5) {
  return abs_tol + rel_tol * std::abs(expected);
}

// Broadcast index: maps an output index to an input of shape `in`.
inline std::vector<int64_t> bcast_index(const std::vector<int64_t>& out_idx, const std::vector<int64_t>& in) {
  std::vector<int64_t> idx(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t od = out_idx[out_idx.size() - in.size() + d];
    idx[d] = in[d] == 1 ? 0 : od;
  }
  return idx;
}

}  // namespace pw_test
