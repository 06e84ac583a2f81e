// Unary elementwise kernels and activations, softmax/log_softmax and the
// reductions, against naive double-precision references on seeded random
// shapes (strided inputs, rank 0, empty, negative dims) plus the rejections.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "pointwise_test_support.h"

using ::testing::HasSubstr;
using namespace pw_test;

namespace {

std::vector<int64_t> random_shape(std::mt19937& rng, int max_rank = 4, int max_size = 6) {
  std::vector<int64_t> s(rng() % (max_rank + 1));
  for (auto& x : s) x = 1 + static_cast<int64_t>(rng() % max_size);
  return s;
}

struct UnaryCase {
  const char* op;
  std::function<double(double)> ref;
  double lo = -4, hi = 4;
  double rel = 1e-5;
};

void expect_unary(const TT& in, const TT& out, const std::function<double(double)>& ref, double rel = 1e-5,
                  const char* op = "") {
  ASSERT_EQ(out.sizes, in.sizes) << op;
  for_each_index(in.sizes, [&](const std::vector<int64_t>& i) {
    double x = static_cast<float>(in.get(i));
    double expected = ref(x), actual = out.get(i);
    if (std::isnan(expected)) ASSERT_TRUE(std::isnan(actual)) << op << " x=" << x;
    else if (std::isinf(expected)) ASSERT_EQ(actual, expected) << op << " x=" << x;
    else ASSERT_NEAR(actual, expected, tol(expected, 1e-6, rel)) << op << " x=" << x;
  });
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(PointwiseUnary, FloatFunctionsMatchOnRandomShapesAndStrides) {
  const UnaryCase cases[] = {
      {"aten::relu.out", [](double x) { return x < 0 ? 0 : x; }},
      {"aten::sigmoid.out", sigmoid, -30, 30},
      {"aten::tanh.out", [](double x) { return std::tanh(x); }},
      {"aten::exp.out", [](double x) { return std::exp(x); }, -80, 80},
      {"aten::expm1.out", [](double x) { return std::expm1(x); }},
      {"aten::log.out", [](double x) { return std::log(x); }, 0.01, 10},
      {"aten::log1p.out", [](double x) { return std::log1p(x); }, -0.9, 10},
      {"aten::sqrt.out", [](double x) { return std::sqrt(x); }, 0, 10},
      {"aten::rsqrt.out", [](double x) { return 1 / std::sqrt(x); }, 0.01, 10},
      {"aten::reciprocal.out", [](double x) { return 1 / x; }, 0.1, 10},
      {"aten::neg.out", [](double x) { return -x; }},
      {"aten::abs.out", [](double x) { return std::abs(x); }},
      {"aten::sin.out", [](double x) { return std::sin(x); }},
      {"aten::cos.out", [](double x) { return std::cos(x); }},
      {"aten::erf.out", [](double x) { return std::erf(x); }},
      {"aten::floor.out", [](double x) { return std::floor(x); }},
      {"aten::ceil.out", [](double x) { return std::ceil(x); }},
      {"aten::round.out", [](double x) { return std::nearbyint(x); }},
      {"aten::trunc.out", [](double x) { return std::trunc(x); }},
      {"aten::silu.out", [](double x) { return x * sigmoid(x); }, -20, 20},
      {"aten::hardswish.out", [](double x) { return x * std::min(std::max(x + 3, 0.0), 6.0) / 6; }, -5, 5},
      {"aten::hardsigmoid.out", [](double x) { return std::min(std::max(x + 3, 0.0), 6.0) / 6; }, -5, 5},
  };
  std::mt19937 rng(99);
  for (const UnaryCase& c : cases) {
    for (int trial = 0; trial < 12; ++trial) {
      auto shape = trial == 0 ? std::vector<int64_t>{700, 40} : random_shape(rng);
      TT in(shape, ET_DTYPE_FLOAT32, rng(), 0, ET_SHAPE_STATIC, trial % 2 == 1), out(shape);
      in.randomize(rng(), c.lo, c.hi);
      ASSERT_EQ(run(c.op, {&in.v, &out.v}), "") << c.op;
      expect_unary(in, out, c.ref, 2e-6, c.op);
    }
  }
}

TEST(PointwiseUnary, ExpHandlesExtremesExactly) {
  TT in({8}), out({8});
  in.set_values({-INFINITY, -200, -87.5, 0, 88, 89, INFINITY, NAN});
  ASSERT_EQ(run("aten::exp.out", {&in.v, &out.v}), "");
  EXPECT_EQ(out.flat(0), 0.0);
  EXPECT_EQ(out.flat(1), 0.0);
  EXPECT_EQ(out.flat(3), 1.0);
  EXPECT_NEAR(out.flat(4), std::exp(88.0), std::exp(88.0) * 1e-6);
  EXPECT_TRUE(std::isinf(out.flat(5)));
  EXPECT_TRUE(std::isinf(out.flat(6)));
  EXPECT_TRUE(std::isnan(out.flat(7)));
}

TEST(PointwiseUnary, IntegerInputsPromoteForFloatFunctionsAndKeepDtypeOtherwise) {
  TT i({5}, ET_DTYPE_INT64), fo({5}), io({5}, ET_DTYPE_INT64);
  i.set_values({-2, -1, 0, 1, 2});
  ASSERT_EQ(run("aten::exp.out", {&i.v, &fo.v}), "");
  for (size_t k = 0; k < 5; ++k) EXPECT_NEAR(fo.flat(k), std::exp(i.flat(k)), 1e-5 * std::exp(i.flat(k)));
  ASSERT_EQ(run("aten::relu.out", {&i.v, &io.v}), "");
  EXPECT_EQ(io.values(), (std::vector<double>{0, 0, 0, 1, 2}));
  ASSERT_EQ(run("aten::abs.out", {&i.v, &io.v}), "");
  EXPECT_EQ(io.values(), (std::vector<double>{2, 1, 0, 1, 2}));
  ASSERT_EQ(run("aten::neg.out", {&i.v, &io.v}), "");
  EXPECT_EQ(io.values(), (std::vector<double>{2, 1, 0, -1, -2}));
  ASSERT_EQ(run("aten::bitwise_not.out", {&i.v, &io.v}), "");
  EXPECT_EQ(io.values(), (std::vector<double>{1, 0, -1, -2, -3}));
  TT b({3}, ET_DTYPE_BOOL), bo({3}, ET_DTYPE_BOOL);
  b.set_values({1, 0, 1});
  ASSERT_EQ(run("aten::logical_not.out", {&b.v, &bo.v}), "");
  EXPECT_EQ(bo.values(), (std::vector<double>{0, 1, 0}));
  TT f({3}), fb({3}, ET_DTYPE_BOOL);
  f.set_values({0, 2.5, NAN});
  ASSERT_EQ(run("aten::logical_not.out", {&f.v, &fb.v}), "");
  EXPECT_EQ(fb.values(), (std::vector<double>{1, 0, 0}));
}

TEST(PointwiseUnary, GeluBothForms) {
  TT in({33, 17}, ET_DTYPE_FLOAT32, 4, 0, ET_SHAPE_STATIC, true), out({33, 17});
  in.randomize(5, -8, 8);
  ASSERT_EQ(run("aten::gelu.out", {&in.v, &string("none")->v, &out.v}), "");
  expect_unary(in, out, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, 1e-5);
  ASSERT_EQ(run("aten::gelu.out", {&in.v, &string("tanh")->v, &out.v}), "");
  expect_unary(in, out, [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }, 1e-5);
  TT s({}), so({});
  ASSERT_EQ(run("aten::gelu.out", {&s.v, &none()->v, &so.v}), "");
  EXPECT_NEAR(so.flat(0), 0.5 * s.flat(0) * (1 + std::erf(s.flat(0) / std::sqrt(2.0))), 1e-6);
}

TEST(PointwiseUnary, HardtanhClampAndLeakyRelu) {
  TT in({4, 9}, ET_DTYPE_FLOAT32, 6), out({4, 9});
  in.randomize(7, -8, 8);
  ASSERT_EQ(run("aten::hardtanh.out", {&in.v, &integer(0)->v, &integer(6)->v, &out.v}), "");
  expect_unary(in, out, [](double x) { return std::min(std::max(x, 0.0), 6.0); });
  ASSERT_EQ(run("aten::hardtanh.out", {&in.v, &real(-0.5)->v, &real(0.75)->v, &out.v}), "");
  expect_unary(in, out, [](double x) { return std::min(std::max(x, -0.5), 0.75); });
  ASSERT_EQ(run("aten::clamp.out", {&in.v, &real(-1)->v, &none()->v, &out.v}), "");
  expect_unary(in, out, [](double x) { return std::max(x, -1.0); });
  ASSERT_EQ(run("aten::clamp.out", {&in.v, &none()->v, &integer(2)->v, &out.v}), "");
  expect_unary(in, out, [](double x) { return std::min(x, 2.0); });
  ASSERT_EQ(run("aten::leaky_relu.out", {&in.v, &real(0.1)->v, &out.v}), "");
  expect_unary(in, out, [](double x) { return x > 0 ? x : 0.1 * x; });
  // int64 clamp stays int64; with a float bound it promotes to float32.
  TT i({5}, ET_DTYPE_INT64), io({5}, ET_DTYPE_INT64), fo({5});
  i.set_values({-3, -1, 0, 2, 9});
  ASSERT_EQ(run("aten::clamp.out", {&i.v, &integer(-1)->v, &integer(4)->v, &io.v}), "");
  EXPECT_EQ(io.values(), (std::vector<double>{-1, -1, 0, 2, 4}));
  ASSERT_EQ(run("aten::clamp.out", {&i.v, &real(-0.5)->v, &none()->v, &fo.v}), "");
  EXPECT_EQ(fo.values(), (std::vector<double>{-0.5, -0.5, 0, 2, 9}));
  TT n({2}), no({2});
  n.set_values({NAN, 1});
  ASSERT_EQ(run("aten::hardtanh.out", {&n.v, &integer(-1)->v, &integer(1)->v, &no.v}), "");
  EXPECT_TRUE(std::isnan(no.flat(0)));
}

TEST(PointwiseUnary, EmptyTensors) {
  TT in({0, 4}), out({0, 4});
  EXPECT_EQ(run("aten::sigmoid.out", {&in.v, &out.v}), "");
  EXPECT_EQ(run("aten::gelu.out", {&in.v, &string("none")->v, &out.v}), "");
}

TEST(PointwiseUnaryRejects, ActivationsNeedFloatingPoint) {
  TT i({3}, ET_DTYPE_INT64), o({3}, ET_DTYPE_INT64);
  EXPECT_THAT(run("aten::gelu.out", {&i.v, &string("none")->v, &o.v}),
              HasSubstr("aten::gelu.out: dtype int64 is not supported (floating point only)"));
}

TEST(PointwiseUnaryRejects, GeluUnknownApproximation) {
  TT in({3}), out({3});
  EXPECT_THAT(run("aten::gelu.out", {&in.v, &string("fast")->v, &out.v}),
              HasSubstr("approximate must be 'none' or 'tanh', got 'fast'"));
}

TEST(PointwiseUnaryRejects, FloatResultIntoIntegerOutput) {
  TT i({3}, ET_DTYPE_INT64), o({3}, ET_DTYPE_INT64);
  EXPECT_THAT(run("aten::exp.out", {&i.v, &o.v}), HasSubstr("result type float32 can't be cast to the output dtype int64"));
}

TEST(PointwiseUnaryRejects, ClampWithoutBounds) {
  TT in({3}), out({3});
  EXPECT_THAT(run("aten::clamp.out", {&in.v, &none()->v, &none()->v, &out.v}),
              HasSubstr("at least one of 'min' or 'max' must not be None"));
}

TEST(PointwiseUnaryRejects, ReluOnBool) {
  TT b({3}, ET_DTYPE_BOOL), o({3}, ET_DTYPE_BOOL);
  EXPECT_THAT(run("aten::relu.out", {&b.v, &o.v}),
              HasSubstr("dtype bool is not supported (floating point and integral dtypes only)"));
}

TEST(PointwiseUnaryRejects, OutputShapeMismatch) {
  TT in({3, 4}), out({4, 3});
  EXPECT_THAT(run("aten::tanh.out", {&in.v, &out.v}), HasSubstr("does not match the result shape [3, 4]"));
}

// -------------------------------------------------------------------- softmax

void softmax_ref(const TT& in, int64_t dim, bool log, std::vector<double>* out) {
  out->assign(in.numel(), 0);
  std::vector<int64_t> outer = in.sizes;
  if (in.sizes.empty()) {
    (*out)[0] = log ? 0 : 1;
    return;
  }
  int64_t D = in.sizes[dim];
  outer[dim] = 1;
  for_each_index(outer, [&](const std::vector<int64_t>& base) {
    auto idx = base;
    double m = -INFINITY;
    for (int64_t k = 0; k < D; ++k) idx[dim] = k, m = std::max(m, in.get(idx));
    double s = 0;
    for (int64_t k = 0; k < D; ++k) idx[dim] = k, s += std::exp(in.get(idx) - m);
    for (int64_t k = 0; k < D; ++k) {
      idx[dim] = k;
      double v = log ? in.get(idx) - m - std::log(s) : std::exp(in.get(idx) - m) / s;
      size_t flat = 0;
      for (size_t d = 0; d < idx.size(); ++d) flat = flat * static_cast<size_t>(in.sizes[d]) + static_cast<size_t>(idx[d]);
      (*out)[flat] = v;
    }
  });
}

TEST(PointwiseSoftmax, AnyDimMatchesReference) {
  std::mt19937 rng(2024);
  std::vector<std::vector<int64_t>> shapes = {{64, 1024}, {5, 3}, {2, 3, 4, 5}, {7}, {}, {3, 300, 2}, {1, 1, 513}};
  for (int i = 0; i < 10; ++i) shapes.push_back(random_shape(rng));
  for (const auto& shape : shapes) {
    int64_t rank = static_cast<int64_t>(shape.size());
    for (int64_t dim = -std::max<int64_t>(rank, 1); dim < std::max<int64_t>(rank, 1); ++dim) {
      for (bool log : {false, true}) {
        TT in(shape, ET_DTYPE_FLOAT32, rng(), 0, ET_SHAPE_STATIC, rng() % 2), out(shape);
        in.randomize(rng(), -10, 10);
        const char* op = log ? "aten::_log_softmax.out" : "aten::_softmax.out";
        ASSERT_EQ(run(op, {&in.v, &integer(dim)->v, &boolean(false)->v, &out.v}), "");
        std::vector<double> expected;
        softmax_ref(in, rank == 0 ? 0 : (dim + rank) % rank, log, &expected);
        for (size_t k = 0; k < expected.size(); ++k)
          ASSERT_NEAR(out.flat(k), expected[k], tol(expected[k], 1e-6, 1e-5)) << op << " dim " << dim << " at " << k;
      }
    }
  }
}

// Softmax prepared as a method prepares it (softmax.cpp's plan for contiguous float32 tensors): every dim, new data
// on each call, a strided input (no plan), and a dynamic shape that shrinks (the generic path, then a new plan).
TEST(PointwiseSoftmax, PreparedCallsFollowDataDimsAndShapes) {
  std::mt19937 rng(77);
  auto check = [](const TT& in, const TT& out, int64_t dim, bool log, const std::string& what) {
    const int64_t rank = static_cast<int64_t>(in.sizes.size());
    std::vector<double> expected;
    softmax_ref(in, rank == 0 ? 0 : (dim + rank) % rank, log, &expected);
    ASSERT_EQ(out.numel(), expected.size()) << what;
    for (size_t k = 0; k < expected.size(); ++k)
      ASSERT_NEAR(out.flat(k), expected[k], tol(expected[k], 1e-6, 1e-5)) << what << " at " << k;
  };
  const std::vector<std::vector<int64_t>> shapes = {{5, 3}, {2, 3, 4, 5}, {7}, {}, {3, 300, 2}, {1, 1, 513}};
  for (const auto& shape : shapes) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    for (int64_t dim = -std::max<int64_t>(rank, 1); dim < std::max<int64_t>(rank, 1); ++dim) {
      for (bool log : {false, true}) {
        for (bool transposed : {false, true}) {
          const char* op = log ? "aten::_log_softmax.out" : "aten::_softmax.out";
          TT in(shape, ET_DTYPE_FLOAT32, rng(), 0, ET_SHAPE_STATIC, transposed), out(shape);
          auto dim_value = integer(dim), no_half = boolean(false);  // the instruction keeps pointers to them
          etrt_test::PreparedInstruction instruction(op, {&in.v, &dim_value->v, &no_half->v, &out.v});
          ASSERT_EQ(instruction.prepare_error(), "");
          EXPECT_TRUE(instruction.prepared()) << op;
          const std::string what = std::string(op) + " rank " + std::to_string(rank) + " dim " + std::to_string(dim) +
                                   (transposed ? " transposed" : "");
          for (int call = 0; call < 2; ++call) {
            in.randomize(rng(), -10, 10);
            ASSERT_EQ(instruction.call(), "") << what;
            check(in, out, dim, log, what + " call " + std::to_string(call));
          }
        }
      }
    }
  }
  TT in({4, 6}, ET_DTYPE_FLOAT32, 3, 0, ET_SHAPE_DYNAMIC_BOUND), out({4, 6}, ET_DTYPE_FLOAT32, 1, 0, ET_SHAPE_DYNAMIC_BOUND);
  auto last = integer(-1), no_half = boolean(false);
  etrt_test::PreparedInstruction instruction("aten::_softmax.out", {&in.v, &last->v, &no_half->v, &out.v});
  ASSERT_EQ(instruction.call(), "");
  check(in, out, -1, false, "at the bound");
  in.sizes[1] = 5;  // rows shrink: the plan no longer holds
  in.set_layout({0, 1});
  in.t.nbytes = in.numel() * sizeof(float);
  for (const char* what : {"shrunk rows", "shrunk rows, planned again"}) {
    ASSERT_EQ(instruction.call(), "");
    ASSERT_EQ(out.t.sizes[1], 5) << what;
    out.sizes[1] = 5;  // TT reads its own copy of the shape
    out.set_layout({0, 1});
    check(in, out, -1, false, what);
  }
}

TEST(PointwiseSoftmax, MinusInfinityEntriesGetExactlyZero) {
  TT in({4, 4}), out({4, 4});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = i + 1; j < 4; ++j) in.set({i, j}, -INFINITY);
  ASSERT_EQ(run("aten::_softmax.out", {&in.v, &integer(-1)->v, &boolean(false)->v, &out.v}), "");
  EXPECT_EQ(out.get({0, 0}), 1.0);
  for (int64_t i = 0; i < 4; ++i) {
    double s = 0;
    for (int64_t j = 0; j < 4; ++j) {
      if (j > i) {
        EXPECT_EQ(out.get({i, j}), 0.0);
      }
      s += out.get({i, j});
    }
    EXPECT_NEAR(s, 1.0, 1e-6);
  }
  ASSERT_EQ(run("aten::_log_softmax.out", {&in.v, &integer(1)->v, &boolean(false)->v, &out.v}), "");
  EXPECT_EQ(out.get({0, 1}), -INFINITY);
}

// Rows over the last dim take 8-lane passes with a masked tail on AVX2 machines: a NaN makes its own row NaN
// and leaves the other rows alone, an all -inf row is NaN (as exp(-inf - -inf)), finite rows match.
TEST(PointwiseSoftmax, RowsKeepNaNToTheirRow) {
  std::mt19937 rng(7);
  for (int64_t D : {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 70}) {
    for (bool log : {false, true}) {
      TT in({5, D}), out({5, D});
      in.randomize(rng(), -10, 10);
      in.set({1, D - 1}, NAN);
      for (int64_t k = 0; k < D; ++k) in.set({3, k}, -INFINITY);
      const char* op = log ? "aten::_log_softmax.out" : "aten::_softmax.out";
      ASSERT_EQ(run(op, {&in.v, &integer(-1)->v, &boolean(false)->v, &out.v}), "");
      std::vector<double> expected;
      softmax_ref(in, 1, log, &expected);
      for (int64_t r = 0; r < 5; ++r)
        for (int64_t k = 0; k < D; ++k) {
          const double got = out.get({r, k});
          if (r == 1 || r == 3) {
            EXPECT_TRUE(std::isnan(got)) << op << " D " << D << " row " << r << " col " << k << " got " << got;
          } else {
            const double want = expected[static_cast<size_t>(r * D + k)];
            EXPECT_NEAR(got, want, tol(want, 1e-6, 1e-5)) << op << " D " << D << " row " << r << " col " << k;
          }
        }
    }
  }
}

TEST(PointwiseSoftmaxRejects, HalfToFloatOnFloat32) {
  TT in({2, 3}), out({2, 3});
  EXPECT_THAT(run("aten::_softmax.out", {&in.v, &integer(1)->v, &boolean(true)->v, &out.v}),
              HasSubstr("half_to_float=True is only valid for float16 input, got float32"));
}

TEST(PointwiseSoftmaxRejects, DimOutOfRange) {
  TT in({2, 3}), out({2, 3});
  EXPECT_THAT(run("aten::_log_softmax.out", {&in.v, &integer(2)->v, &boolean(false)->v, &out.v}),
              HasSubstr("dim 2 is out of range for a tensor of rank 2 (expected [-2, 1])"));
}

TEST(PointwiseSoftmaxRejects, IntegerInput) {
  TT in({2, 3}, ET_DTYPE_INT64), out({2, 3}, ET_DTYPE_INT64);
  EXPECT_THAT(run("aten::_softmax.out", {&in.v, &integer(1)->v, &boolean(false)->v, &out.v}),
              HasSubstr("self dtype int64 is not supported (float32, float64)"));
}

TEST(PointwiseSoftmaxRejects, OutputDtypeMismatch) {
  TT in({2, 3}), out({2, 3}, ET_DTYPE_FLOAT64);
  EXPECT_THAT(run("aten::_softmax.out", {&in.v, &integer(1)->v, &boolean(false)->v, &out.v}),
              HasSubstr("output dtype float64 must match the input dtype float32"));
}

// ----------------------------------------------------------------- reductions

// Reference reduction over `dims` (all when empty) with fn over the slice.
std::vector<double> reduce_ref(const TT& in, std::vector<int64_t> dims, const std::function<double(const std::vector<double>&)>& fn,
                               std::vector<int64_t>* out_shape, bool keepdim) {
  size_t rank = in.sizes.size();
  std::vector<bool> red(rank, dims.empty());
  for (int64_t d : dims) red[static_cast<size_t>((d + static_cast<int64_t>(rank)) % static_cast<int64_t>(std::max<size_t>(rank, 1)))] = rank > 0;
  std::vector<int64_t> kept;
  out_shape->clear();
  for (size_t d = 0; d < rank; ++d) {
    if (!red[d]) kept.push_back(in.sizes[d]);
    if (!red[d]) out_shape->push_back(in.sizes[d]);
    else if (keepdim) out_shape->push_back(1);
  }
  std::vector<double> result;
  for_each_index(kept, [&](const std::vector<int64_t>& k) {
    std::vector<int64_t> rs;
    for (size_t d = 0; d < rank; ++d)
      if (red[d]) rs.push_back(in.sizes[d]);
    std::vector<double> slice;
    for_each_index(rs, [&](const std::vector<int64_t>& r) {
      std::vector<int64_t> idx(rank);
      size_t ki = 0, ri = 0;
      for (size_t d = 0; d < rank; ++d) idx[d] = red[d] ? r[ri++] : k[ki++];
      slice.push_back(in.get(idx));
    });
    result.push_back(fn(slice));
  });
  return result;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double mean(const std::vector<double>& v) { return sum(v) / static_cast<double>(v.size()); }
double var(const std::vector<double>& v, double correction) {
  double m = mean(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / (static_cast<double>(v.size()) - correction);
}

TEST(PointwiseReduce, SumMeanAmaxAminVarOverRandomDims) {
  std::mt19937 rng(31337);
  for (int trial = 0; trial < 40; ++trial) {
    auto shape = trial == 0 ? std::vector<int64_t>{4, 70000} : random_shape(rng, 4, 5);
    size_t rank = shape.size();
    std::vector<int64_t> dims;
    for (size_t d = 0; d < rank; ++d)
      if (rng() % 2) dims.push_back(rng() % 2 ? static_cast<int64_t>(d) : static_cast<int64_t>(d) - static_cast<int64_t>(rank));
    if (trial == 0) dims = {-1};
    bool keepdim = rng() % 2;
    TT in(shape, ET_DTYPE_FLOAT32, rng(), 0, ET_SHAPE_STATIC, rng() % 2);
    std::vector<int64_t> out_shape;
    struct Case {
      const char* op;
      std::function<double(const std::vector<double>&)> fn;
    } cases[] = {{"aten::sum.IntList_out", sum},
                 {"aten::mean.out", mean},
                 {"aten::amax.out", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }},
                 {"aten::amin.out", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }},
                 {"aten::var.correction_out", [](const std::vector<double>& v) { return var(v, 1); }},
                 {"aten::std.correction_out", [](const std::vector<double>& v) { return std::sqrt(var(v, 0)); }}};
    for (const Case& c : cases) {
      auto expected = reduce_ref(in, dims, c.fn, &out_shape, keepdim);
      TT out(out_shape);
      auto dl = int_list(dims);
      std::string op = c.op;
      std::string r;
      if (op == "aten::sum.IntList_out" || op == "aten::mean.out")
        r = run(c.op, {&in.v, &dl->v, &boolean(keepdim)->v, &none()->v, &out.v});
      else if (op == "aten::var.correction_out")
        r = run(c.op, {&in.v, &dl->v, &none()->v, &boolean(keepdim)->v, &out.v});
      else if (op == "aten::std.correction_out")
        r = run(c.op, {&in.v, &dl->v, &integer(0)->v, &boolean(keepdim)->v, &out.v});
      else
        r = run(c.op, {&in.v, &dl->v, &boolean(keepdim)->v, &out.v});
      ASSERT_EQ(r, "") << c.op;
      for (size_t k = 0; k < expected.size(); ++k) {
        if (std::isnan(expected[k]) || std::isinf(expected[k])) continue;  // var of one element
        ASSERT_NEAR(out.flat(k), expected[k], tol(expected[k], 1e-4, 1e-5)) << c.op << " trial " << trial;
      }
    }
  }
}

TEST(PointwiseReduce, NoneDimsReduceEverythingAndInt64Sums) {
  TT in({3, 4}, ET_DTYPE_INT64, 8), out({}, ET_DTYPE_INT64);
  double total = 0;
  for (size_t k = 0; k < in.numel(); ++k) total += in.flat(k);
  ASSERT_EQ(run("aten::sum.IntList_out", {&in.v, &none()->v, &boolean(false)->v, &none()->v, &out.v}), "");
  EXPECT_EQ(out.flat(0), total);
  TT f({}, ET_DTYPE_FLOAT32);
  ASSERT_EQ(run("aten::mean.out", {&in.v, &int_list({})->v, &boolean(false)->v, &integer(ET_DTYPE_FLOAT32)->v, &f.v}), "");
  EXPECT_NEAR(f.flat(0), total / 12, 1e-6);
  TT s({}), so({});
  ASSERT_EQ(run("aten::sum.IntList_out", {&s.v, &int_list({0})->v, &boolean(true)->v, &none()->v, &so.v}), "");
  EXPECT_EQ(so.flat(0), static_cast<float>(s.flat(0)));
  TT e({0, 3}), eo({3});
  ASSERT_EQ(run("aten::sum.IntList_out", {&e.v, &int_list({0})->v, &boolean(false)->v, &none()->v, &eo.v}), "");
  EXPECT_EQ(eo.values(), (std::vector<double>{0, 0, 0}));
}

// float32 sums and means of contiguous trailing slices (reductions.cpp's small-slice path) accumulate in double
// like every other float reduction: each result is the double total rounded once to float, whether the output
// is contiguous (that path) or strided (the general one); an empty slice gives 0 and NaN.
// sum and mean prepared as a method prepares them (reductions.cpp's plan for contiguous float32 slices): each call
// reads the input's current data, a changed dynamic shape takes the generic path, and inputs the plan does not
// cover (strided, float64) still give the reference result.
TEST(PointwiseReduce, PreparedFloatSumsFollowTheirInputsDataAndShape) {
  auto expect_sums = [](const TT& in, const TT& out, bool mean, const std::string& what) {
    const size_t rows = out.numel(), length = in.numel() / rows;
    for (size_t o = 0; o < rows; ++o) {
      double total = 0;
      for (size_t k = 0; k < length; ++k) total += in.flat(o * length + k);
      EXPECT_NEAR(out.flat(o), mean ? total / static_cast<double>(length) : total, 1e-5) << what << ", row " << o;
    }
  };
  for (bool mean : {false, true}) {
    const char* op = mean ? "aten::mean.out" : "aten::sum.IntList_out";
    TT in({2, 3, 5}, ET_DTYPE_FLOAT32, 3, 0, ET_SHAPE_DYNAMIC_BOUND), out({2, 3});
    auto dims = int_list({-1});
    auto no_keepdim = boolean(false), no_dtype = none();  // the instructions below keep pointers to them
    etrt_test::PreparedInstruction instruction(op, {&in.v, &dims->v, &no_keepdim->v, &no_dtype->v, &out.v});
    ASSERT_EQ(instruction.prepare_error(), "");
    EXPECT_TRUE(instruction.prepared()) << op;
    ASSERT_EQ(instruction.call(), "");
    expect_sums(in, out, mean, "first call");
    in.randomize(11);
    ASSERT_EQ(instruction.call(), "");
    expect_sums(in, out, mean, "new data");
    in.sizes[2] = 4;  // the dynamic dim shrinks: the plan no longer holds
    in.set_layout({0, 1, 2});
    in.t.nbytes = in.numel() * sizeof(float);
    ASSERT_EQ(instruction.call(), "");
    expect_sums(in, out, mean, "shrunk input");
    ASSERT_EQ(instruction.call(), "");
    expect_sums(in, out, mean, "shrunk input, planned again");

    TT strided({2, 5}, ET_DTYPE_FLOAT32, 4, 0, ET_SHAPE_STATIC, /*transposed=*/true), strided_out({2});
    etrt_test::PreparedInstruction on_strided(op, {&strided.v, &dims->v, &no_keepdim->v, &no_dtype->v, &strided_out.v});
    ASSERT_EQ(on_strided.call(), "");
    expect_sums(strided, strided_out, mean, "strided input");
    TT wide({2, 5}, ET_DTYPE_FLOAT64, 5), wide_out({2}, ET_DTYPE_FLOAT64);
    etrt_test::PreparedInstruction on_float64(op, {&wide.v, &dims->v, &no_keepdim->v, &no_dtype->v, &wide_out.v});
    EXPECT_FALSE(on_float64.prepared());
    ASSERT_EQ(on_float64.call(), "");
    expect_sums(wide, wide_out, mean, "float64");
  }
}

TEST(PointwiseReduce, FloatSlicesAccumulateInDoubleOnEveryPath) {
  for (int64_t length : {0, 1, 7, 8, 9, 70, 257}) {
    for (bool strided_out : {false, true}) {
      TT in({2, 3, length}, ET_DTYPE_FLOAT32, static_cast<unsigned>(length) + 5);
      // Multiples of 2^-10 below 3 and of 2^8 below 2^20: every float exact and every double partial sum exact
      // (in any order), while a float accumulator would round the partial sums.
      for (size_t k = 0; k < in.numel(); ++k)
        in.set_flat(k, std::ldexp(std::round(in.flat(k) * 1024), k % 3 == 0 ? 8 : -10));
      TT sum_out({2, 3}, ET_DTYPE_FLOAT32, 1, 0, ET_SHAPE_STATIC, strided_out);
      TT mean_out({2, 3}, ET_DTYPE_FLOAT32, 1, 0, ET_SHAPE_STATIC, strided_out);
      auto dims = int_list({-1});
      ASSERT_EQ(run("aten::sum.IntList_out", {&in.v, &dims->v, &boolean(false)->v, &none()->v, &sum_out.v}), "");
      ASSERT_EQ(run("aten::mean.out", {&in.v, &dims->v, &boolean(false)->v, &none()->v, &mean_out.v}), "");
      for (size_t o = 0; o < 6; ++o) {
        double total = 0;
        for (int64_t k = 0; k < length; ++k) total += in.flat(o * static_cast<size_t>(length) + static_cast<size_t>(k));
        SCOPED_TRACE("length " + std::to_string(length) + (strided_out ? ", strided out" : "") + ", row " +
                     std::to_string(o));
        EXPECT_EQ(sum_out.flat(o), static_cast<double>(static_cast<float>(total)));
        if (length == 0) EXPECT_TRUE(std::isnan(mean_out.flat(o)));
        else EXPECT_EQ(mean_out.flat(o), static_cast<double>(static_cast<float>(total / static_cast<double>(length))));
      }
    }
  }
}

TEST(PointwiseReduce, ArgmaxArgminFirstOccurrenceAndNaN) {
  TT in({2, 4}), out({2}, ET_DTYPE_INT64);
  in.set_values({1, 5, 5, 0, -1, -1, 3, -1});
  ASSERT_EQ(run("aten::argmax.out", {&in.v, &integer(1)->v, &boolean(false)->v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{1, 2}));
  ASSERT_EQ(run("aten::argmin.out", {&in.v, &integer(-1)->v, &boolean(false)->v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{3, 0}));
  TT all({}, ET_DTYPE_INT64);
  ASSERT_EQ(run("aten::argmax.out", {&in.v, &none()->v, &boolean(false)->v, &all.v}), "");
  EXPECT_EQ(all.flat(0), 1);
  TT keep({1, 1}, ET_DTYPE_INT64);
  ASSERT_EQ(run("aten::argmin.out", {&in.v, &none()->v, &boolean(true)->v, &keep.v}), "");
  EXPECT_EQ(keep.flat(0), 4);
  in.set_flat(6, NAN);
  ASSERT_EQ(run("aten::argmax.out", {&in.v, &integer(1)->v, &boolean(false)->v, &out.v}), "");
  EXPECT_EQ(out.flat(1), 2);
  TT big({1 << 18}), bo({}, ET_DTYPE_INT64);
  big.set_flat(200000, 100);
  ASSERT_EQ(run("aten::argmax.out", {&big.v, &integer(0)->v, &boolean(false)->v, &bo.v}), "");
  EXPECT_EQ(bo.flat(0), 200000);
}

TEST(PointwiseReduce, AmaxPropagatesNaN) {
  TT in({2, 3}), out({2});
  in.set_values({1, NAN, 3, 4, 5, 6});
  ASSERT_EQ(run("aten::amax.out", {&in.v, &int_list({1})->v, &boolean(false)->v, &out.v}), "");
  EXPECT_TRUE(std::isnan(out.flat(0)));
  EXPECT_EQ(out.flat(1), 6);
}

TEST(PointwiseReduceRejects, MeanOfIntegersWithoutDtype) {
  TT in({3}, ET_DTYPE_INT64), out({}, ET_DTYPE_FLOAT32);
  EXPECT_THAT(run("aten::mean.out", {&in.v, &none()->v, &boolean(false)->v, &none()->v, &out.v}),
              HasSubstr("could not infer output dtype: input dtype must be floating point, got int64"));
}

TEST(PointwiseReduceRejects, RepeatedDim) {
  TT in({3, 4}), out({3});
  EXPECT_THAT(run("aten::sum.IntList_out", {&in.v, &int_list({1, -1})->v, &boolean(false)->v, &none()->v, &out.v}),
              HasSubstr("dim 1 appears multiple times in the list of dims"));
}

TEST(PointwiseReduceRejects, DimOutOfRange) {
  TT in({3, 4}), out({3});
  EXPECT_THAT(run("aten::mean.out", {&in.v, &int_list({2})->v, &boolean(false)->v, &none()->v, &out.v}),
              HasSubstr("dim 2 is out of range for a tensor of rank 2"));
}

TEST(PointwiseReduceRejects, DtypeArgumentDiffersFromOut) {
  TT in({3, 4}), out({3}, ET_DTYPE_FLOAT32);
  EXPECT_THAT(run("aten::sum.IntList_out",
                  {&in.v, &int_list({1})->v, &boolean(false)->v, &integer(ET_DTYPE_FLOAT64)->v, &out.v}),
              HasSubstr("dtype argument float64 does not match the output dtype float32"));
}

TEST(PointwiseReduceRejects, ArgmaxOutputMustBeInt64) {
  TT in({3, 4}), out({3});
  EXPECT_THAT(run("aten::argmax.out", {&in.v, &integer(1)->v, &boolean(false)->v, &out.v}),
              HasSubstr("output dtype must be int64, got float32"));
}

TEST(PointwiseReduceRejects, AmaxOverEmptyDim) {
  TT in({0, 4}), out({4});
  EXPECT_THAT(run("aten::amax.out", {&in.v, &int_list({0})->v, &boolean(false)->v, &out.v}),
              HasSubstr("cannot reduce over a zero-size dimension"));
}

TEST(PointwiseReduceRejects, WrongOutputShape) {
  TT in({3, 4}), out({4});
  EXPECT_THAT(run("aten::sum.IntList_out", {&in.v, &int_list({1})->v, &boolean(false)->v, &none()->v, &out.v}),
              HasSubstr("output shape [4] does not match the result shape [3]"));
}

}  // namespace

// Bool bytes other than 0 / 1 (from a program's constants or np.frombuffer) read as true.
TEST(BoolBytes, LogicalNotSumAndCopiesNormalise) {
  TT a({4}, ET_DTYPE_BOOL), not_a({4}, ET_DTYPE_BOOL), sum({}, ET_DTYPE_INT64), as_float({4});
  const uint8_t bytes[] = {2, 0, 4, 1};
  std::memcpy(a.bytes(), bytes, 4);
  ASSERT_EQ(run("aten::logical_not.out", {&a.v, &not_a.v}), "");
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(static_cast<int>(not_a.bytes()[i]), i == 1 ? 1 : 0) << i;
  ASSERT_EQ(run("aten::sum.IntList_out", {&a.v, &none()->v, &boolean(false)->v, &none()->v, &sum.v}), "");
  EXPECT_EQ(sum.values(), (std::vector<double>{3}));
  ASSERT_EQ(run("aten::_to_copy.out", {&a.v, &boolean(false)->v, &none()->v, &as_float.v}), "");
  EXPECT_EQ(as_float.values(), (std::vector<double>{1, 0, 1, 1}));
  TT copy({4}, ET_DTYPE_BOOL);
  ASSERT_EQ(run("aten::clone.out", {&a.v, &none()->v, &copy.v}), "");
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(static_cast<int>(copy.bytes()[i]), i == 1 ? 0 : 1) << i;
}
