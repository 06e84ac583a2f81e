// Extra helpers for the linear algebra kernel tests (matmul, convolution,
// pooling, normalisation) over kernel_test_support.h: seeded random contents,
// list/bool/null values, int64 tensors, multi-output calls and the tolerance.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace linalg_test {

using etrt_test::Tensor;

// Fresh uniform contents in [lo, hi) from a seeded generator.
inline void fill(Tensor& t, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& x : t.data) x = dist(rng);
}

inline std::unique_ptr<Tensor> make(std::vector<int64_t> shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  auto t = std::make_unique<Tensor>(std::move(shape));
  fill(*t, seed, lo, hi);
  return t;
}

// An output tensor that the kernel may resize up to `capacity` elements.
inline std::unique_ptr<Tensor> dynamic_out(std::vector<int64_t> shape, size_t capacity) {
  return std::make_unique<Tensor>(std::move(shape), capacity, ET_SHAPE_DYNAMIC_BOUND);
}

// An int64 tensor (e.g. max-pool indices): storage is two floats per element.
inline std::unique_ptr<Tensor> int64_tensor(std::vector<int64_t> shape, size_t capacity = 0,
                                            int32_t dynamism = ET_SHAPE_STATIC) {
  size_t n = 1;
  for (int64_t s : shape) n *= static_cast<size_t>(s);
  auto t = std::make_unique<Tensor>(std::move(shape), 2 * std::max(n, capacity), dynamism);
  t->t.dtype = ET_DTYPE_INT64;
  t->t.nbytes = n * sizeof(int64_t);
  t->t.capacity_bytes = std::max(n, capacity) * sizeof(int64_t);
  return t;
}

inline const int64_t* int64_data(const Tensor& t) { return reinterpret_cast<const int64_t*>(t.data.data()); }

// Gives t a channels-last dim order (0, 2, 3, 1) with matching strides.
inline void make_channels_last(Tensor& t) {
  const auto& s = t.sizes;
  t.order = {0, 2, 3, 1};
  t.strides = {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
  t.t.dim_order = t.order.data();
  t.t.strides = t.strides.data();
}

inline et_value null_value() {
  et_value v{};
  v.struct_size = sizeof v;
  v.tag = ET_VALUE_NULL;
  return v;
}

inline et_value bool_value(bool b) {
  et_value v{};
  v.struct_size = sizeof v;
  v.tag = ET_VALUE_BOOL;
  v.as_int = b ? 1 : 0;
  return v;
}

struct IntList {
  std::vector<int64_t> items;
  et_value v{};
  explicit IntList(std::vector<int64_t> values) : items(std::move(values)) {
    v.struct_size = sizeof v;
    v.tag = ET_VALUE_INT_LIST;
    v.items = items.data();
    v.count = items.size();
  }
  IntList(const IntList&) = delete;
  IntList& operator=(const IntList&) = delete;
};

struct TensorList {
  std::vector<et_tensor*> items;
  et_value v{};
  explicit TensorList(std::vector<et_tensor*> tensors) : items(std::move(tensors)) {
    v.struct_size = sizeof v;
    v.tag = ET_VALUE_TENSOR_LIST;
    v.items = items.data();
    v.count = items.size();
  }
  TensorList(const TensorList&) = delete;
  TensorList& operator=(const TensorList&) = delete;
};

// Single-output out variant: appends the out tensor again as the return value.
inline std::string call(const char* op, std::vector<et_value*> args) { return etrt_test::run_kernel(op, args); }
// Multi-output (or hand-built) argument lists: passed exactly as given.
inline std::string call_exact(const char* op, std::vector<et_value*> args) {
  return etrt_test::run_kernel(op, args, false);
}

// Tolerance of a float32 result against a double reference of a reduction of
// length `k` over inputs in [-1, 1]: relative 1e-4 plus absolute 1e-5 scaled
// by sqrt(k), because the rounding error of a float32 sum grows about as the
// square root of its length (blocked FMA accumulation, random signs).
inline double tolerance(double reference, int64_t k) {
  return 1e-4 * std::abs(reference) + 1e-5 * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
}

// Every element of `got` (float32, contiguous) against `expected` (double).
inline ::testing::AssertionResult all_near(const Tensor& got, const std::vector<double>& expected, int64_t k) {
  size_t n = 1;
  for (int64_t s : got.sizes) n *= static_cast<size_t>(s);
  if (n != expected.size())
    return ::testing::AssertionFailure() << "size " << n << " differs from the reference's " << expected.size();
  for (size_t i = 0; i < n; ++i) {
    const double g = got.data[i], e = expected[i];
    if (!(std::abs(g - e) <= tolerance(e, k)))
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", expected " << e
                                           << " (tolerance " << tolerance(e, k) << ")";
  }
  return ::testing::AssertionSuccess();
}

inline std::vector<int64_t> sizes_of(const Tensor& t) { return t.sizes; }

}  // namespace linalg_test
