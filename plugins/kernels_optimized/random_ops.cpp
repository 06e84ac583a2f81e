// Operators that draw random numbers: rand, randn and native_dropout. Each call
// draws from a generator seeded once per process (like ExecuTorch's portable
// kernels, results are not PyTorch's stream: programs can only rely on the
// distribution).
#include <mutex>
#include <random>
#include <vector>

#include "pointwise_common.h"

namespace etrt::kernels::pw {
namespace {

// Draws `n` values of `dist` under a lock (kernels may run on several threads).
template <typename Dist>
std::vector<double> draw(size_t n, Dist dist) {
  static std::mutex mutex;
  static std::mt19937_64 generator(0x5eed);
  std::vector<double> values(n);
  std::lock_guard<std::mutex> lock(mutex);
  for (double& v : values) v = dist(generator);
  return values;
}

template <typename Dist>
et_error* random_out(const char* op, IntArrayRef size, Dist dist, et_tensor& out) {
  if (size.size() > ET_MAX_RANK) return invalid(op, "size has more than 16 dims");
  for (int64_t s : size)
    if (s < 0) return invalid(op, "size " + list_str(size) + " has a negative dim");
  if (!is_float(out.dtype) || !is_storage_supported(out.dtype))
    return unsupported(op, std::string("output dtype ") + dtype_name(out.dtype) + " is not supported (float32, float64)");
  ETRT_TRY(resize_out(op, out, size.data(), static_cast<int64_t>(size.size())));
  const size_t n = etrt::plugin::numel(out);
  if (n == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  std::vector<double> values = draw(n, dist);
  copy_view(view_of(out), contiguous_view(ET_DTYPE_FLOAT64, out.rank, out.sizes, values.data()));
  return nullptr;
}

// rand.out(SymInt[] size, *, out): uniform on [0, 1).
et_error* rand_out(Call call, IntArrayRef size, Tensor& out) {
  return random_out(call.op, size, std::uniform_real_distribution<double>(0.0, 1.0), out);
}

// randn.out(SymInt[] size, *, out): standard normal.
et_error* randn_out(Call call, IntArrayRef size, Tensor& out) {
  return random_out(call.op, size, std::normal_distribution<double>(0.0, 1.0), out);
}

// native_dropout.out(input, float p, bool? train, *, out0, out1) -> (out0, out1): with train (or None),
// zeroes each element with probability p and scales the rest by 1 / (1 - p); out1 is the bool keep-mask.
// Without train the input is copied and the mask is all true.
et_error* native_dropout_out(Call call, const Tensor& input, double p, std::optional<bool> train, Tensor& out,
                             Tensor& mask) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, input, "input"));
  if (!is_float(input.dtype) || !is_storage_supported(input.dtype))
    return unsupported(op, std::string("input dtype ") + dtype_name(input.dtype) + " is not supported (float32, float64)");
  if (!(p >= 0 && p <= 1)) return invalid(op, "dropout probability must be in [0, 1], got " + std::to_string(p));
  if (out.dtype != input.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype");
  if (mask.dtype != ET_DTYPE_BOOL) return invalid(op, std::string("mask dtype must be bool, got ") + dtype_name(mask.dtype));
  ETRT_TRY(resize_out(op, out, input.sizes, input.rank));
  ETRT_TRY(resize_out(op, mask, input.sizes, input.rank));
  const size_t n = etrt::plugin::numel(input);
  if (n == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out0"));
  ETRT_TRY(check_data(op, mask, "out1"));
  std::vector<double> x(n);
  copy_view(contiguous_view(ET_DTYPE_FLOAT64, input.rank, input.sizes, x.data()), view_of(input));
  std::vector<uint8_t> keep(n, 1);
  if (train.value_or(true)) {
    std::vector<double> u = draw(n, std::uniform_real_distribution<double>(0.0, 1.0));
    const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
    for (size_t i = 0; i < n; ++i) {
      keep[i] = u[i] >= p;
      x[i] = keep[i] ? x[i] * scale : 0.0;
    }
  }
  copy_view(view_of(out), contiguous_view(ET_DTYPE_FLOAT64, input.rank, input.sizes, x.data()));
  copy_view(view_of(mask), contiguous_view(ET_DTYPE_BOOL, input.rank, input.sizes, keep.data()));
  return nullptr;
}

}  // namespace
}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> random_ops_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_RANDOM_OPS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
