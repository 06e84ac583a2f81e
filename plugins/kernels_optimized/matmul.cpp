// aten::mm.out, aten::addmm.out, aten::bmm.out, aten::linear.out (float32),
// all through the packed SGEMM of gemm.h. Inputs are read through their
// strides (a transposed operand costs nothing); outputs must be contiguous.
#include <algorithm>
#include <atomic>
#include <string>

#include "gemm.h"
#include "linalg_common.h"

namespace etrt::kernels::linalg {
namespace {

using gemm::Matrix;

et_error* out_of_memory(const char* op) { return fail(ET_ERR_OUT_OF_MEMORY, op, "cannot allocate the packing buffers"); }

// The checks every output of this file gets, after it has its final shape.
et_error* check_out(const char* op, const et_tensor& out) {
  if (et_error* e = expect_dtype(op, out, "out")) return e;
  if (et_error* e = expect_row_major(op, out, "out")) return e;
  return expect_data(op, out, "out");
}

et_error* check_matrix(const char* op, const et_tensor& t, const char* name, int32_t rank) {
  if (et_error* e = expect_dtype(op, t, name)) return e;
  if (t.rank != rank)
    return invalid(op, std::string(name) + " must be a " + std::to_string(rank) + "-D tensor, got shape " +
                           shape_string(t));
  return expect_data(op, t, name);
}

Matrix view2d(const et_tensor& t, int32_t row_dim, int32_t col_dim, int64_t offset = 0) {
  return {static_cast<const float*>(t.data) + offset, t.strides[row_dim], t.strides[col_dim]};
}

bool all_ok(const std::atomic<bool>& ok) { return ok.load(std::memory_order_relaxed); }

}  // namespace

// mm.out(self, mat2, *, out) -> args [self, mat2, out, out]
et_error* mm_out(Call call, const Tensor& self, const Tensor& mat2, Tensor& out_arg) {
  const char* op = call.op;
  const et_tensor *a = &self, *b = &mat2;
  et_tensor* out = &out_arg;
  if (et_error* e = check_matrix(op, *a, "self", 2)) return e;
  if (et_error* e = check_matrix(op, *b, "mat2", 2)) return e;
  if (a->sizes[1] != b->sizes[0])
    return invalid(op, "inner dimensions differ: self " + shape_string(*a) + " @ mat2 " + shape_string(*b));
  const int64_t M = a->sizes[0], K = a->sizes[1], N = b->sizes[1];
  const int64_t shape[2] = {M, N};
  if (et_error* e = resize(op, *out, shape)) return e;
  if (et_error* e = check_out(op, *out)) return e;
  if (!gemm::sgemm(M, N, K, 1.0f, view2d(*a, 0, 1), view2d(*b, 0, 1), 0.0f, static_cast<float*>(out->data), N))
    return out_of_memory(op);
  return nullptr;
}

// addmm.out(self, mat1, mat2, *, beta=1, alpha=1, out) -> args [self, mat1, mat2, beta, alpha, out, out]
et_error* addmm_out(Call call, const Tensor& self_arg, const Tensor& mat1, const Tensor& mat2, Scalar beta_arg,
                    Scalar alpha_arg, Tensor& out_arg) {
  const char* op = call.op;
  const et_tensor *self = &self_arg, *a = &mat1, *b = &mat2;
  et_tensor* out = &out_arg;
  const double beta = beta_arg.to_double(), alpha = alpha_arg.to_double();
  if (et_error* e = check_matrix(op, *a, "mat1", 2)) return e;
  if (et_error* e = check_matrix(op, *b, "mat2", 2)) return e;
  if (et_error* e = expect_dtype(op, *self, "self")) return e;
  if (et_error* e = expect_data(op, *self, "self")) return e;
  if (a->sizes[1] != b->sizes[0])
    return invalid(op, "inner dimensions differ: mat1 " + shape_string(*a) + " @ mat2 " + shape_string(*b));
  const int64_t M = a->sizes[0], K = a->sizes[1], N = b->sizes[1];
  // self broadcasts to [M, N] (numpy rules, rank <= 2).
  if (self->rank > 2)
    return invalid(op, "self " + shape_string(*self) + " does not broadcast to [" + std::to_string(M) + ", " +
                           std::to_string(N) + "]");
  int64_t s_rows = 1, s_cols = 1, s_rs = 0, s_cs = 0;
  if (self->rank >= 1) s_cols = self->sizes[self->rank - 1], s_cs = self->strides[self->rank - 1];
  if (self->rank == 2) s_rows = self->sizes[0], s_rs = self->strides[0];
  if ((s_rows != 1 && s_rows != M) || (s_cols != 1 && s_cols != N))
    return invalid(op, "self " + shape_string(*self) + " does not broadcast to [" + std::to_string(M) + ", " +
                           std::to_string(N) + "]");
  if (s_rows == 1) s_rs = 0;
  if (s_cols == 1) s_cs = 0;
  const int64_t shape[2] = {M, N};
  if (et_error* e = resize(op, *out, shape)) return e;
  if (et_error* e = check_out(op, *out)) return e;

  auto* c = static_cast<float*>(out->data);
  const auto* s = static_cast<const float*>(self->data);
  const float fbeta = static_cast<float>(beta);
  float gemm_beta = 0.0f;
  if (beta != 0.0 && M > 0 && N > 0) {  // beta == 0 ignores self (even NaN), as PyTorch does
    auto fill = [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        float* row = c + i * N;
        const float* srow = s + static_cast<int64_t>(i) * s_rs;
        if (s_cs == 1) {  // a bias row: its own loop, so it vectorises
          for (int64_t j = 0; j < N; ++j) row[j] = fbeta * srow[j];
        } else {
          for (int64_t j = 0; j < N; ++j) row[j] = fbeta * srow[j * s_cs];
        }
      }
    };
    host.parallel_for(static_cast<size_t>(M), std::max<size_t>(1, 16384 / static_cast<size_t>(N)), fill);
    gemm_beta = 1.0f;
  }
  if (!gemm::sgemm(M, N, K, static_cast<float>(alpha), view2d(*a, 0, 1), view2d(*b, 0, 1), gemm_beta, c, N))
    return out_of_memory(op);
  return nullptr;
}

// bmm.out(self, mat2, *, out) -> args [self, mat2, out, out]
et_error* bmm_out(Call call, const Tensor& self, const Tensor& mat2, Tensor& out_arg) {
  const char* op = call.op;
  const et_tensor *a = &self, *b = &mat2;
  et_tensor* out = &out_arg;
  if (et_error* e = check_matrix(op, *a, "self", 3)) return e;
  if (et_error* e = check_matrix(op, *b, "mat2", 3)) return e;
  if (a->sizes[0] != b->sizes[0])
    return invalid(op, "batch sizes differ: self " + shape_string(*a) + ", mat2 " + shape_string(*b));
  if (a->sizes[2] != b->sizes[1])
    return invalid(op, "inner dimensions differ: self " + shape_string(*a) + " @ mat2 " + shape_string(*b));
  const int64_t batch = a->sizes[0], M = a->sizes[1], K = a->sizes[2], N = b->sizes[2];
  const int64_t shape[3] = {batch, M, N};
  if (et_error* e = resize(op, *out, shape)) return e;
  if (et_error* e = check_out(op, *out)) return e;
  if (batch == 0 || M == 0 || N == 0) return nullptr;

  auto* c = static_cast<float*>(out->data);
  std::atomic<bool> ok{true};
  auto one = [&](int64_t i, bool parallel) {
    if (!gemm::sgemm(M, N, K, 1.0f, view2d(*a, 1, 2, i * a->strides[0]), view2d(*b, 1, 2, i * b->strides[0]), 0.0f,
                     c + i * M * N, N, parallel))
      ok.store(false, std::memory_order_relaxed);
  };
  const size_t threads = host.api()->num_threads();
  const int64_t per = M * N * std::max<int64_t>(K, 1);
  const bool over_batches = threads > 1 && batch * per >= gemm::kParallelThreshold &&
                            (batch % static_cast<int64_t>(threads) == 0 || batch >= 4 * static_cast<int64_t>(threads) ||
                             per < gemm::kParallelThreshold);
  if (over_batches) {
    host.parallel_for(static_cast<size_t>(batch), 1, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) one(static_cast<int64_t>(i), false);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i, true);
  }
  return all_ok(ok) ? nullptr : out_of_memory(op);
}

// linear.out(input, weight, Tensor? bias, *, out) -> args [input, weight, bias, out, out]
// out[..., n] = sum_k input[..., k] * weight[n, k] + bias[n]
et_error* linear_out(Call call, const Tensor& input, const Tensor& weight, const Tensor* bias, Tensor& out_arg) {
  const char* op = call.op;
  const et_tensor *x = &input, *w = &weight;
  et_tensor* out = &out_arg;
  if (et_error* e = expect_dtype(op, *x, "input")) return e;
  if (et_error* e = expect_data(op, *x, "input")) return e;
  if (et_error* e = check_matrix(op, *w, "weight", 2)) return e;
  if (x->rank < 1) return invalid(op, "input must have at least one dimension, got a scalar");
  const int64_t K = x->sizes[x->rank - 1], N = w->sizes[0];
  if (w->sizes[1] != K)
    return invalid(op, "input " + shape_string(*x) + " has " + std::to_string(K) + " features but weight " +
                           shape_string(*w) + " expects " + std::to_string(w->sizes[1]));
  if (bias != nullptr) {
    if (et_error* e = expect_dtype(op, *bias, "bias")) return e;
    if (et_error* e = expect_data(op, *bias, "bias")) return e;
    const bool scalar_like = numel(*bias) == 1 && bias->rank <= 1;
    if (!scalar_like && !(bias->rank == 1 && bias->sizes[0] == N))
      return invalid(op, "bias " + shape_string(*bias) + " must have shape [" + std::to_string(N) + "]");
  }
  int64_t shape[ET_MAX_RANK];
  int64_t M = 1;
  for (int32_t d = 0; d + 1 < x->rank; ++d) shape[d] = x->sizes[d], M *= x->sizes[d];
  shape[x->rank - 1] = N;
  if (et_error* e = resize(op, *out, {shape, static_cast<size_t>(x->rank)})) return e;
  if (et_error* e = check_out(op, *out)) return e;
  // The rows of input as an [M, K] matrix: any strides for rank <= 2, contiguous otherwise.
  Matrix a{static_cast<const float*>(x->data), K, 1};
  if (x->rank == 2) a = view2d(*x, 0, 1);
  else if (x->rank == 1) a.cs = x->strides[0];
  else if (!etrt::plugin::is_contiguous(*x))
    return unsupported(op, "input " + shape_string(*x) + " with dim order " + dim_order_string(*x) +
                               " is not contiguous (rank > 2 inputs must be)");
  if (M == 0 || N == 0) return nullptr;

  auto* c = static_cast<float*>(out->data);
  float beta = 0.0f;
  if (bias != nullptr) {
    const auto* bv = static_cast<const float*>(bias->data);
    const int64_t bstride = numel(*bias) == 1 ? 0 : bias->strides[0];
    host.parallel_for(static_cast<size_t>(M), std::max<size_t>(1, 16384 / static_cast<size_t>(N)),
                      [&](size_t begin, size_t end) {
                        for (size_t i = begin; i < end; ++i)
                          for (int64_t j = 0; j < N; ++j) c[i * N + j] = bv[j * bstride];
                      });
    beta = 1.0f;
  }
  // B[k, n] = weight[n, k]: the transposed view of weight.
  const Matrix b{static_cast<const float*>(w->data), w->strides[1], w->strides[0]};
  if (!gemm::sgemm(M, N, K, 1.0f, a, b, beta, c, N)) return out_of_memory(op);
  return nullptr;
}

}  // namespace etrt::kernels::linalg

namespace etrt::kernels {

std::span<const KernelDef> matmul_kernels() {
  using namespace linalg;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_MATMUL
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
