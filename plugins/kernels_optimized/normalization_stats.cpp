// Normalisations that compute their statistics from the input (float32, default
// dim order): native_group_norm, and _native_batch_norm_legit in its training
// and no-running-stats forms (batch statistics over N and the spatial dims).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "linalg_common.h"

namespace etrt::kernels::linalg {
namespace {

et_error* check_output(const char* op, et_tensor& out, const char* name) {
  if (et_error* e = expect_dtype(op, out, name)) return e;
  if (et_error* e = expect_row_major(op, out, name)) return e;
  return expect_data(op, out, name);
}

et_error* check_input(const char* op, const et_tensor& x) {
  if (et_error* e = expect_dtype(op, x, "input")) return e;
  if (x.rank < 2) return invalid(op, "input " + shape_string(x) + " must have at least 2 dimensions (N, C, ...)");
  if (et_error* e = expect_row_major(op, x, "input")) return e;
  return expect_data(op, x, "input");
}

// A per-channel parameter: float32, 1-D of `size` elements (any stride).
et_error* check_vector(const char* op, const et_tensor* t, const char* name, int64_t size) {
  if (t == nullptr) return nullptr;
  if (et_error* e = expect_dtype(op, *t, name)) return e;
  if (t->rank != 1 || t->sizes[0] != size)
    return invalid(op, std::string(name) + " " + shape_string(*t) + " must have shape [" + std::to_string(size) + "]");
  return expect_data(op, *t, name);
}

float element(const et_tensor* t, int64_t i, float fallback) {
  return t != nullptr ? static_cast<const float*>(t->data)[i * t->strides[0]] : fallback;
}

// Mean and biased variance of n floats at `x` with stride 1, in double (two passes).
void moments(const float* x, int64_t n, double* mean, double* var) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  *mean = n > 0 ? sum / static_cast<double>(n) : 0;
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i] - *mean;
    sq += d * d;
  }
  *var = n > 0 ? sq / static_cast<double>(n) : 0;
}

}  // namespace

// native_group_norm.out(input, weight?, bias?, SymInt N, SymInt C, SymInt HxW, int group, float eps,
//                       *, out0, out1, out2) -> (out0, out1, out2)
// Per sample and group of C/group channels: out0 = (x - mean) * rstd * weight[c] + bias[c];
// out1 = mean and out2 = rstd, both [N, group].
et_error* group_norm_out(Call call, const Tensor& input, const Tensor* weight, const Tensor* bias, int64_t N,
                         int64_t C, int64_t HxW, int64_t group, double eps, Tensor& out0, Tensor& out1, Tensor& out2) {
  const char* op = call.op;
  if (et_error* e = check_input(op, input)) return e;
  if (input.sizes[0] != N || input.sizes[1] != C || static_cast<int64_t>(numel(input)) != N * C * HxW)
    return invalid(op, "input " + shape_string(input) + " does not match N=" + std::to_string(N) + ", C=" +
                           std::to_string(C) + ", HxW=" + std::to_string(HxW));
  if (group <= 0 || C % group != 0)
    return invalid(op, "group " + std::to_string(group) + " must be positive and divide the channels " + std::to_string(C));
  if (et_error* e = check_vector(op, weight, "weight", C)) return e;
  if (et_error* e = check_vector(op, bias, "bias", C)) return e;
  const int64_t stats[2] = {N, group};
  if (et_error* e = resize(op, out0, {input.sizes, static_cast<size_t>(input.rank)}, "out0")) return e;
  if (et_error* e = resize(op, out1, stats, "out1")) return e;
  if (et_error* e = resize(op, out2, stats, "out2")) return e;
  for (auto [t, name] : {std::pair{&out0, "out0"}, std::pair{&out1, "out1"}, std::pair{&out2, "out2"}})
    if (et_error* e = check_output(op, *t, name)) return e;
  if (N * group == 0) return nullptr;
  const int64_t per_group = C / group, span = per_group * HxW;
  const auto* x = static_cast<const float*>(input.data);
  auto* y = static_cast<float*>(out0.data);
  auto* mean_out = static_cast<float*>(out1.data);
  auto* rstd_out = static_cast<float*>(out2.data);
  const size_t grain = static_cast<size_t>(std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(span, 1)));
  host.parallel_for(static_cast<size_t>(N * group), grain, [&](size_t begin, size_t end) {
    for (size_t ng = begin; ng < end; ++ng) {
      const int64_t base = static_cast<int64_t>(ng) * span;
      double mean = 0, var = 0;
      moments(x + base, span, &mean, &var);
      const double rstd = 1.0 / std::sqrt(var + eps);
      mean_out[ng] = static_cast<float>(mean);
      rstd_out[ng] = static_cast<float>(rstd);
      const int64_t first_channel = static_cast<int64_t>(ng) % group * per_group;
      for (int64_t k = 0; k < per_group; ++k) {
        const int64_t c = first_channel + k;
        const double w = element(weight, c, 1.0f), b = element(bias, c, 0.0f);
        const auto scale = static_cast<float>(rstd * w), shift = static_cast<float>(b - mean * rstd * w);
        const float* src = x + base + k * HxW;
        float* dst = y + base + k * HxW;
        for (int64_t i = 0; i < HxW; ++i) dst[i] = src[i] * scale + shift;
      }
    }
  });
  return nullptr;
}

namespace {

// Batch norm with statistics: from the batch when `use_batch_stats`, else from the
// running tensors. Training updates the running tensors (momentum, unbiased variance).
et_error* batch_norm(const char* op, const et_tensor& input, const et_tensor* weight, const et_tensor* bias,
                     et_tensor* running_mean, et_tensor* running_var, bool use_batch_stats, double momentum,
                     double eps, et_tensor& out, et_tensor& save_mean, et_tensor& save_invstd) {
  if (et_error* e = check_input(op, input)) return e;
  const int64_t C = input.sizes[1], N = input.sizes[0];
  int64_t inner = 1;
  for (int32_t d = 2; d < input.rank; ++d) inner *= input.sizes[d];
  for (auto [t, name] : {std::pair{static_cast<const et_tensor*>(weight), "weight"},
                         std::pair{static_cast<const et_tensor*>(bias), "bias"},
                         std::pair{static_cast<const et_tensor*>(running_mean), "running_mean"},
                         std::pair{static_cast<const et_tensor*>(running_var), "running_var"}})
    if (et_error* e = check_vector(op, t, name, C)) return e;
  if (et_error* e = resize(op, out, {input.sizes, static_cast<size_t>(input.rank)}, "out")) return e;
  const int64_t stats[1] = {use_batch_stats ? C : 0};
  if (et_error* e = resize(op, save_mean, stats, "save_mean")) return e;
  if (et_error* e = resize(op, save_invstd, stats, "save_invstd")) return e;
  for (auto [t, name] : {std::pair{&out, "out"}, std::pair{&save_mean, "save_mean"}, std::pair{&save_invstd, "save_invstd"}})
    if (et_error* e = check_output(op, *t, name)) return e;
  const int64_t count = N * inner;
  if (use_batch_stats && count == 0 && C > 0)
    return invalid(op, "batch statistics need at least one value per channel, input " + shape_string(input));
  const auto* x = static_cast<const float*>(input.data);
  auto* y = static_cast<float*>(out.data);
  std::vector<double> mean(static_cast<size_t>(C)), invstd(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    double m = 0, v = 0;
    if (use_batch_stats) {
      double sum = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) sum += x[(n * C + c) * inner + i];
      m = sum / static_cast<double>(count);
      double sq = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) {
          const double d = x[(n * C + c) * inner + i] - m;
          sq += d * d;
        }
      v = sq / static_cast<double>(count);
      static_cast<float*>(save_mean.data)[c] = static_cast<float>(m);
      static_cast<float*>(save_invstd.data)[c] = static_cast<float>(1.0 / std::sqrt(v + eps));
      if (running_mean != nullptr && running_var != nullptr) {  // training updates the running statistics
        float& rm = static_cast<float*>(running_mean->data)[c * running_mean->strides[0]];
        float& rv = static_cast<float*>(running_var->data)[c * running_var->strides[0]];
        const double unbiased = count > 1 ? sq / static_cast<double>(count - 1) : v;
        rm = static_cast<float>((1 - momentum) * rm + momentum * m);
        rv = static_cast<float>((1 - momentum) * rv + momentum * unbiased);
      }
    } else {
      m = element(running_mean, c, 0);
      v = element(running_var, c, 1);
    }
    mean[static_cast<size_t>(c)] = m;
    invstd[static_cast<size_t>(c)] = 1.0 / std::sqrt(v + eps);
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const double w = element(weight, c, 1.0f), b = element(bias, c, 0.0f);
      const auto scale = static_cast<float>(invstd[static_cast<size_t>(c)] * w);
      const auto shift = static_cast<float>(b - mean[static_cast<size_t>(c)] * invstd[static_cast<size_t>(c)] * w);
      const float* src = x + (n * C + c) * inner;
      float* dst = y + (n * C + c) * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] * scale + shift;
    }
  return nullptr;
}

}  // namespace

// _native_batch_norm_legit.out(input, weight?, bias?, running_mean, running_var, bool training, float momentum,
//                              float eps, *, out, save_mean, save_invstd) -> (out, save_mean, save_invstd)
et_error* batch_norm_legit_out(Call call, const Tensor& input, const Tensor* weight, const Tensor* bias,
                               Tensor& running_mean, Tensor& running_var, bool training, double momentum, double eps,
                               Tensor& out, Tensor& save_mean, Tensor& save_invstd) {
  return batch_norm(call.op, input, weight, bias, &running_mean, &running_var, training, momentum, eps, out, save_mean,
                    save_invstd);
}

// _native_batch_norm_legit.no_stats_out(input, weight?, bias?, bool training, float momentum, float eps,
//                                       *, out, save_mean, save_invstd): always the batch's statistics.
et_error* batch_norm_no_stats_out(Call call, const Tensor& input, const Tensor* weight, const Tensor* bias,
                                  bool training, double momentum, double eps, Tensor& out, Tensor& save_mean,
                                  Tensor& save_invstd) {
  return batch_norm(call.op, input, weight, bias, nullptr, nullptr, true, momentum, eps, out, save_mean, save_invstd);
}

}  // namespace etrt::kernels::linalg

namespace etrt::kernels {

std::span<const KernelDef> normalization_stats_kernels() {
  using namespace linalg;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_NORMALIZATION_STATS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
