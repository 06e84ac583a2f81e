// Pairwise p-norm distances: _cdist_forward (between the rows of two batched
// matrices) and _pdist_forward (between the rows of one matrix, upper triangle),
// accumulated in double. p = 0 counts differing entries, p = inf takes the max.
#include <cmath>
#include <limits>
#include <vector>

#include "pointwise_common.h"

namespace etrt::kernels::pw {
namespace {

double distance(const double* a, const double* b, int64_t m, double p) {
  double total = 0;
  for (int64_t k = 0; k < m; ++k) {
    const double d = std::fabs(a[k] - b[k]);
    if (p == 0) total += d != 0;
    else if (std::isinf(p)) total = std::max(total, d);
    else if (p == 1) total += d;
    else if (p == 2) total += d * d;
    else total += std::pow(d, p);
  }
  if (p == 0 || p == 1 || std::isinf(p)) return total;
  return p == 2 ? std::sqrt(total) : std::pow(total, 1.0 / p);
}

et_error* check_float_matrix(const char* op, const et_tensor& t, const char* name) {
  ETRT_TRY(check_data(op, t, name));
  ETRT_TRY(check_float(op, t, name));
  if (t.rank < 2) return invalid(op, std::string(name) + " must have at least 2 dims, got shape " + shape_string(t));
  return nullptr;
}

// _cdist_forward.out(x1 [*, P, M], x2 [*, R, M], float p, int? compute_mode, *, out [*, P, R])
et_error* cdist_out(Call call, const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode,
                    Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_float_matrix(op, x1, "x1"));
  ETRT_TRY(check_float_matrix(op, x2, "x2"));
  if (!(p >= 0)) return invalid(op, "p must be non-negative, got " + std::to_string(p));
  if (x1.dtype != x2.dtype || out.dtype != x1.dtype)
    return invalid(op, "x1, x2 and out must have the same dtype");
  const int64_t M = x1.sizes[x1.rank - 1], P = x1.sizes[x1.rank - 2], R = x2.sizes[x2.rank - 2];
  if (x2.sizes[x2.rank - 1] != M)
    return invalid(op, "x1 " + shape_string(x1) + " and x2 " + shape_string(x2) + " must have the same last dim");
  int64_t batch[ET_MAX_RANK], brank = 0;
  if (!broadcast_shapes(x1.sizes, x1.rank - 2, x2.sizes, x2.rank - 2, batch, &brank))
    return invalid(op, "the batch dims of x1 " + shape_string(x1) + " and x2 " + shape_string(x2) + " do not broadcast");
  int64_t shape[ET_MAX_RANK];
  std::copy(batch, batch + brank, shape);
  shape[brank] = P, shape[brank + 1] = R;
  ETRT_TRY(resize_out(op, out, shape, brank + 2));
  const size_t total = etrt::plugin::numel(out);
  if (total == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  // Both inputs broadcast to the batch, dense in double.
  auto dense = [&](const et_tensor& t, int64_t rows, std::vector<double>* values) {
    int64_t full[ET_MAX_RANK];
    std::copy(batch, batch + brank, full);
    full[brank] = rows, full[brank + 1] = M;
    const View wide = view_of(t).broadcast_to(static_cast<int32_t>(brank + 2), full);
    int64_t n = 1;
    for (int32_t i = 0; i < wide.rank; ++i) n *= full[i];
    values->resize(static_cast<size_t>(n));
    if (n > 0) copy_view(contiguous_view(ET_DTYPE_FLOAT64, wide.rank, full, values->data()), wide);
  };
  std::vector<double> a, b, result(total);
  dense(x1, P, &a);
  dense(x2, R, &b);
  const int64_t batches = static_cast<int64_t>(total) / (P * R);
  for (int64_t n = 0; n < batches; ++n)
    for (int64_t i = 0; i < P; ++i)
      for (int64_t j = 0; j < R; ++j)
        result[static_cast<size_t>((n * P + i) * R + j)] =
            distance(a.data() + (n * P + i) * M, b.data() + (n * R + j) * M, M, p);
  copy_view(view_of(out), contiguous_view(ET_DTYPE_FLOAT64, out.rank, out.sizes, result.data()));
  return nullptr;
}

// _pdist_forward.out(self [N, M], float p=2, *, out [N (N - 1) / 2]): rows i < j, row-major.
et_error* pdist_out(Call call, const Tensor& self, double p, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_float_matrix(op, self, "self"));
  if (self.rank != 2) return invalid(op, "self must be 2-D, got shape " + shape_string(self));
  if (!(p >= 0)) return invalid(op, "p must be non-negative, got " + std::to_string(p));
  if (out.dtype != self.dtype) return invalid(op, "out must have self's dtype");
  const int64_t N = self.sizes[0], M = self.sizes[1];
  const int64_t pairs = N * (N - 1) / 2;
  ETRT_TRY(resize_out(op, out, &pairs, 1));
  if (pairs == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  std::vector<double> x(static_cast<size_t>(N * M)), result;
  copy_view(contiguous_view(ET_DTYPE_FLOAT64, 2, self.sizes, x.data()), view_of(self));
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = i + 1; j < N; ++j) result.push_back(distance(x.data() + i * M, x.data() + j * M, M, p));
  copy_view(view_of(out), contiguous_view(ET_DTYPE_FLOAT64, 1, &pairs, result.data()));
  return nullptr;
}

}  // namespace
}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> distance_ops_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_DISTANCE_OPS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
