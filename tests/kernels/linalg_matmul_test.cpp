// aten::mm.out, aten::addmm.out, aten::bmm.out and aten::linear.out of the
// kernels_optimized plugin against a naive double-precision reference, over
// seeded random shapes (odd sizes that do not divide the 6 x 16 tile, K = 1,
// M or N = 1 or 2 for the thin paths, empty tensors, several K blocks,
// parallel sizes), broadcasting of addmm's self, strided operands, resizing
// outputs, and one test per rejection rule.
// Tolerance: see linalg_test::tolerance (1e-4 relative + 1e-5 * sqrt(K) absolute).
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <random>
#include <vector>

#include "linalg_test_support.h"

using ::testing::HasSubstr;

namespace {

using etrt_test::scalar;
using etrt_test::scalar_double;
using linalg_test::all_near;
using linalg_test::call;
using linalg_test::IntList;
using linalg_test::make;
using linalg_test::null_value;
using linalg_test::Tensor;

struct Shape {
  int64_t M, N, K;
};

// element (i, j) of a 2-D tensor read through its strides, with an offset.
double at2(const Tensor& t, int64_t i, int64_t j, int64_t offset = 0) {
  return t.data[static_cast<size_t>(offset + i * t.strides[t.strides.size() - 2] + j * t.strides.back())];
}

std::vector<double> reference_mm(const Tensor& a, const Tensor& b, int64_t M, int64_t N, int64_t K,
                                 int64_t a_off = 0, int64_t b_off = 0) {
  std::vector<double> c(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < K; ++k) s += at2(a, i, k, a_off) * at2(b, k, j, b_off);
      c[static_cast<size_t>(i * N + j)] = s;
    }
  return c;
}

// Shapes around the 6 x 16 register tile, the thin paths (M or N <= 2), K = 1,
// several KC = 256 blocks, M above MC = 144, N above NC = 4080, and sizes big
// enough to use the thread pool.
const std::vector<Shape> kShapes = {
    {1, 1, 1},    {1, 7, 5},     {5, 1, 9},      {2, 33, 17},  {33, 2, 17},  {6, 16, 8},   {7, 17, 9},
    {13, 33, 1},  {3, 3, 3},     {5, 15, 4},     {64, 64, 64}, {65, 31, 257}, {150, 70, 40}, {1, 600, 300},
    {600, 1, 300}, {97, 211, 513}, {6, 4100, 8}, {256, 256, 256}, {37, 129, 1}};

TEST(LinalgMm, MatchesReferenceOverRandomShapes) {
  uint32_t seed = 1;
  for (const Shape& s : kShapes) {
    auto a = make({s.M, s.K}, seed++), b = make({s.K, s.N}, seed++);
    Tensor out({s.M, s.N});
    ASSERT_EQ(call("aten::mm.out", {&a->v, &b->v, &out.v}), "") << s.M << "x" << s.N << "x" << s.K;
    EXPECT_TRUE(all_near(out, reference_mm(*a, *b, s.M, s.N, s.K), s.K)) << s.M << "x" << s.N << "x" << s.K;
  }
}

// Which micro-kernel the process picked (the plugin logs it once, at debug level, at the first
// SGEMM): the fast one for this CPU (NEON on aarch64, AVX2+FMA where the CPU has them), or the
// portable one under ETRT_GEMM_ISA=generic. Run in processes of its own (ctest linalg_matmul_isa*).
TEST(GemmMicroKernel, IsTheFastOneForThisCpuUnlessForcedPortable) {
  const char* level = std::getenv("ETRT_LOG_LEVEL");
  ASSERT_TRUE(level != nullptr && std::string(level) == "debug") << "needs ETRT_LOG_LEVEL=debug";
  std::string expected = "generic";
  const char* forced = std::getenv("ETRT_GEMM_ISA");
  if (forced == nullptr || std::string(forced) != "generic") {
#if defined(__aarch64__)
    expected = "neon";
#elif defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) expected = "avx2+fma";
#endif
  }
  auto a = make({7, 9}, 1), b = make({9, 17}, 2);
  Tensor out({7, 17});
  ::testing::internal::CaptureStderr();
  const std::string error = call("aten::mm.out", {&a->v, &b->v, &out.v});
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(error, "");
  EXPECT_THAT(log, HasSubstr("SGEMM micro-kernel " + expected + "\n"));
  EXPECT_TRUE(all_near(out, reference_mm(*a, *b, 7, 17, 9), 9));
}

TEST(LinalgMm, EmptyAndZeroInnerDimension) {
  auto a = make({0, 4}, 1), b = make({4, 3}, 2);
  Tensor out({0, 3});
  EXPECT_EQ(call("aten::mm.out", {&a->v, &b->v, &out.v}), "");
  auto c = make({3, 0}, 3), d = make({0, 5}, 4);
  Tensor out2({3, 5});
  std::fill(out2.data.begin(), out2.data.end(), std::numeric_limits<float>::quiet_NaN());
  ASSERT_EQ(call("aten::mm.out", {&c->v, &d->v, &out2.v}), "");
  for (float x : out2.data) EXPECT_EQ(x, 0.0f);  // an empty sum is zero
}

TEST(LinalgMm, TransposedOperandsAreReadThroughTheirStrides) {
  // self is a [20, 30] view of [30, 20] storage, mat2 a [30, 19] view of [19, 30] storage.
  auto a = make({20, 30}, 5), b = make({30, 19}, 6);
  a->strides = {1, 20};
  a->t.strides = a->strides.data();
  b->strides = {1, 30};
  b->t.strides = b->strides.data();
  Tensor out({20, 19});
  ASSERT_EQ(call("aten::mm.out", {&a->v, &b->v, &out.v}), "");
  EXPECT_TRUE(all_near(out, reference_mm(*a, *b, 20, 19, 30), 30));
}

TEST(LinalgMm, DynamicOutputIsResized) {
  auto a = make({7, 9}, 7), b = make({9, 11}, 8);
  auto out = linalg_test::dynamic_out({10, 12}, 120);
  ASSERT_EQ(call("aten::mm.out", {&a->v, &b->v, &out->v}), "");
  EXPECT_EQ(out->sizes, (std::vector<int64_t>{7, 11}));
  EXPECT_TRUE(all_near(*out, reference_mm(*a, *b, 7, 11, 9), 9));
}

TEST(LinalgMm, RejectsWrongArgumentCount) {
  auto a = make({2, 3}, 1), b = make({3, 4}, 2);
  EXPECT_THAT(linalg_test::call_exact("aten::mm.out", {&a->v, &b->v, &b->v}), HasSubstr("expected 4 arguments, got 3"));
}

TEST(LinalgMm, RejectsWrongDtype) {
  auto a = make({2, 3}, 1), b = make({3, 4}, 2);
  Tensor out({2, 4});
  b->t.dtype = ET_DTYPE_INT32;
  EXPECT_THAT(call("aten::mm.out", {&a->v, &b->v, &out.v}), HasSubstr("mat2 has dtype int32, which is not supported"));
}

TEST(LinalgMm, RejectsMismatchedInnerDimension) {
  auto a = make({2, 3}, 1), b = make({4, 5}, 2);
  Tensor out({2, 5});
  EXPECT_THAT(call("aten::mm.out", {&a->v, &b->v, &out.v}),
              HasSubstr("inner dimensions differ: self [2, 3] @ mat2 [4, 5]"));
}

TEST(LinalgMm, RejectsNonMatrixInput) {
  auto a = make({2, 3, 1}, 1), b = make({3, 4}, 2);
  Tensor out({2, 4});
  EXPECT_THAT(call("aten::mm.out", {&a->v, &b->v, &out.v}), HasSubstr("self must be a 2-D tensor, got shape [2, 3, 1]"));
}

TEST(LinalgMm, RejectsStaticOutputOfTheWrongShape) {
  auto a = make({2, 3}, 1), b = make({3, 4}, 2);
  Tensor out({2, 5});
  EXPECT_THAT(call("aten::mm.out", {&a->v, &b->v, &out.v}),
              HasSubstr("out has the static shape [2, 5], the result has shape [2, 4]"));
}

TEST(LinalgMm, RejectsOutputWithOtherDimOrder) {
  auto a = make({2, 3}, 1), b = make({3, 4}, 2);
  Tensor out({2, 4});
  out.order = {1, 0};
  out.strides = {1, 2};
  out.t.dim_order = out.order.data();
  out.t.strides = out.strides.data();
  EXPECT_THAT(call("aten::mm.out", {&a->v, &b->v, &out.v}), HasSubstr("out has dim order (1, 0)"));
}

TEST(LinalgMm, RejectsNonTensorArgument) {
  auto a = make({2, 3}, 1);
  Tensor out({2, 4});
  et_value two = scalar(2);
  EXPECT_THAT(call("aten::mm.out", {&a->v, &two, &out.v}), HasSubstr("aten::mm.out: argument 1 'mat2' must be a Tensor, got int"));
}

// ------------------------------------------------------------------ addmm
std::vector<double> reference_addmm(const Tensor& self, const Tensor& a, const Tensor& b, int64_t M, int64_t N,
                                    int64_t K, double beta, double alpha) {
  std::vector<double> c = reference_mm(a, b, M, N, K);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0.0;
      if (self.sizes.empty()) s = self.data[0];
      else if (self.sizes.size() == 1) s = self.data[static_cast<size_t>(self.sizes[0] == 1 ? 0 : j)];
      else s = self.at({self.sizes[0] == 1 ? 0 : i, self.sizes[1] == 1 ? 0 : j});
      double& x = c[static_cast<size_t>(i * N + j)];
      x = alpha * x + (beta == 0.0 ? 0.0 : beta * s);
    }
  return c;
}

TEST(LinalgAddmm, BroadcastsSelfAndScalesOverRandomShapes) {
  uint32_t seed = 100;
  const std::vector<std::vector<int64_t>> self_shapes = {{-1}, {1, -1}, {-2, 1}, {-2, -1}, {}, {1}, {1, 1}};
  for (const Shape& s : kShapes) {
    for (const auto& pattern : self_shapes) {
      std::vector<int64_t> shape;
      for (int64_t d : pattern) shape.push_back(d == -1 ? s.N : d == -2 ? s.M : d);
      auto self = make(shape, seed++), a = make({s.M, s.K}, seed++), b = make({s.K, s.N}, seed++);
      Tensor out({s.M, s.N});
      et_value beta = scalar_double(0.5), alpha = scalar(2);
      ASSERT_EQ(call("aten::addmm.out", {&self->v, &a->v, &b->v, &beta, &alpha, &out.v}), "");
      EXPECT_TRUE(all_near(out, reference_addmm(*self, *a, *b, s.M, s.N, s.K, 0.5, 2.0), s.K))
          << s.M << "x" << s.N << "x" << s.K << " self rank " << shape.size();
    }
  }
}

TEST(LinalgAddmm, BetaZeroIgnoresSelfEvenNaN) {
  auto self = make({4}, 1), a = make({3, 5}, 2), b = make({5, 4}, 3);
  std::fill(self->data.begin(), self->data.end(), std::numeric_limits<float>::quiet_NaN());
  Tensor out({3, 4});
  et_value beta = scalar(0), alpha = scalar_double(1.5);
  ASSERT_EQ(call("aten::addmm.out", {&self->v, &a->v, &b->v, &beta, &alpha, &out.v}), "");
  EXPECT_TRUE(all_near(out, reference_addmm(*self, *a, *b, 3, 4, 5, 0.0, 1.5), 5));
}

TEST(LinalgAddmm, RejectsSelfThatDoesNotBroadcast) {
  auto self = make({3}, 1), a = make({2, 5}, 2), b = make({5, 4}, 3);
  Tensor out({2, 4});
  et_value one = scalar(1);
  EXPECT_THAT(call("aten::addmm.out", {&self->v, &a->v, &b->v, &one, &one, &out.v}),
              HasSubstr("self [3] does not broadcast to [2, 4]"));
}

TEST(LinalgAddmm, RejectsNonScalarAlpha) {
  auto self = make({4}, 1), a = make({2, 5}, 2), b = make({5, 4}, 3);
  Tensor out({2, 4});
  et_value one = scalar(1);
  EXPECT_THAT(call("aten::addmm.out", {&self->v, &a->v, &b->v, &one, &self->v, &out.v}),
              HasSubstr("aten::addmm.out: argument 4 'alpha' must be a Scalar (int, float or bool), got Tensor"));
}

TEST(LinalgAddmm, RejectsMismatchedInnerDimension) {
  auto self = make({4}, 1), a = make({2, 5}, 2), b = make({6, 4}, 3);
  Tensor out({2, 4});
  et_value one = scalar(1);
  EXPECT_THAT(call("aten::addmm.out", {&self->v, &a->v, &b->v, &one, &one, &out.v}),
              HasSubstr("inner dimensions differ: mat1 [2, 5] @ mat2 [6, 4]"));
}

TEST(LinalgAddmm, RejectsWrongArgumentCount) {
  auto self = make({4}, 1), a = make({2, 5}, 2), b = make({5, 4}, 3);
  Tensor out({2, 4});
  EXPECT_THAT(call("aten::addmm.out", {&self->v, &a->v, &b->v, &out.v}), HasSubstr("expected 7 arguments, got 5"));
}

// -------------------------------------------------------------------- bmm
TEST(LinalgBmm, MatchesReferenceOverRandomShapes) {
  uint32_t seed = 300;
  const std::vector<std::pair<int64_t, Shape>> cases = {
      {1, {7, 17, 9}}, {3, {1, 5, 4}}, {4, {16, 16, 64}}, {5, {13, 2, 31}}, {2, {130, 70, 300}}, {8, {33, 45, 20}},
      {3, {64, 64, 1}}};
  for (const auto& [batch, s] : cases) {
    auto a = make({batch, s.M, s.K}, seed++), b = make({batch, s.K, s.N}, seed++);
    Tensor out({batch, s.M, s.N});
    ASSERT_EQ(call("aten::bmm.out", {&a->v, &b->v, &out.v}), "");
    std::vector<double> expected;
    for (int64_t i = 0; i < batch; ++i) {
      auto one = reference_mm(*a, *b, s.M, s.N, s.K, i * s.M * s.K, i * s.K * s.N);
      expected.insert(expected.end(), one.begin(), one.end());
    }
    EXPECT_TRUE(all_near(out, expected, s.K)) << batch << " x " << s.M << "x" << s.N << "x" << s.K;
  }
}

TEST(LinalgBmm, EmptyBatch) {
  auto a = make({0, 3, 4}, 1), b = make({0, 4, 5}, 2);
  Tensor out({0, 3, 5});
  EXPECT_EQ(call("aten::bmm.out", {&a->v, &b->v, &out.v}), "");
}

TEST(LinalgBmm, RejectsMismatchedBatch) {
  auto a = make({2, 3, 4}, 1), b = make({3, 4, 5}, 2);
  Tensor out({2, 3, 5});
  EXPECT_THAT(call("aten::bmm.out", {&a->v, &b->v, &out.v}),
              HasSubstr("batch sizes differ: self [2, 3, 4], mat2 [3, 4, 5]"));
}

TEST(LinalgBmm, RejectsMismatchedInnerDimension) {
  auto a = make({2, 3, 4}, 1), b = make({2, 5, 5}, 2);
  Tensor out({2, 3, 5});
  EXPECT_THAT(call("aten::bmm.out", {&a->v, &b->v, &out.v}), HasSubstr("inner dimensions differ"));
}

TEST(LinalgBmm, RejectsWrongRank) {
  auto a = make({3, 4}, 1), b = make({2, 4, 5}, 2);
  Tensor out({2, 3, 5});
  EXPECT_THAT(call("aten::bmm.out", {&a->v, &b->v, &out.v}), HasSubstr("self must be a 3-D tensor"));
}

// ----------------------------------------------------------------- linear
std::vector<double> reference_linear(const Tensor& x, const Tensor& w, const Tensor* bias, int64_t M, int64_t N,
                                     int64_t K) {
  std::vector<double> c(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = bias ? bias->data[static_cast<size_t>(j)] : 0.0;
      for (int64_t k = 0; k < K; ++k)
        s += static_cast<double>(x.data[static_cast<size_t>(i * K + k)]) * w.data[static_cast<size_t>(j * K + k)];
      c[static_cast<size_t>(i * N + j)] = s;
    }
  return c;
}

TEST(LinalgLinear, MatchesReferenceWithAndWithoutBias) {
  uint32_t seed = 500;
  struct Case {
    std::vector<int64_t> input;
    int64_t N;
  };
  const std::vector<Case> cases = {{{5}, 7},           {{1, 300}, 129},  {{2, 64}, 3},   {{3, 4, 33}, 17},
                                   {{2, 3, 5, 16}, 1}, {{128, 256}, 96}, {{7, 1}, 45},   {{1, 1000}, 1000},
                                   {{0, 8}, 4},        {{300, 40}, 2}};
  for (const Case& c : cases) {
    for (bool with_bias : {true, false}) {
      const int64_t K = c.input.back();
      int64_t M = 1;
      for (size_t d = 0; d + 1 < c.input.size(); ++d) M *= c.input[d];
      auto x = make(c.input, seed++), w = make({c.N, K}, seed++), b = make({c.N}, seed++);
      std::vector<int64_t> out_shape = c.input;
      out_shape.back() = c.N;
      Tensor out(out_shape);
      et_value none = null_value();
      ASSERT_EQ(call("aten::linear.out", {&x->v, &w->v, with_bias ? &b->v : &none, &out.v}), "");
      EXPECT_TRUE(all_near(out, reference_linear(*x, *w, with_bias ? b.get() : nullptr, M, c.N, K), K))
          << "input rank " << c.input.size() << " N " << c.N << " bias " << with_bias;
    }
  }
}

TEST(LinalgLinear, RejectsFeatureMismatch) {
  auto x = make({2, 5}, 1), w = make({3, 4}, 2);
  Tensor out({2, 3});
  et_value none = null_value();
  EXPECT_THAT(call("aten::linear.out", {&x->v, &w->v, &none, &out.v}),
              HasSubstr("input [2, 5] has 5 features but weight [3, 4] expects 4"));
}

TEST(LinalgLinear, RejectsBiasOfTheWrongShape) {
  auto x = make({2, 4}, 1), w = make({3, 4}, 2), b = make({4}, 3);
  Tensor out({2, 3});
  EXPECT_THAT(call("aten::linear.out", {&x->v, &w->v, &b->v, &out.v}), HasSubstr("bias [4] must have shape [3]"));
}

TEST(LinalgLinear, RejectsWrongArgumentCount) {
  auto x = make({2, 4}, 1), w = make({3, 4}, 2);
  Tensor out({2, 3});
  EXPECT_THAT(call("aten::linear.out", {&x->v, &w->v, &out.v}), HasSubstr("expected 5 arguments, got 4"));
}

TEST(LinalgLinear, RejectsStaticOutputOfTheWrongShape) {
  auto x = make({2, 4}, 1), w = make({3, 4}, 2);
  Tensor out({3, 3});
  et_value none = null_value();
  EXPECT_THAT(call("aten::linear.out", {&x->v, &w->v, &none, &out.v}), HasSubstr("static shape [3, 3]"));
}

}  // namespace
