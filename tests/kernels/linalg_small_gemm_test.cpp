// The packing-free small-problem SGEMM path (plugins/kernels_optimized/small_gemm.cpp, M * N * K <= 2^17) through
// aten::mm.out, aten::addmm.out, aten::linear.out and aten::bmm.out, against a naive double-precision reference:
// M, N, K over 1..40 (every row-block count 1..6, column remainders 1..16, k tails 1..8), each operand plain or
// transposed (outer-product tiles when B's rows are contiguous, dot-product tiles when A's rows and B's columns
// are, the packed path otherwise), addmm's alpha and beta (beta 0 over NaN, 1, 0.5), the attention shapes of a
// small transformer (bmm 8 x 8 x 8 with q @ k^T), and outputs whose rows are wider than the tile.
#include <cmath>
#include <limits>
#include <vector>

#include "linalg_test_support.h"

namespace {

using etrt_test::scalar;
using etrt_test::scalar_double;
using linalg_test::all_near;
using linalg_test::call;
using linalg_test::make;
using linalg_test::Tensor;

// A [rows, cols] operand; transposed: stored [cols, rows] and viewed through strides {1, rows}.
std::unique_ptr<Tensor> operand(int64_t rows, int64_t cols, bool transposed, uint32_t seed) {
  auto t = make(transposed ? std::vector<int64_t>{cols, rows} : std::vector<int64_t>{rows, cols}, seed);
  if (transposed) {
    t->sizes = {rows, cols};
    t->strides = {1, rows};
    t->t.sizes = t->sizes.data();
    t->t.strides = t->strides.data();
  }
  return t;
}

double at(const Tensor& t, int64_t i, int64_t j) { return t.data[static_cast<size_t>(i * t.strides[0] + j * t.strides[1])]; }

std::vector<double> reference(const Tensor& a, const Tensor& b, int64_t M, int64_t N, int64_t K) {
  std::vector<double> c(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < K; ++k) s += at(a, i, k) * at(b, k, j);
      c[static_cast<size_t>(i * N + j)] = s;
    }
  return c;
}

const std::vector<int64_t> kRows = {1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 16, 19, 25, 37, 40};
const std::vector<int64_t> kCols = {1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 33, 40};
const std::vector<int64_t> kInner = {1, 2, 5, 7, 8, 9, 16, 17, 32, 40};

TEST(SmallGemm, MmMatchesReferenceForEveryLayout) {
  uint32_t seed = 1;
  for (int layout = 0; layout < 4; ++layout) {
    const bool ta = (layout & 1) != 0, tb = (layout & 2) != 0;
    for (int64_t M : kRows)
      for (int64_t N : kCols)
        for (int64_t K : kInner) {
          auto a = operand(M, K, ta, seed++), b = operand(K, N, tb, seed++);
          Tensor out({M, N});
          ASSERT_EQ(call("aten::mm.out", {&a->v, &b->v, &out.v}), "");
          ASSERT_TRUE(all_near(out, reference(*a, *b, M, N, K), K))
              << M << "x" << N << "x" << K << " A " << (ta ? "transposed" : "plain") << ", B "
              << (tb ? "transposed" : "plain");
        }
  }
}

// out = beta * self + alpha * A @ B with self [M, N]; beta == 0 must not read self (NaN there stays out).
TEST(SmallGemm, AddmmAppliesAlphaAndBeta) {
  struct Coefficients {
    double alpha, beta;
  };
  const Coefficients kCases[] = {{1.0, 1.0}, {2.0, 0.5}, {-0.75, 0.0}, {1.0, 0.0}, {0.5, -2.0}};
  uint32_t seed = 1000;
  for (const Coefficients& co : kCases)
    for (int64_t M : {3, 7, 16})
      for (int64_t N : {5, 16, 29, 96})
        for (int64_t K : {4, 9, 32})
          for (bool tb : {false, true}) {
            auto a = operand(M, K, false, seed++), b = operand(K, N, tb, seed++), self = make({M, N}, seed++);
            if (co.beta == 0.0) std::fill(self->data.begin(), self->data.end(), std::numeric_limits<float>::quiet_NaN());
            Tensor out({M, N});
            et_value beta = scalar_double(co.beta), alpha = scalar_double(co.alpha);
            ASSERT_EQ(call("aten::addmm.out", {&self->v, &a->v, &b->v, &beta, &alpha, &out.v}), "");
            std::vector<double> expected = reference(*a, *b, M, N, K);
            for (size_t i = 0; i < expected.size(); ++i)
              expected[i] = co.alpha * expected[i] + (co.beta == 0.0 ? 0.0 : co.beta * self->data[i]);
            ASSERT_TRUE(all_near(out, expected, K)) << M << "x" << N << "x" << K << " alpha " << co.alpha << " beta "
                                                    << co.beta << (tb ? ", B transposed" : "");
          }
}

// linear reads weight [N, K] as B = weight^T (columns contiguous): the dot-product tiles; with a bias.
TEST(SmallGemm, LinearWithBiasMatchesReference) {
  uint32_t seed = 5000;
  for (int64_t M : {1, 3, 6, 16, 33})
    for (int64_t N : {1, 4, 6, 32, 39})
      for (int64_t K : {1, 7, 8, 32, 33}) {
        auto x = make({M, K}, seed++), w = make({N, K}, seed++), bias = make({N}, seed++);
        Tensor out({M, N});
        ASSERT_EQ(call("aten::linear.out", {&x->v, &w->v, &bias->v, &out.v}), "");
        std::vector<double> expected(static_cast<size_t>(M * N));
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double s = bias->data[static_cast<size_t>(j)];
            for (int64_t k = 0; k < K; ++k)
              s += static_cast<double>(x->data[static_cast<size_t>(i * K + k)]) * w->data[static_cast<size_t>(j * K + k)];
            expected[static_cast<size_t>(i * N + j)] = s;
          }
        ASSERT_TRUE(all_near(out, expected, K)) << M << "x" << N << "x" << K;
      }
}

// Attention of a small transformer: scores = q @ k^T ([8, 8, 8] x a transposed view) and scores @ v.
TEST(SmallGemm, BmmOfAttentionShapes) {
  const int64_t B = 8, T = 8, D = 8;
  auto q = make({B, T, D}, 1), k = make({B, T, D}, 2);
  // k^T as a view: [B, D, T] with strides {T * D, 1, D}.
  k->sizes = {B, D, T};
  k->strides = {T * D, 1, D};
  k->t.sizes = k->sizes.data();
  k->t.strides = k->strides.data();
  Tensor scores({B, T, T});
  ASSERT_EQ(call("aten::bmm.out", {&q->v, &k->v, &scores.v}), "");
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) {
        double s = 0.0;
        for (int64_t d = 0; d < D; ++d)
          s += static_cast<double>(q->data[static_cast<size_t>(b * T * D + i * D + d)]) *
               k->data[static_cast<size_t>(b * T * D + j * D + d)];
        const float got = scores.data[static_cast<size_t>(b * T * T + i * T + j)];
        ASSERT_NEAR(got, s, linalg_test::tolerance(s, D)) << b << "," << i << "," << j;
      }
}

}  // namespace
