// Binary/ternary elementwise kernels (binary_elementwise.cpp) against a naive
// double-precision reference: random broadcast shapes, strided inputs, rank
// 0, empty, int64/bool, type promotion, scalar forms, one test per rejection
// rule, and add/mul with etrt_test tensors (resizing, strided, int64 promotion).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "pointwise_test_support.h"

using ::testing::HasSubstr;
using namespace pw_test;

namespace {

using Ref = std::function<double(double, double)>;

// Random broadcast-compatible shape pair from a seeded generator.
void random_shapes(std::mt19937& rng, std::vector<int64_t>* a, std::vector<int64_t>* b) {
  int rank = static_cast<int>(rng() % 5);
  std::vector<int64_t> full(rank);
  for (auto& s : full) s = 1 + static_cast<int64_t>(rng() % 5);
  *a = full;
  *b = full;
  for (int d = 0; d < rank; ++d) {
    if (rng() % 3 == 0) (*a)[d] = 1;
    else if (rng() % 3 == 0) (*b)[d] = 1;
  }
  if (rank > 0 && rng() % 2) b->erase(b->begin(), b->begin() + static_cast<long>(rng() % (rank + 1)));
}

std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t as = i + a.size() >= r ? a[i + a.size() - r] : 1;
    int64_t bs = i + b.size() >= r ? b[i + b.size() - r] : 1;
    out[i] = as == 1 ? bs : as;
  }
  return out;
}

void expect_binary(const TT& a, const TT& b, const TT& out, const Ref& ref, double atol = 1e-5) {
  ASSERT_EQ(out.sizes, broadcast(a.sizes, b.sizes));
  for_each_index(out.sizes, [&](const std::vector<int64_t>& idx) {
    double expected = ref(a.get(bcast_index(idx, a.sizes)), b.get(bcast_index(idx, b.sizes)));
    double actual = out.get(idx);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(actual));
    } else if (std::isinf(expected)) {
      EXPECT_EQ(actual, expected);
    } else {
      ASSERT_NEAR(actual, expected, tol(expected, atol)) << "at an index of shape " << out.sizes.size();
    }
  });
}

struct FloatCase {
  const char* op;
  bool alpha;
  Ref ref;
};

TEST(PointwiseBinary, FloatOpsMatchOnRandomBroadcastShapesAndStrides) {
  const double alpha = 1.5;
  const FloatCase cases[] = {
      {"aten::add.out", true, [&](double x, double y) { return x + alpha * y; }},
      {"aten::sub.out", true, [&](double x, double y) { return x - alpha * y; }},
      {"aten::mul.out", false, [](double x, double y) { return x * y; }},
      {"aten::div.out", false, [](double x, double y) { return x / y; }},
      {"aten::maximum.out", false, [](double x, double y) { return std::max(x, y); }},
      {"aten::minimum.out", false, [](double x, double y) { return std::min(x, y); }},
      {"aten::pow.Tensor_Tensor_out", false, [](double x, double y) { return std::pow(std::abs(x), y); }},
  };
  std::mt19937 rng(1234);
  for (const FloatCase& c : cases) {
    for (int trial = 0; trial < 25; ++trial) {
      std::vector<int64_t> sa, sb;
      random_shapes(rng, &sa, &sb);
      bool ta = rng() % 2, tb = rng() % 2;
      TT a(sa, ET_DTYPE_FLOAT32, rng(), 0, ET_SHAPE_STATIC, ta), b(sb, ET_DTYPE_FLOAT32, rng(), 0, ET_SHAPE_STATIC, tb);
      if (std::string(c.op).find("pow") != std::string::npos) a.randomize(rng(), 0.1, 3);
      TT out(broadcast(sa, sb));
      auto al = real(alpha);
      std::vector<et_value*> args = {&a.v, &b.v};
      if (c.alpha) args.push_back(&al->v);
      args.push_back(&out.v);
      ASSERT_EQ(run(c.op, args), "") << c.op;
      expect_binary(a, b, out, c.ref, 1e-5);
    }
  }
}

TEST(PointwiseBinary, LargeContiguousAndTransposedInputs) {
  TT a({512, 300}), b({512, 300}, ET_DTYPE_FLOAT32, 7, 0, ET_SHAPE_STATIC, true), out({512, 300});
  ASSERT_EQ(run("aten::sub.out", {&a.v, &b.v, &integer(1)->v, &out.v}), "");
  expect_binary(a, b, out, [](double x, double y) { return x - y; });
  TT c({300}), out2({512, 300});
  ASSERT_EQ(run("aten::mul.out", {&b.v, &c.v, &out2.v}), "");
  expect_binary(b, c, out2, [](double x, double y) { return x * y; });
}

TEST(PointwiseBinary, OutputWithChannelsLastDimOrderIsWrittenThroughItsStrides) {
  TT a({2, 3, 4, 5}), b({3, 1, 1}), out({2, 3, 4, 5});
  out.with_dim_order({0, 2, 3, 1});
  ASSERT_EQ(run("aten::add.out", {&a.v, &b.v, &integer(1)->v, &out.v}), "");
  expect_binary(a, b, out, [](double x, double y) { return x + y; });
}

TEST(PointwiseBinary, Int64ArithmeticIsExact) {
  TT a({4, 5}, ET_DTYPE_INT64, 3), b({5}, ET_DTYPE_INT64, 4), out({4, 5}, ET_DTYPE_INT64);
  a.store(0, 4e15);  // beyond float precision
  ASSERT_EQ(run("aten::add.out", {&a.v, &b.v, &integer(3)->v, &out.v}), "");
  expect_binary(a, b, out, [](double x, double y) { return x + 3 * y; }, 0);
  ASSERT_EQ(run("aten::mul.out", {&a.v, &b.v, &out.v}), "");
  expect_binary(a, b, out, [](double x, double y) { return x * y; }, 0);
  ASSERT_EQ(run("aten::sub.out", {&a.v, &b.v, &integer(1)->v, &out.v}), "");
  expect_binary(a, b, out, [](double x, double y) { return x - y; }, 0);
}

// Integer tensors wrap on overflow (two's complement, as PyTorch's kernels do in
// practice), and MIN / -1 -- which traps on x86 and kills PyTorch itself with
// SIGFPE -- is a wrapped negation with remainder 0: a program's values must not
// reach undefined behaviour or a signal. int32 so that every value is exact in
// the helpers' doubles.
TEST(PointwiseBinary, IntegerOverflowWrapsAndMinByMinusOneDoesNotTrap) {
  constexpr double kMin = INT32_MIN, kMax = INT32_MAX;
  TT a({4}, ET_DTYPE_INT32), b({4}, ET_DTYPE_INT32), out({4}, ET_DTYPE_INT32);
  a.set_values({kMin, kMin, kMax, 7});
  b.set_values({-1, -1, 2, -1});
  auto trunc = string("trunc"), floor_mode = string("floor");
  ASSERT_EQ(run("aten::div.out_mode", {&a.v, &b.v, &floor_mode->v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{kMin, kMin, 1073741823, -7}));
  ASSERT_EQ(run("aten::div.out_mode", {&a.v, &b.v, &trunc->v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{kMin, kMin, 1073741823, -7}));
  ASSERT_EQ(run("aten::fmod.Tensor_out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{0, 0, 1, 0}));
  ASSERT_EQ(run("aten::remainder.Tensor_out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{0, 0, 1, 0}));
  ASSERT_EQ(run("aten::mul.out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{kMin, kMin, -2, -7}));
  ASSERT_EQ(run("aten::add.out", {&a.v, &a.v, &integer(1)->v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{0, 0, -2, 14}));
}

TEST(PointwiseBinary, TypePromotionFollowsPyTorch) {
  // float32 tensor with int64 tensor -> float32
  TT f({3, 4}), i({4}, ET_DTYPE_INT64, 5), out({3, 4});
  ASSERT_EQ(run("aten::add.out", {&f.v, &i.v, &integer(1)->v, &out.v}), "");
  expect_binary(f, i, out, [](double x, double y) { return x + y; });
  // int64 tensor with a rank-0 float tensor -> float32 (higher category wins)
  TT i2({3, 4}, ET_DTYPE_INT64, 6), f0({}, ET_DTYPE_FLOAT32, 7), out2({3, 4});
  ASSERT_EQ(run("aten::mul.out", {&i2.v, &f0.v, &out2.v}), "");
  expect_binary(i2, f0, out2, [](double x, double y) { return x * static_cast<float>(y); });
  // float32 tensor with a rank-0 float64 tensor stays float32; out float64 accepted (can_cast)
  TT d0({}, ET_DTYPE_FLOAT64, 8), out3({3, 4}, ET_DTYPE_FLOAT64);
  ASSERT_EQ(run("aten::add.out", {&f.v, &d0.v, &integer(1)->v, &out3.v}), "");
  expect_binary(f, d0, out3, [](double x, double y) { return static_cast<float>(x + static_cast<float>(y)); });
  // bool + bool -> bool (logical or)
  TT p({6}, ET_DTYPE_BOOL, 9), q({6}, ET_DTYPE_BOOL, 10), out4({6}, ET_DTYPE_BOOL);
  ASSERT_EQ(run("aten::add.out", {&p.v, &q.v, &integer(1)->v, &out4.v}), "");
  expect_binary(p, q, out4, [](double x, double y) { return (x + y) != 0; }, 0);
  // int64 true division -> float32
  TT n({5}, ET_DTYPE_INT64, 11), m({5}, ET_DTYPE_INT64, 12), out5({5});
  for (size_t k = 0; k < 5; ++k) m.store(k, static_cast<double>(k + 1));
  ASSERT_EQ(run("aten::div.out", {&n.v, &m.v, &out5.v}), "");
  expect_binary(n, m, out5, [](double x, double y) { return x / y; });
}

TEST(PointwiseBinary, RoundingModes) {
  TT a({4, 6}), b({6}), out({4, 6});
  b.set_values({-2.5, -1, -0.3, 0.7, 1.5, 3});
  auto trunc = string("trunc"), floor_mode = string("floor");
  ASSERT_EQ(run("aten::div.out_mode", {&a.v, &b.v, &trunc->v, &out.v}), "");
  expect_binary(a, b, out, [](double x, double y) { return std::trunc(static_cast<float>(x / y)); }, 1e-5);
  ASSERT_EQ(run("aten::div.out_mode", {&a.v, &b.v, &floor_mode->v, &out.v}), "");
  expect_binary(a, b, out, [](double x, double y) { return std::floor(static_cast<float>(x / y)); }, 1e-5);
  ASSERT_EQ(run("aten::div.out_mode", {&a.v, &b.v, &none()->v, &out.v}), "");
  expect_binary(a, b, out, [](double x, double y) { return x / y; });
  // Integers: floor rounds toward -inf, trunc toward 0.
  TT i({6}, ET_DTYPE_INT64), j({6}, ET_DTYPE_INT64), io({6}, ET_DTYPE_INT64);
  i.set_values({7, -7, 7, -7, 0, 5});
  j.set_values({2, 2, -2, -2, 3, 5});
  ASSERT_EQ(run("aten::div.out_mode", {&i.v, &j.v, &floor_mode->v, &io.v}), "");
  EXPECT_EQ(io.values(), (std::vector<double>{3, -4, -4, 3, 0, 1}));
  ASSERT_EQ(run("aten::div.out_mode", {&i.v, &j.v, &trunc->v, &io.v}), "");
  EXPECT_EQ(io.values(), (std::vector<double>{3, -3, -3, 3, 0, 1}));
  TT s({6}), so({6});
  s.set_values({7, -7, 2.5, -2.5, 0, 9});
  ASSERT_EQ(run("aten::div.Scalar_mode_out", {&s.v, &integer(2)->v, &floor_mode->v, &so.v}), "");
  EXPECT_EQ(so.values(), (std::vector<double>{3, -4, 1, -2, 0, 4}));
}

TEST(PointwiseBinary, ScalarForms) {
  TT a({3, 5}, ET_DTYPE_FLOAT32, 21), out({3, 5});
  TT one({}, ET_DTYPE_FLOAT32);  // a stand-in for the scalar in the reference
  auto check = [&](const char* op, std::vector<et_value*> args, const std::function<double(double)>& ref) {
    ASSERT_EQ(run(op, args), "") << op;
    for (size_t k = 0; k < a.numel(); ++k) ASSERT_NEAR(out.flat(k), ref(a.flat(k)), tol(ref(a.flat(k)))) << op;
  };
  auto s = real(0.75), al = integer(2);
  check("aten::add.Scalar_out", {&a.v, &s->v, &al->v, &out.v}, [](double x) { return x + 2 * 0.75; });
  check("aten::sub.Scalar_out", {&a.v, &s->v, &al->v, &out.v}, [](double x) { return x - 2 * 0.75; });
  check("aten::rsub.Scalar_out", {&a.v, &s->v, &al->v, &out.v}, [](double x) { return 0.75 - 2 * x; });
  check("aten::mul.Scalar_out", {&a.v, &s->v, &out.v}, [](double x) { return x * 0.75; });
  check("aten::div.Scalar_out", {&a.v, &s->v, &out.v}, [](double x) { return x / 0.75; });
  for (double e : {2.0, 3.0, -1.0, 1.0}) {
    auto ev = real(e);
    check("aten::pow.Tensor_Scalar_out", {&a.v, &ev->v, &out.v}, [e](double x) { return std::pow(x, e); });
  }
  a.randomize(22, 0.1, 4);
  for (double e : {0.5, -0.5, 1.7}) {
    auto ev = real(e);
    check("aten::pow.Tensor_Scalar_out", {&a.v, &ev->v, &out.v}, [e](double x) { return std::pow(x, e); });
  }
  auto base = real(2.0);
  check("aten::pow.Scalar_out", {&base->v, &a.v, &out.v}, [](double x) { return std::pow(2.0, x); });
  // int64 tensor with an int scalar stays int64; with a double scalar -> float32.
  TT i({7}, ET_DTYPE_INT64, 23), io({7}, ET_DTYPE_INT64), fo({7});
  ASSERT_EQ(run("aten::mul.Scalar_out", {&i.v, &integer(3)->v, &io.v}), "");
  for (size_t k = 0; k < 7; ++k) EXPECT_EQ(io.flat(k), i.flat(k) * 3);
  ASSERT_EQ(run("aten::add.Scalar_out", {&i.v, &real(0.5)->v, &integer(1)->v, &fo.v}), "");
  for (size_t k = 0; k < 7; ++k) EXPECT_FLOAT_EQ(fo.flat(k), i.flat(k) + 0.5);
  ASSERT_EQ(run("aten::pow.Tensor_Scalar_out", {&i.v, &integer(3)->v, &io.v}), "");
  for (size_t k = 0; k < 7; ++k) EXPECT_EQ(io.flat(k), i.flat(k) * i.flat(k) * i.flat(k));
}

TEST(PointwiseBinary, ComparisonsProduceBool) {
  struct Cmp {
    const char* name;
    std::function<bool(double, double)> f;
  } cmps[] = {{"eq", std::equal_to<double>()}, {"ne", std::not_equal_to<double>()}, {"lt", std::less<double>()},
              {"le", std::less_equal<double>()}, {"gt", std::greater<double>()}, {"ge", std::greater_equal<double>()}};
  std::mt19937 rng(77);
  for (const Cmp& c : cmps) {
    for (int32_t dt : {ET_DTYPE_FLOAT32, ET_DTYPE_INT64}) {
      TT a({4, 5}, dt, rng(), 0, ET_SHAPE_STATIC, true), b({5}, dt, rng()), out({4, 5}, ET_DTYPE_BOOL);
      if (dt == ET_DTYPE_FLOAT32) b.store(0, a.get({0, 0}));  // an equal pair
      std::string tensor_op = std::string("aten::") + c.name + ".Tensor_out";
      ASSERT_EQ(run(tensor_op.c_str(), {&a.v, &b.v, &out.v}), "");
      expect_binary(a, b, out, [&](double x, double y) { return c.f(x, y) ? 1.0 : 0.0; }, 0);
      std::string scalar_op = std::string("aten::") + c.name + ".Scalar_out";
      auto s = dt == ET_DTYPE_INT64 ? integer(1) : real(0.25);
      double sv = dt == ET_DTYPE_INT64 ? 1 : 0.25;
      ASSERT_EQ(run(scalar_op.c_str(), {&a.v, &s->v, &out.v}), "");
      for_each_index(a.sizes, [&](const std::vector<int64_t>& i) { ASSERT_EQ(out.get(i), c.f(a.get(i), sv) ? 1 : 0); });
    }
  }
  // int64 tensor compared with a double scalar promotes to float.
  TT i({3}, ET_DTYPE_INT64), o({3}, ET_DTYPE_BOOL);
  i.set_values({0, 1, 2});
  ASSERT_EQ(run("aten::ge.Scalar_out", {&i.v, &real(0.5)->v, &o.v}), "");
  EXPECT_EQ(o.values(), (std::vector<double>{0, 1, 1}));
  // A comparison may be written into a float output.
  TT fo({3});
  ASSERT_EQ(run("aten::lt.Scalar_out", {&i.v, &integer(2)->v, &fo.v}), "");
  EXPECT_EQ(fo.values(), (std::vector<double>{1, 1, 0}));
}

TEST(PointwiseBinary, LogicalAndBitwise) {
  TT p({3, 4}, ET_DTYPE_BOOL, 31), q({4}, ET_DTYPE_BOOL, 32), out({3, 4}, ET_DTYPE_BOOL);
  ASSERT_EQ(run("aten::logical_and.out", {&p.v, &q.v, &out.v}), "");
  expect_binary(p, q, out, [](double x, double y) { return (x != 0 && y != 0) ? 1 : 0; }, 0);
  ASSERT_EQ(run("aten::logical_or.out", {&p.v, &q.v, &out.v}), "");
  expect_binary(p, q, out, [](double x, double y) { return (x != 0 || y != 0) ? 1 : 0; }, 0);
  ASSERT_EQ(run("aten::logical_xor.out", {&p.v, &q.v, &out.v}), "");
  expect_binary(p, q, out, [](double x, double y) { return ((x != 0) != (y != 0)) ? 1 : 0; }, 0);
  ASSERT_EQ(run("aten::bitwise_and.Tensor_out", {&p.v, &q.v, &out.v}), "");
  expect_binary(p, q, out, [](double x, double y) { return (x != 0 && y != 0) ? 1 : 0; }, 0);
  // Non-bool inputs are truthy when nonzero.
  TT f({3, 4}, ET_DTYPE_FLOAT32, 33), i({4}, ET_DTYPE_INT64, 34);
  f.set({0, 0}, 0.0);
  ASSERT_EQ(run("aten::logical_and.out", {&f.v, &i.v, &out.v}), "");
  expect_binary(f, i, out, [](double x, double y) { return (x != 0 && y != 0) ? 1 : 0; }, 0);
  TT a({5}, ET_DTYPE_INT64), b({5}, ET_DTYPE_INT64), io({5}, ET_DTYPE_INT64);
  a.set_values({12, 5, -1, 0, 7});
  b.set_values({10, 3, 6, 9, 7});
  ASSERT_EQ(run("aten::bitwise_or.Tensor_out", {&a.v, &b.v, &io.v}), "");
  EXPECT_EQ(io.values(), (std::vector<double>{14, 7, -1, 9, 7}));
  ASSERT_EQ(run("aten::bitwise_xor.Tensor_out", {&a.v, &b.v, &io.v}), "");
  EXPECT_EQ(io.values(), (std::vector<double>{6, 6, -7, 9, 0}));
}

TEST(PointwiseBinary, MaximumPropagatesNaN) {
  TT a({3}), b({3}), out({3});
  a.set_values({NAN, 1, 2});
  b.set_values({0, NAN, 3});
  ASSERT_EQ(run("aten::maximum.out", {&a.v, &b.v, &out.v}), "");
  EXPECT_TRUE(std::isnan(out.flat(0)));
  EXPECT_TRUE(std::isnan(out.flat(1)));
  EXPECT_EQ(out.flat(2), 3);
}

TEST(PointwiseBinary, WhereBroadcastsAllThree) {
  std::mt19937 rng(5);
  for (int32_t dt : {ET_DTYPE_FLOAT32, ET_DTYPE_INT64}) {
    TT c({4, 1, 3}, ET_DTYPE_BOOL, rng()), a({5, 3}, dt, rng(), 0, ET_SHAPE_STATIC, true), b({1}, dt, rng()),
        out({4, 5, 3}, dt);
    ASSERT_EQ(run("aten::where.self_out", {&c.v, &a.v, &b.v, &out.v}), "");
    for_each_index(out.sizes, [&](const std::vector<int64_t>& i) {
      double expected = c.get(bcast_index(i, c.sizes)) ? a.get(bcast_index(i, a.sizes)) : b.get({0});
      ASSERT_EQ(out.get(i), static_cast<double>(static_cast<float>(expected)));
    });
  }
  // Promotion: int64 self with float other -> float32.
  TT c({4}, ET_DTYPE_BOOL, 8), a({4}, ET_DTYPE_INT64, 9), b({4}, ET_DTYPE_FLOAT32, 10), out({4});
  ASSERT_EQ(run("aten::where.self_out", {&c.v, &a.v, &b.v, &out.v}), "");
  for (size_t k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(out.flat(k), c.flat(k) ? a.flat(k) : b.flat(k));
}

TEST(PointwiseBinary, MaskedFillBroadcastsTheMask) {
  TT x({2, 3, 4}), m({3, 1}, ET_DTYPE_BOOL, 3), out({2, 3, 4});
  auto v = real(-std::numeric_limits<double>::infinity());
  ASSERT_EQ(run("aten::masked_fill.Scalar_out", {&x.v, &m.v, &v->v, &out.v}), "");
  for_each_index(out.sizes, [&](const std::vector<int64_t>& i) {
    double expected = m.get({i[1], 0}) ? -INFINITY : x.get(i);
    ASSERT_EQ(out.get(i), expected);
  });
  TT x0({}), m0({}, ET_DTYPE_BOOL), out0({});
  m0.store(0, 1);
  ASSERT_EQ(run("aten::masked_fill.Scalar_out", {&x0.v, &m0.v, &real(2.0)->v, &out0.v}), "");
  EXPECT_EQ(out0.flat(0), 2.0);
  TT xi({4}, ET_DTYPE_INT64), mi({4}, ET_DTYPE_BOOL), oi({4}, ET_DTYPE_INT64);
  xi.set_values({1, 2, 3, 4});
  mi.set_values({1, 0, 1, 0});
  ASSERT_EQ(run("aten::masked_fill.Scalar_out", {&xi.v, &mi.v, &integer(-7)->v, &oi.v}), "");
  EXPECT_EQ(oi.values(), (std::vector<double>{-7, 2, -7, 4}));
}

TEST(PointwiseBinary, RankZeroAndEmpty) {
  TT a({}), b({}), out({});
  ASSERT_EQ(run("aten::div.out", {&a.v, &b.v, &out.v}), "");
  EXPECT_NEAR(out.flat(0), static_cast<float>(a.flat(0) / b.flat(0)), 1e-6);
  TT e({0, 3}), f({3}), eo({0, 3});
  EXPECT_EQ(run("aten::sub.out", {&e.v, &f.v, &integer(1)->v, &eo.v}), "");
  TT eb({0, 3}, ET_DTYPE_BOOL);
  EXPECT_EQ(run("aten::gt.Tensor_out", {&e.v, &f.v, &eb.v}), "");
}

TEST(PointwiseBinary, DynamicOutputIsResized) {
  TT a({2, 1}), b({3}), out({1, 1}, ET_DTYPE_FLOAT32, 1, 8, ET_SHAPE_DYNAMIC_BOUND);
  ASSERT_EQ(run("aten::maximum.out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(out.sizes, (std::vector<int64_t>{2, 3}));
  expect_binary(a, b, out, [](double x, double y) { return std::max(x, y); });
}

// ---------------------------------------------------------------- rejections

TEST(PointwiseBinaryRejects, ShapesThatDoNotBroadcast) {
  TT a({2, 3}), b({4}), out({2, 3});
  EXPECT_THAT(run("aten::sub.out", {&a.v, &b.v, &integer(1)->v, &out.v}),
              HasSubstr("aten::sub.out: shapes [2, 3] and [4] are not broadcastable"));
}

TEST(PointwiseBinaryRejects, FloatResultIntoIntegerOutput) {
  TT a({3}), b({3}), out({3}, ET_DTYPE_INT64);
  EXPECT_THAT(run("aten::add.out", {&a.v, &b.v, &integer(1)->v, &out.v}),
              HasSubstr("result type float32 can't be cast to the output dtype int64"));
}

TEST(PointwiseBinaryRejects, ComparisonIntoBoolOnlyFromBool) {
  TT a({3}), b({3}), out({3}, ET_DTYPE_BOOL);
  EXPECT_THAT(run("aten::mul.out", {&a.v, &b.v, &out.v}), HasSubstr("can't be cast to the output dtype bool"));
}

TEST(PointwiseBinaryRejects, BoolSubtraction) {
  TT a({3}, ET_DTYPE_BOOL), b({3}, ET_DTYPE_BOOL), out({3}, ET_DTYPE_BOOL);
  EXPECT_THAT(run("aten::sub.out", {&a.v, &b.v, &integer(1)->v, &out.v}),
              HasSubstr("subtraction of two bool operands is not supported"));
}

TEST(PointwiseBinaryRejects, FloatingAlphaWithIntegerOperands) {
  TT a({3}, ET_DTYPE_INT64), b({3}, ET_DTYPE_INT64), out({3}, ET_DTYPE_INT64);
  EXPECT_THAT(run("aten::add.out", {&a.v, &b.v, &real(0.5)->v, &out.v}),
              HasSubstr("alpha must be an integer for int64 operands"));
}

TEST(PointwiseBinaryRejects, UnknownRoundingMode) {
  TT a({3}), b({3}), out({3});
  EXPECT_THAT(run("aten::div.out_mode", {&a.v, &b.v, &string("ceil")->v, &out.v}),
              HasSubstr("rounding_mode must be None, 'trunc' or 'floor', got 'ceil'"));
}

TEST(PointwiseBinaryRejects, IntegerDivisionByZero) {
  TT a({3}, ET_DTYPE_INT64), b({3}, ET_DTYPE_INT64), out({3}, ET_DTYPE_INT64);
  b.set_values({1, 0, 2});
  EXPECT_THAT(run("aten::div.out_mode", {&a.v, &b.v, &string("floor")->v, &out.v}),
              HasSubstr("integer division by zero"));
}

TEST(PointwiseBinaryRejects, NegativeIntegerPower) {
  TT a({3}, ET_DTYPE_INT64), out({3}, ET_DTYPE_INT64);
  EXPECT_THAT(run("aten::pow.Tensor_Scalar_out", {&a.v, &integer(-1)->v, &out.v}),
              HasSubstr("integers to negative integer powers are not allowed"));
}

TEST(PointwiseBinaryRejects, BitwiseOnFloats) {
  TT a({3}), b({3}), out({3});
  EXPECT_THAT(run("aten::bitwise_and.Tensor_out", {&a.v, &b.v, &out.v}),
              HasSubstr("bitwise operations need integral or bool operands, got float32"));
}

TEST(PointwiseBinaryRejects, UnsupportedDtype) {
  TT a({3}), b({3}), out({3});
  b.t.dtype = 9;  // ExecuTorch's ComplexFloat (float16 and bfloat16 are computed in float32: half_kernels_test)
  EXPECT_THAT(run("aten::mul.out", {&a.v, &b.v, &out.v}), HasSubstr("dtype unknown is not supported"));
}

TEST(PointwiseBinaryRejects, WhereConditionMustBeBool) {
  TT c({3}), a({3}), b({3}), out({3});
  EXPECT_THAT(run("aten::where.self_out", {&c.v, &a.v, &b.v, &out.v}),
              HasSubstr("condition/mask dtype must be bool, got float32"));
}

TEST(PointwiseBinaryRejects, MaskedFillMaskMustBroadcastToSelf) {
  TT x({3}), m({2, 3}, ET_DTYPE_BOOL), out({2, 3});
  EXPECT_THAT(run("aten::masked_fill.Scalar_out", {&x.v, &m.v, &real(0)->v, &out.v}),
              HasSubstr("mask of shape [2, 3] does not broadcast to self's shape [3]"));
}

TEST(PointwiseBinaryRejects, WrongArgumentCountAndKinds) {
  TT a({3}), b({3}), out({3});
  EXPECT_THAT(run("aten::div.out", {&a.v, &b.v}), HasSubstr("aten::div.out: expected 4 arguments, got 3"));
  EXPECT_THAT(run("aten::mul.Scalar_out", {&a.v, &b.v, &out.v}),
              HasSubstr("aten::mul.Scalar_out: argument 1 'other' must be a Scalar (int, float or bool), got Tensor"));
  EXPECT_THAT(run("aten::eq.Tensor_out", {&a.v, &integer(1)->v, &out.v}),
              HasSubstr("aten::eq.Tensor_out: argument 1 'other' must be a Tensor, got int"));
}

TEST(PointwiseBinaryRejects, StaticOutputOfAnotherShape) {
  TT a({2, 3}), b({2, 3}), out({3, 2});
  EXPECT_THAT(run("aten::div.out", {&a.v, &b.v, &out.v}),
              HasSubstr("output shape [3, 2] does not match the result shape [2, 3] and the output has a static shape"));
}

TEST(PointwiseBinaryRejects, DynamicOutputTooSmall) {
  TT a({4, 4}), b({4, 4}), out({2, 2}, ET_DTYPE_FLOAT32, 1, 4, ET_SHAPE_DYNAMIC_BOUND);
  EXPECT_THAT(run("aten::div.out", {&a.v, &b.v, &out.v}),
              HasSubstr("result shape [4, 4] needs 64 bytes but the output holds only 16"));
}

TEST(PointwiseBinaryRejects, OutputOfAnotherRank) {
  TT a({2, 3}), b({2, 3}), out({6});
  EXPECT_THAT(run("aten::mul.out", {&a.v, &b.v, &out.v}), HasSubstr("output has rank 1 [6] but the result has shape [2, 3]"));
}

}  // namespace

// ---------------------------------------------------------------- add / mul

namespace add_mul {

using etrt_test::Tensor;
using etrt_test::run_kernel;
using etrt_test::scalar;

// Reference: out[i] = a[bcast(i)] (+ alpha *|*) b[bcast(i)] in double.
void expect_matches(const Tensor& a, const Tensor& b, const Tensor& out, bool add, double alpha) {
  size_t rank = out.sizes.size(), n = 1;
  for (int64_t s : out.sizes) n *= static_cast<size_t>(s);
  std::vector<int64_t> index(rank, 0);
  for (size_t flat = 0; flat < n; ++flat) {
    size_t rest = flat;
    for (size_t d = rank; d-- > 0;) {
      index[d] = static_cast<int64_t>(rest % out.sizes[d]);
      rest /= out.sizes[d];
    }
    auto pick = [&](const Tensor& t) {
      std::vector<int64_t> i(t.sizes.size());
      for (size_t d = 0; d < i.size(); ++d) {
        int64_t od = index[rank - i.size() + d];
        i[d] = t.sizes[d] == 1 ? 0 : od;
      }
      return static_cast<double>(t.at(i));
    };
    double expected = add ? pick(a) + alpha * pick(b) : pick(a) * pick(b);
    ASSERT_NEAR(out.at(index), expected, 1e-5 + 1e-6 * std::abs(expected)) << "at flat index " << flat;
  }
}

TEST(BinaryElementwise, AddSameShapeLargeRunsInParallelAndMatches) {
  Tensor a({1024, 1025}), b({1024, 1025}), out({1024, 1025});
  et_value alpha = scalar(1);
  ASSERT_EQ(run_kernel("aten::add.out", {&a.v, &b.v, &alpha, &out.v}), "");
  expect_matches(a, b, out, true, 1.0);
}

TEST(BinaryElementwise, AddBroadcastsWithAlpha) {
  Tensor a({2, 3}), b({3}), out({2, 3});
  et_value alpha = scalar(2);
  ASSERT_EQ(run_kernel("aten::add.out", {&a.v, &b.v, &alpha, &out.v}), "");
  expect_matches(a, b, out, true, 2.0);
}

TEST(BinaryElementwise, MulBroadcastsBothWays) {
  Tensor a({4, 1, 3}), b({5, 1}), out({4, 5, 3});
  ASSERT_EQ(run_kernel("aten::mul.out", {&a.v, &b.v, &out.v}), "");
  expect_matches(a, b, out, false, 1.0);
}

TEST(BinaryElementwise, RankZeroAndEmpty) {
  Tensor a({}), b({}), out({});
  ASSERT_EQ(run_kernel("aten::mul.out", {&a.v, &b.v, &out.v}), "");
  EXPECT_FLOAT_EQ(out.data[0], a.data[0] * b.data[0]);
  Tensor e1({0, 3}), e2({0, 3}), eout({0, 3});
  et_value alpha = scalar(1);
  EXPECT_EQ(run_kernel("aten::add.out", {&e1.v, &e2.v, &alpha, &eout.v}), "");
}

TEST(BinaryElementwise, StridedInputIsReadThroughItsStrides) {
  // b is a transposed view: sizes [3, 2] over storage laid out as [2, 3].
  Tensor a({3, 2}), b({3, 2}), out({3, 2});
  b.strides = {1, 3};
  b.t.strides = b.strides.data();
  ASSERT_EQ(run_kernel("aten::mul.out", {&a.v, &b.v, &out.v}), "");
  expect_matches(a, b, out, false, 1.0);
}

TEST(BinaryElementwise, DynamicOutputIsResizedWithinCapacity) {
  Tensor a({2, 3}), b({2, 3}), out({1, 1}, 16, ET_SHAPE_DYNAMIC_BOUND);
  et_value alpha = scalar(1);
  ASSERT_EQ(run_kernel("aten::add.out", {&a.v, &b.v, &alpha, &out.v}), "");
  EXPECT_EQ(out.sizes, (std::vector<int64_t>{2, 3}));
  expect_matches(a, b, out, true, 1.0);
}

TEST(BinaryElementwise, Rejections) {
  Tensor a({2, 3}), b({4}), out({2, 3});
  et_value alpha = scalar(1);
  EXPECT_THAT(run_kernel("aten::add.out", {&a.v, &b.v, &alpha, &out.v}), HasSubstr("are not broadcastable"));
  Tensor c({2, 3}), wrong_out({3, 3});
  EXPECT_THAT(run_kernel("aten::mul.out", {&a.v, &c.v, &wrong_out.v}), HasSubstr("static shape"));
  // int64 is supported now (see MixedFloatAndInt64PromotesToFloat), half types too (half_kernels_test); complex not.
  Tensor h({2, 3});
  h.t.dtype = 9;
  EXPECT_THAT(run_kernel("aten::mul.out", {&a.v, &h.v, &out.v}), HasSubstr("dtype unknown is not supported"));
  EXPECT_THAT(run_kernel("aten::mul.out", {&a.v, &c.v}), HasSubstr("expected 4 arguments, got 3"));
  EXPECT_THAT(run_kernel("aten::add.out", {&a.v, &c.v, &a.v, &out.v}), HasSubstr("aten::add.out: argument 2 'alpha' must be a Scalar (int, float or bool), got Tensor"));
}

TEST(BinaryElementwise, MixedFloatAndInt64PromotesToFloat) {
  // int64 storage for b: 6 elements of 8 bytes.
  Tensor a({2, 3}), b({2, 3}), out({2, 3});
  std::vector<int64_t> ints = {-3, -1, 0, 2, 5, 7};
  b.t.dtype = ET_DTYPE_INT64;
  b.t.data = ints.data();
  b.t.nbytes = b.t.capacity_bytes = ints.size() * sizeof(int64_t);
  ASSERT_EQ(run_kernel("aten::mul.out", {&a.v, &b.v, &out.v}), "");
  for (size_t k = 0; k < ints.size(); ++k)
    EXPECT_FLOAT_EQ(out.data[k], a.data[k] * static_cast<float>(ints[k])) << k;
}

}  // namespace add_mul

// ------------------------------------------------- bool bytes other than 0 / 1

// A program's constants or np.frombuffer may hold bool bytes like 2 and 4: every
// kernel reads them as true (loading them as C++ bool would be undefined).
namespace bool_bytes {

using namespace pw_test;

void set_bytes(TT& t, const std::vector<uint8_t>& bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) t.bytes()[i] = static_cast<char>(bytes[i]);
}
std::vector<int> raw_bytes(const TT& t) {
  std::vector<int> out;
  for (size_t i = 0; i < t.numel(); ++i) out.push_back(static_cast<uint8_t>(t.bytes()[i]));
  return out;
}

TEST(BoolBytes, LogicalOpsTreatAnyNonzeroByteAsTrue) {
  TT a({4}, ET_DTYPE_BOOL), b({4}, ET_DTYPE_BOOL), out({4}, ET_DTYPE_BOOL);
  set_bytes(a, {2, 4, 0, 2});
  set_bytes(b, {1, 1, 1, 0});
  ASSERT_EQ(run("aten::logical_and.out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(raw_bytes(out), (std::vector<int>{1, 1, 0, 0}));
  ASSERT_EQ(run("aten::logical_xor.out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(raw_bytes(out), (std::vector<int>{0, 0, 1, 1}));
  ASSERT_EQ(run("aten::eq.Tensor_out", {&a.v, &b.v, &out.v}), "");
  EXPECT_EQ(raw_bytes(out), (std::vector<int>{1, 1, 0, 0}));
  TT sum({4}, ET_DTYPE_INT64);
  ASSERT_EQ(run("aten::add.out", {&a.v, &b.v, &integer(1)->v, &sum.v}), "");
  EXPECT_EQ(sum.values(), (std::vector<double>{2, 2, 1, 1}));
}

TEST(BoolBytes, WhereAndMaskedFillSelectOnAnyNonzeroByte) {
  TT cond({3}, ET_DTYPE_BOOL), x({3}), y({3}), out({3});
  set_bytes(cond, {2, 0, 4});
  x.set_values({1, 2, 3});
  y.set_values({-1, -2, -3});
  ASSERT_EQ(run("aten::where.self_out", {&cond.v, &x.v, &y.v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{1, -2, 3}));
  TT strided_out({3});
  ASSERT_EQ(run("aten::masked_fill.Scalar_out", {&x.v, &cond.v, &real(9)->v, &strided_out.v}), "");
  EXPECT_EQ(strided_out.values(), (std::vector<double>{9, 2, 9}));
}

}  // namespace bool_bytes
