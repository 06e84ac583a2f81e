// aten::_native_batch_norm_legit_no_training.out and aten::native_layer_norm.out
// (float32, default dim order), split across the host pool.
#include <algorithm>
#include <cmath>
#include <string>

#include "linalg_common.h"

namespace etrt::kernels::linalg {
namespace {

et_error* check_output(const char* op, et_tensor& out, const char* name) {
  if (et_error* e = expect_dtype(op, out, name)) return e;
  if (et_error* e = expect_row_major(op, out, name)) return e;
  return expect_data(op, out, name);
}

// A per-channel (or per-element) parameter: float32, 1-D of `size` elements.
et_error* check_vector(const char* op, const et_tensor& t, const char* name, int64_t size) {
  if (et_error* e = expect_dtype(op, t, name)) return e;
  if (t.rank != 1 || t.sizes[0] != size)
    return invalid(op, std::string(name) + " " + shape_string(t) + " must have shape [" + std::to_string(size) + "]");
  return expect_data(op, t, name);
}

// Sums in kLanes independent double accumulators, so GCC vectorises them without reassociating a single
// sum (no -ffast-math): a serial double sum was most of layer_norm's cost on short rows.
constexpr int64_t kLanes = 8;

double lane_sum(const float* __restrict x, int64_t n) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] += static_cast<double>(x[i + j]);
  double s = 0.0;
  for (; i < n; ++i) s += static_cast<double>(x[i]);
  for (int64_t j = 0; j < kLanes; ++j) s += lanes[j];
  return s;
}

double squared_deviations(const float* __restrict x, int64_t n, double mean) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) {
      const double d = static_cast<double>(x[i + j]) - mean;
      lanes[j] += d * d;
    }
  double s = 0.0;
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    s += d * d;
  }
  for (int64_t j = 0; j < kLanes; ++j) s += lanes[j];
  return s;
}

}  // namespace

// _native_batch_norm_legit_no_training.out(input, weight?, bias?, running_mean, running_var, momentum, eps,
//                                          *, out0, out1, out2)
// -> args [input, weight, bias, running_mean, running_var, momentum, eps, out0, out1, out2, (out0, out1, out2)]
// out0 = (input - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c] over dim 1. Like ExecuTorch's
// portable kernel, out1 and out2 (the saved statistics, unused without training) are resized to [0].
et_error* batch_norm_no_training_out(Call call, const Tensor& input, const Tensor* weight, const Tensor* bias,
                                     const Tensor& running_mean, const Tensor& running_var, double momentum, double eps,
                                     Tensor& out0_arg, Tensor& out1_arg, Tensor& out2_arg) {
  const char* op = call.op;
  const et_tensor *x = &input, *mean = &running_mean, *var = &running_var;
  et_tensor *out0 = &out0_arg, *out1 = &out1_arg, *out2 = &out2_arg;
  if (et_error* e = expect_dtype(op, *x, "input")) return e;
  if (x->rank < 2) return invalid(op, "input " + shape_string(*x) + " must have at least 2 dimensions (N, C, ...)");
  if (et_error* e = expect_row_major(op, *x, "input")) return e;
  if (et_error* e = expect_data(op, *x, "input")) return e;
  const int64_t C = x->sizes[1];
  if (et_error* e = check_vector(op, *mean, "running_mean", C)) return e;
  if (et_error* e = check_vector(op, *var, "running_var", C)) return e;
  if (weight != nullptr)
    if (et_error* e = check_vector(op, *weight, "weight", C)) return e;
  if (bias != nullptr)
    if (et_error* e = check_vector(op, *bias, "bias", C)) return e;
  if (et_error* e = resize(op, *out0, {x->sizes, static_cast<size_t>(x->rank)}, "out0")) return e;
  const int64_t empty[1] = {0};
  if (et_error* e = resize(op, *out1, empty, "out1")) return e;
  if (et_error* e = resize(op, *out2, empty, "out2")) return e;
  if (et_error* e = check_output(op, *out0, "out0")) return e;
  for (et_tensor* t : {out1, out2})
    if (et_error* e = expect_dtype(op, *t, t == out1 ? "out1" : "out2")) return e;

  const int64_t outer = x->sizes[0];
  int64_t inner = 1;
  for (int32_t d = 2; d < x->rank; ++d) inner *= x->sizes[d];
  if (outer * C * inner == 0) return nullptr;
  auto elem = [](const et_tensor* t, int64_t c) { return static_cast<const float*>(t->data)[c * t->strides[0]]; };
  const auto* in = static_cast<const float*>(x->data);
  auto* o = static_cast<float*>(out0->data);
  const size_t grain = static_cast<size_t>(std::max<int64_t>(1, (int64_t{1} << 14) / inner));
  host.parallel_for(static_cast<size_t>(outer * C), grain, [&](size_t begin, size_t end) {
    for (size_t plane = begin; plane < end; ++plane) {
      const int64_t c = static_cast<int64_t>(plane) % C;
      const double invstd = 1.0 / std::sqrt(static_cast<double>(elem(var, c)) + eps);
      const double w = weight != nullptr ? elem(weight, c) : 1.0;
      const double b = bias != nullptr ? elem(bias, c) : 0.0;
      const auto scale = static_cast<float>(invstd * w);
      const auto shift = static_cast<float>(b - elem(mean, c) * invstd * w);
      const float* src = in + plane * inner;
      float* dst = o + plane * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] * scale + shift;
    }
  });
  return nullptr;
}

// native_layer_norm.out(input, normalized_shape, weight?, bias?, eps, *, out0, out1, out2)
// -> args [input, normalized_shape, weight, bias, eps, out0, out1, out2, (out0, out1, out2)]
// Over the last len(normalized_shape) dims: out0 = (x - mean) * rstd * weight + bias,
// out1 = mean, out2 = rstd = 1 / sqrt(biased variance + eps); out1/out2 have the
// input's shape with the normalised dims set to 1.
et_error* layer_norm_out(Call call, const Tensor& input, IntArrayRef normalized_shape, const Tensor* weight,
                         const Tensor* bias, double eps, Tensor& out0_arg, Tensor& out1_arg, Tensor& out2_arg) {
  const char* op = call.op;
  const et_tensor* x = &input;
  et_tensor *out0 = &out0_arg, *out1 = &out1_arg, *out2 = &out2_arg;
  std::span<const int64_t> normalized(normalized_shape.begin(), normalized_shape.end());
  if (et_error* e = expect_dtype(op, *x, "input")) return e;
  if (et_error* e = expect_row_major(op, *x, "input")) return e;
  if (et_error* e = expect_data(op, *x, "input")) return e;
  const int32_t r = static_cast<int32_t>(normalized.size());
  bool matches = r >= 1 && r <= x->rank;
  for (int32_t i = 0; matches && i < r; ++i) matches = x->sizes[x->rank - r + i] == normalized[i];
  if (!matches)
    return invalid(op, "normalized_shape " + shape_of(normalized) + " must be a non-empty suffix of the input shape " +
                           shape_string(*x));
  int64_t M = 1, N = 1;
  for (int32_t d = 0; d < x->rank - r; ++d) M *= x->sizes[d];
  for (int64_t s : normalized) N *= s;
  for (auto [t, name] : {std::pair{weight, "weight"}, std::pair{bias, "bias"}}) {
    if (t == nullptr) continue;
    if (et_error* e = expect_dtype(op, *t, name)) return e;
    bool same = t->rank == r;
    for (int32_t i = 0; same && i < r; ++i) same = t->sizes[i] == normalized[i];
    if (!same)
      return invalid(op, std::string(name) + " " + shape_string(*t) + " must have the normalized_shape " +
                             shape_of(normalized));
    if (et_error* e = expect_row_major(op, *t, name)) return e;
    if (et_error* e = expect_data(op, *t, name)) return e;
  }
  int64_t stat_shape[ET_MAX_RANK];
  for (int32_t d = 0; d < x->rank; ++d) stat_shape[d] = d < x->rank - r ? x->sizes[d] : 1;
  if (et_error* e = resize(op, *out0, {x->sizes, static_cast<size_t>(x->rank)}, "out0")) return e;
  if (et_error* e = resize(op, *out1, {stat_shape, static_cast<size_t>(x->rank)}, "out1")) return e;
  if (et_error* e = resize(op, *out2, {stat_shape, static_cast<size_t>(x->rank)}, "out2")) return e;
  if (et_error* e = check_output(op, *out0, "out0")) return e;
  if (et_error* e = check_output(op, *out1, "out1")) return e;
  if (et_error* e = check_output(op, *out2, "out2")) return e;
  if (M == 0) return nullptr;

  const auto* in = static_cast<const float*>(x->data);
  const float* w = weight != nullptr ? static_cast<const float*>(weight->data) : nullptr;
  const float* b = bias != nullptr ? static_cast<const float*>(bias->data) : nullptr;
  auto* o = static_cast<float*>(out0->data);
  auto* mean_out = static_cast<float*>(out1->data);
  auto* rstd_out = static_cast<float*>(out2->data);
  const size_t grain = static_cast<size_t>(std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(N, 1)));
  host.parallel_for(static_cast<size_t>(M), grain, [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; ++row) {
      const float* src = in + row * N;
      float* dst = o + row * N;
      // Two passes in double: the mean, then the squared deviations from it.
      const double mean = N > 0 ? lane_sum(src, N) / static_cast<double>(N) : 0.0;
      const double sq = squared_deviations(src, N, mean);
      const double var = N > 0 ? sq / static_cast<double>(N) : 0.0;
      const double rstd = 1.0 / std::sqrt(var + eps);
      mean_out[row] = static_cast<float>(mean);
      rstd_out[row] = static_cast<float>(rstd);
      const auto fm = static_cast<float>(mean), fr = static_cast<float>(rstd);
      if (w != nullptr && b != nullptr) {
        for (int64_t i = 0; i < N; ++i) dst[i] = (src[i] - fm) * fr * w[i] + b[i];
      } else if (w != nullptr) {
        for (int64_t i = 0; i < N; ++i) dst[i] = (src[i] - fm) * fr * w[i];
      } else if (b != nullptr) {
        for (int64_t i = 0; i < N; ++i) dst[i] = (src[i] - fm) * fr + b[i];
      } else {
        for (int64_t i = 0; i < N; ++i) dst[i] = (src[i] - fm) * fr;
      }
    }
  });
  return nullptr;
}

}  // namespace etrt::kernels::linalg

namespace etrt::kernels {

std::span<const KernelDef> normalization_kernels() {
  using namespace linalg;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_NORMALIZATION
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
