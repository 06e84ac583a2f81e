// Accuracy of the float32 vector math (plugins/common/vector_math.h) against
// libm in double: a sweep through the whole float range by bit pattern (every
// binade, subnormals included), a dense sweep of the range where each function
// does its work, and the special values (±0, ±inf, NaN, subnormals, overflow and
// underflow edges). Each function's bound is stated in kBounds below.

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "vector_math.h"

namespace {

using ArrayFn = void (*)(const float*, float*, size_t);
using Reference = std::function<double(double)>;

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// The spacing of floats at the magnitude of ref (the subnormal spacing below FLT_MIN).
double ulp_at(double ref) {
  const double a = std::fabs(ref);
  if (a < FLT_MIN) return std::ldexp(1.0, -149);
  int e = 0;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  return std::ldexp(1.0, e - 1 - 23);
}

// Error of got against the exact ref in float ulps; NaN and infinities must match
// exactly (an overflowing reference accepts inf or ±FLT_MAX).
double ulp_error(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0.0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  const float rounded = static_cast<float>(ref);
  if (std::isinf(rounded) || std::isinf(got)) {
    if (got == rounded) return 0.0;
    if (std::isinf(rounded) && std::fabs(got) == FLT_MAX && std::signbit(got) == std::signbit(rounded)) return 1.0;
    return INFINITY;
  }
  return std::fabs(static_cast<double>(got) - ref) / ulp_at(ref);
}

struct Worst {
  double error = 0;
  float at = 0;
  float got = 0;
  double ref = 0;
  void add(float x, float g, double r, double e) {
    if (e > error || std::isnan(e)) error = e, at = x, got = g, ref = r;
  }
  std::string describe() const {
    return "x=" + std::to_string(at) + " (" + std::to_string(double(at)) + ") got " + std::to_string(got) +
           " want " + std::to_string(ref);
  }
};

// Evaluates fn on xs and records the worst error; `absolute` measures |got - ref| / max(1, |x|) instead of ulps.
void measure(ArrayFn fn, const Reference& ref, const std::vector<float>& xs, Worst& worst, bool absolute) {
  std::vector<float> ys(xs.size());
  fn(xs.data(), ys.data(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double r = ref(xs[i]);
    double e;
    if (absolute && std::isfinite(r) && std::isfinite(ys[i]))
      e = std::fabs(ys[i] - r) / std::max(1.0, std::fabs(static_cast<double>(xs[i])));
    else e = ulp_error(ys[i], r);
    worst.add(xs[i], ys[i], r, e);
  }
}

// Every 1031st bit pattern over all 2^32 (about 4.2 million floats, all binades).
std::vector<float> bit_pattern_sweep(uint32_t offset) {
  std::vector<float> xs;
  xs.reserve((1ull << 32) / 1031 + 1);
  for (uint64_t b = offset; b < (1ull << 32); b += 1031) xs.push_back(from_bits(static_cast<uint32_t>(b)));
  return xs;
}

std::vector<float> linear_sweep(float lo, float hi, size_t count) {
  std::vector<float> xs(count);
  for (size_t i = 0; i < count; ++i) xs[i] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(count - 1);
  return xs;
}

std::vector<float> special_values() {
  const float inf = INFINITY, nan = NAN;
  std::vector<float> v = {0.0f, -0.0f, inf, -inf, nan, -nan, FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX,
                          FLT_TRUE_MIN, -FLT_TRUE_MIN, from_bits(0x007fffff), from_bits(0x807fffff), 1.0f, -1.0f,
                          88.72283f, 88.7228394f, 88.73f, -87.33655f, -103.97208f, -103.98f, -104.0f, 1e-30f,
                          -1e-30f, 1e-8f, -1e-8f, 0.5f, -0.5f, 20.0f, -20.0f, 9.0f, -9.0f, 10.1f, 1.5707964f,
                          3.1415927f, 8388607.0f, 8388608.0f, 1e10f, -1e10f, std::nextafter(-1.0f, -2.0f),
                          std::nextafter(-1.0f, 0.0f), std::nextafter(1.0f, 0.0f), std::nextafter(1.0f, 2.0f)};
  return v;
}

struct Case {
  const char* name;
  ArrayFn fn;
  Reference ref;
  double bound;             // max ulps, or max |error| / max(1, |x|) when absolute
  bool absolute;
  float dense_lo, dense_hi;  // where the function does its work
};

const double kInvSqrt2 = 0.70710678118654752440;
const double kSqrt2OverPi = 0.79788456080286535588;

std::vector<Case> cases() {
  return {
      {"exp", etrt::vm::vexp, [](double x) { return std::exp(x); }, 1.5, false, -105.0f, 90.0f},
      {"expm1", etrt::vm::vexpm1, [](double x) { return std::expm1(x); }, 2.0, false, -25.0f, 25.0f},
      {"log", etrt::vm::vlog, [](double x) { return std::log(x); }, 1.5, false, 0.0f, 4.0f},
      {"log1p", etrt::vm::vlog1p, [](double x) { return std::log1p(x); }, 2.0, false, -1.0f, 4.0f},
      {"tanh", etrt::vm::vtanh, [](double x) { return std::tanh(x); }, 3.0, false, -10.0f, 10.0f},
      {"sigmoid", etrt::vm::vsigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 3.0, false, -110.0f, 30.0f},
      {"erf", etrt::vm::verf, [](double x) { return std::erf(x); }, 1e-6, true, -5.0f, 5.0f},
      {"erf_ulp", etrt::vm::verf, [](double x) { return std::erf(x); }, 4.0, false, -5.0f, 5.0f},
      {"gelu_erf", etrt::vm::vgelu_erf, [](double x) { return 0.5 * x * std::erfc(-x * kInvSqrt2); }, 1e-6, true,
       -15.0f, 15.0f},
      {"gelu_tanh", etrt::vm::vgelu_tanh,
       [](double x) { return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x))); }, 1e-6, true,
       -15.0f, 15.0f},
      {"sin", etrt::vm::vsin, [](double x) { return std::sin(x); }, 1.0, false, -10.0f, 10.0f},
      {"cos", etrt::vm::vcos, [](double x) { return std::cos(x); }, 1.0, false, -10.0f, 10.0f},
      {"rsqrt", etrt::vm::vrsqrt, [](double x) { return 1.0 / std::sqrt(x); }, 1.5, false, 0.0f, 4.0f},
  };
}

class VectorMath : public ::testing::TestWithParam<size_t> {};

TEST_P(VectorMath, WithinBoundOverTheWholeRange) {
  const Case c = cases()[GetParam()];
  Worst sweep, dense, special;
  measure(c.fn, c.ref, bit_pattern_sweep(static_cast<uint32_t>(GetParam()) * 7u), sweep, c.absolute);
  measure(c.fn, c.ref, linear_sweep(c.dense_lo, c.dense_hi, 1 << 20), dense, c.absolute);
  measure(c.fn, c.ref, special_values(), special, c.absolute);
  std::printf("%-10s max error: sweep %.3g, dense %.3g, special %.3g (bound %.3g %s)\n", c.name, sweep.error,
              dense.error, special.error, c.bound, c.absolute ? "absolute" : "ulp");
  EXPECT_LE(sweep.error, c.bound) << c.name << " bit-pattern sweep, worst at " << sweep.describe();
  EXPECT_LE(dense.error, c.bound) << c.name << " dense sweep, worst at " << dense.describe();
  EXPECT_LE(special.error, c.bound) << c.name << " special values, worst at " << special.describe();
}

INSTANTIATE_TEST_SUITE_P(Functions, VectorMath, ::testing::Range<size_t>(0, 13), [](const auto& info) {
  return std::string(cases()[info.param].name);
});

// Values the kernels rely on exactly.
TEST(VectorMathSpecial, ExactValues) {
  const float inf = INFINITY;
  auto one = [](ArrayFn fn, float x) {
    float y = 0;
    fn(&x, &y, 1);
    return y;
  };
  using namespace etrt::vm;
  EXPECT_EQ(one(vexp, -inf), 0.0f);
  EXPECT_EQ(one(vexp, inf), inf);
  EXPECT_EQ(one(vexp, 0.0f), 1.0f);
  EXPECT_EQ(one(vexp, -200.0f), 0.0f);
  EXPECT_EQ(one(vexpm1, -inf), -1.0f);
  EXPECT_EQ(one(vexpm1, inf), inf);
  EXPECT_TRUE(std::signbit(one(vexpm1, -0.0f)));
  EXPECT_EQ(one(vlog, 0.0f), -inf);
  EXPECT_EQ(one(vlog, -0.0f), -inf);
  EXPECT_TRUE(std::isnan(one(vlog, -1.0f)));
  EXPECT_TRUE(std::isnan(one(vlog, -inf)));
  EXPECT_EQ(one(vlog, inf), inf);
  EXPECT_EQ(one(vlog, 1.0f), 0.0f);
  EXPECT_EQ(one(vlog1p, -1.0f), -inf);
  EXPECT_TRUE(std::isnan(one(vlog1p, -2.0f)));
  EXPECT_TRUE(std::signbit(one(vlog1p, -0.0f)));
  EXPECT_EQ(one(vtanh, inf), 1.0f);
  EXPECT_EQ(one(vtanh, -inf), -1.0f);
  EXPECT_TRUE(std::signbit(one(vtanh, -0.0f)));
  EXPECT_EQ(one(vsigmoid, -inf), 0.0f);
  EXPECT_EQ(one(vsigmoid, inf), 1.0f);
  EXPECT_EQ(one(vsigmoid, 0.0f), 0.5f);
  EXPECT_EQ(one(verf, inf), 1.0f);
  EXPECT_EQ(one(verf, -inf), -1.0f);
  EXPECT_EQ(one(vgelu_erf, inf), inf);
  EXPECT_EQ(one(vgelu_tanh, inf), inf);
  EXPECT_EQ(one(vrsqrt, 0.0f), inf);
  EXPECT_EQ(one(vrsqrt, -0.0f), -inf);
  EXPECT_TRUE(std::isnan(one(vrsqrt, -1.0f)));
  EXPECT_TRUE(std::isnan(one(vsin, inf)));
  EXPECT_TRUE(std::isnan(one(vcos, -inf)));
  for (ArrayFn fn : {vexp, vexpm1, vlog, vlog1p, vtanh, vsigmoid, verf, vgelu_erf, vgelu_tanh, vsin, vcos, vrsqrt})
    EXPECT_TRUE(std::isnan(one(fn, NAN)));
}

// Tails (n not a multiple of 8) are computed, nothing past n is written, and in-place works.
TEST(VectorMathSpecial, TailsAndInPlace) {
  for (size_t n = 0; n <= 19; ++n) {
    std::vector<float> x(n + 8), y(n + 8, 42.0f);
    for (size_t i = 0; i < n; ++i) x[i] = 0.25f * static_cast<float>(i) - 2.0f;
    etrt::vm::vexp(x.data(), y.data(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(y[i], std::exp(x[i]), 1e-6 * std::exp(x[i])) << n << " " << i;
    for (size_t i = n; i < n + 8; ++i) EXPECT_EQ(y[i], 42.0f) << "wrote past the end, n=" << n;
    etrt::vm::vtanh(x.data(), x.data(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(x[i], std::tanh(0.25 * double(i) - 2.0), 1e-6);
  }
}

// pow: ulp error against double pow over bit-pattern and ordinary pairs, and libm's special cases exactly.
TEST(VectorMathPow, WithinOneUlpAndSpecialCasesAsLibm) {
  std::vector<float> xs, ys;
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 32);
  };
  for (int i = 0; i < 400000; ++i) {  // arbitrary bit patterns: mostly over/underflow and the libm lanes
    xs.push_back(from_bits(next()));
    ys.push_back(from_bits(next()));
  }
  for (int i = 0; i < 1000000; ++i) {  // the useful range
    xs.push_back(static_cast<float>(next()) * (100.0f / 4294967296.0f));
    ys.push_back(static_cast<float>(next()) * (40.0f / 4294967296.0f) - 20.0f);
  }
  for (int i = 0; i < 200000; ++i) {  // negative bases with integral exponents
    xs.push_back(-static_cast<float>(next()) * (10.0f / 4294967296.0f));
    ys.push_back(static_cast<float>(static_cast<int>(next() % 41) - 20));
  }
  const std::vector<float> specials = special_values();
  for (float a : specials)
    for (float b : {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, 3.0f, -3.0f, 0.5f, -0.5f, 2.5f, INFINITY, -INFINITY, NAN,
                    16777216.0f, 16777217.0f, 1e10f})
      xs.push_back(a), ys.push_back(b), xs.push_back(b), ys.push_back(a);
  std::vector<float> zs(xs.size());
  etrt::vm::vpow(xs.data(), ys.data(), zs.data(), xs.size());
  double worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double e = ulp_error(zs[i], std::pow(static_cast<double>(xs[i]), static_cast<double>(ys[i])));
    if (e > worst || std::isnan(e)) worst = e, worst_at = i;
  }
  std::printf("pow max error %.3g ulp\n", worst);
  EXPECT_LE(worst, 1.0) << "pow(" << xs[worst_at] << ", " << ys[worst_at] << ") = " << zs[worst_at] << ", want "
                        << std::pow(static_cast<double>(xs[worst_at]), static_cast<double>(ys[worst_at]));
}

}  // namespace
