// etrt/half.hpp: float16 and bfloat16 conversions against references built independently (the sorted table
// of every float16 value, and the two bfloat16 neighbours of a float), and the F16C path against the portable
// one where the CPU has F16C.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>
#if defined(ETRT_TEST_F16C)
#include <cpuid.h>
#endif

#include "etrt/half.hpp"

#if defined(ETRT_TEST_F16C)
uint16_t f16c_half_from_float(float f);
float f16c_half_to_float(uint16_t h);
void f16c_half_from_float_bulk(const float* in, uint16_t* out, size_t n);
#endif

namespace {

using etrt::plugin::BFloat16;
using etrt::plugin::Half;
using etrt::plugin::half_detail::half_from_float_portable;
using etrt::plugin::half_detail::half_to_float_portable;

// float16's value of bits h, from the format's definition (sign, 5-bit exponent bias 15, 10-bit mantissa).
double half_value(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  double magnitude = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  if (exponent == 0x1F) magnitude = mantissa == 0 ? INFINITY : NAN;
  return sign ? -magnitude : magnitude;
}

// The float16 nearest to f, ties to the even mantissa, by search over every finite non-negative float16.
uint16_t reference_half(float f) {
  static const std::vector<double> table = [] {
    std::vector<double> t;
    for (uint32_t h = 0; h < 0x7C00; ++h) t.push_back(half_value(static_cast<uint16_t>(h)));
    return t;
  }();
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (std::isnan(f)) return 0x7E00;  // any NaN; callers compare NaN-ness only
  if (a >= 65520.0) return sign | 0x7C00;  // 65504 + half an ulp and above: infinity (the tie goes to even = inf)
  size_t hi = static_cast<size_t>(std::lower_bound(table.begin(), table.end(), a) - table.begin());
  if (hi == 0) return sign;
  if (hi == table.size()) return sign | 0x7BFF;  // above 65504, below the midpoint to infinity
  if (table[hi] == a) return static_cast<uint16_t>(sign | hi);
  size_t lo = hi - 1;
  double dl = a - table[lo], dh = table[hi] - a;
  size_t pick = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<uint16_t>(sign | pick);
}

// The bfloat16 nearest to f (its two neighbours are f truncated and one step above), ties to even.
uint16_t reference_bfloat16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t lo = x & 0xFFFF0000u, hi = lo + 0x10000u;
  const double a = std::fabs(static_cast<double>(f));
  const double dl = a - std::fabs(static_cast<double>(std::bit_cast<float>(lo)));
  const double dh = std::fabs(static_cast<double>(std::bit_cast<float>(hi))) - a;
  uint32_t pick = dl < dh ? lo : dh < dl ? hi : ((lo >> 16) % 2 == 0 ? lo : hi);
  return static_cast<uint16_t>(pick >> 16);
}

// Floats to convert: a stride through every bit pattern plus the values around float16's edges.
std::vector<float> sample_floats() {
  std::vector<float> v;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 4093) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (float f : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 65536.0f, 6.1035156e-05f, 5.9604645e-08f,
                  2.9802322e-08f, 2.9802326e-08f, 1e-9f, 1.0f, 1.0009765625f, 3.4e38f})
    v.push_back(f), v.push_back(-f);
  return v;
}

TEST(HalfConversion, EveryFloat16RoundTripsExactly) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const Half x{static_cast<uint16_t>(h)};
    const float f = etrt::plugin::to_float(x);
    const double want = half_value(x.bits);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE(std::isnan(etrt::plugin::to_float(etrt::plugin::half_from_float(f)))) << h;
      EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0) << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), want) << std::hex << h;
    ASSERT_EQ(half_to_float_portable(x.bits), f) << std::hex << h;
    ASSERT_EQ(etrt::plugin::half_from_float(f).bits, x.bits) << std::hex << h;  // incl. -0, subnormals, inf
    ASSERT_EQ(half_from_float_portable(f), x.bits) << std::hex << h;
  }
}

TEST(HalfConversion, Float16RoundsToNearestEven) {
  for (float f : sample_floats()) {
    if (std::isnan(f)) continue;
    const uint16_t want = reference_half(f);
    ASSERT_EQ(etrt::plugin::half_from_float(f).bits, want) << f;
    ASSERT_EQ(half_from_float_portable(f), want) << f;
  }
}

TEST(HalfConversion, Float16TiesGoToEvenIncludingSubnormalsAndOverflow) {
  // Every midpoint between adjacent positive float16 values is a float: it must round to the even neighbour,
  // and the floats just beside it to the nearer one.
  for (uint16_t h = 0; h < 0x7BFF; ++h) {
    const double mid = (half_value(h) + half_value(static_cast<uint16_t>(h + 1))) / 2;
    const float m = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(m), mid);
    const uint16_t even = (h % 2 == 0) ? h : static_cast<uint16_t>(h + 1);
    ASSERT_EQ(half_from_float_portable(m), even) << h;
    ASSERT_EQ(etrt::plugin::half_from_float(m).bits, even) << h;
    ASSERT_EQ(etrt::plugin::half_from_float(-m).bits, even | 0x8000) << h;
    ASSERT_EQ(half_from_float_portable(std::nextafter(m, 0.0f)), h) << h;
    ASSERT_EQ(half_from_float_portable(std::nextafter(m, INFINITY)), h + 1) << h;
  }
  EXPECT_EQ(half_from_float_portable(65519.996f), 0x7BFF);  // below the midpoint to infinity: the largest finite
  EXPECT_EQ(half_from_float_portable(65520.0f), 0x7C00);    // the midpoint: ties to even = infinity
  EXPECT_EQ(half_from_float_portable(-1e10f), 0xFC00);
  EXPECT_EQ(half_from_float_portable(2.9802322e-08f), 0x0000);  // exactly half the smallest subnormal: to 0 (even)
  EXPECT_EQ(half_from_float_portable(2.9802326e-08f), 0x0001);  // just above it: the smallest subnormal
  EXPECT_EQ(half_from_float_portable(-1e-30f), 0x8000);         // underflow keeps the sign
}

TEST(HalfConversion, Float16NaNAndInfinity) {
  for (uint32_t bits : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x7FBFFFFFu, 0xFFFFFFFFu, 0x7F802000u}) {
    const float nan = std::bit_cast<float>(bits);
    const uint16_t h = half_from_float_portable(nan);
    EXPECT_EQ(h & 0x7C00, 0x7C00) << std::hex << bits;
    EXPECT_NE(h & 0x3FF, 0) << std::hex << bits;  // still NaN, never infinity
    EXPECT_EQ((h & 0x8000) != 0, (bits >> 31) != 0) << std::hex << bits;
    EXPECT_TRUE(std::isnan(etrt::plugin::to_float(etrt::plugin::half_from_float(nan))));
  }
  EXPECT_EQ(half_from_float_portable(INFINITY), 0x7C00);
  EXPECT_EQ(half_from_float_portable(-INFINITY), 0xFC00);
  EXPECT_EQ(half_to_float_portable(0x7C00), INFINITY);
}

TEST(BFloat16Conversion, RoundTripRoundingNaNAndInfinity) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const float f = etrt::plugin::to_float(BFloat16{static_cast<uint16_t>(b)});
    ASSERT_EQ(std::bit_cast<uint32_t>(f), b << 16);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(etrt::plugin::to_float(etrt::plugin::bfloat16_from_float(f)))) << b;
      continue;
    }
    ASSERT_EQ(etrt::plugin::bfloat16_from_float(f).bits, b) << std::hex << b;
    // The midpoint to the next value (a float) goes to the even one.
    if ((b & 0x7FFF) < 0x7F7F) {
      const float mid = std::bit_cast<float>((b << 16) | 0x8000u);
      ASSERT_EQ(etrt::plugin::bfloat16_from_float(mid).bits, (b % 2 == 0) ? b : b + 1) << std::hex << b;
    }
  }
  for (float f : sample_floats()) {
    if (std::isnan(f) || std::isinf(f)) continue;
    const uint16_t want = std::fabs(f) >= 3.3961775e38f ? (std::signbit(f) ? 0xFF80 : 0x7F80) : reference_bfloat16(f);
    ASSERT_EQ(etrt::plugin::bfloat16_from_float(f).bits, want) << f;
  }
  EXPECT_EQ(etrt::plugin::bfloat16_from_float(3.4028235e38f).bits, 0x7F80);  // rounds up past the largest: inf
  EXPECT_EQ(etrt::plugin::bfloat16_from_float(1e-40f).bits, 0x0001);        // float subnormals keep their top bits
  const uint16_t nan = etrt::plugin::bfloat16_from_float(std::bit_cast<float>(0x7F800001u)).bits;  // payload below bit 16
  EXPECT_TRUE(std::isnan(etrt::plugin::to_float(BFloat16{nan})));
  EXPECT_EQ(etrt::plugin::bfloat16_from_float(-INFINITY).bits, 0xFF80);
}

TEST(HalfConversion, BulkMatchesScalar) {
  std::vector<float> in = sample_floats();
  std::vector<Half> h(in.size());
  std::vector<BFloat16> b(in.size());
  etrt::plugin::half_from_float(in.data(), h.data(), in.size());
  etrt::plugin::half_from_float(in.data(), b.data(), in.size());
  std::vector<float> back(in.size()), back_b(in.size());
  etrt::plugin::half_to_float(h.data(), back.data(), in.size());
  etrt::plugin::half_to_float(b.data(), back_b.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (std::isnan(in[i])) continue;
    ASSERT_EQ(h[i].bits, etrt::plugin::half_from_float(in[i]).bits) << i;
    ASSERT_EQ(b[i].bits, etrt::plugin::bfloat16_from_float(in[i]).bits) << i;
    ASSERT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(etrt::plugin::to_float(h[i]))) << i;
    ASSERT_EQ(std::bit_cast<uint32_t>(back_b[i]), std::bit_cast<uint32_t>(etrt::plugin::to_float(b[i]))) << i;
  }
}

#if defined(ETRT_TEST_F16C)
// CPUID and XCR0 read directly: clang 14 knows no "f16c" for __builtin_cpu_supports (the test did not compile).
bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & bit_F16C) == 0 || (c & bit_OSXSAVE) == 0) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  return (xcr0_lo & 6u) == 6u;  // the OS saves the XMM/YMM state VEX-encoded instructions use
}

TEST(HalfConversion, F16CMatchesPortable) {
  if (!cpu_has_f16c()) GTEST_SKIP() << "this CPU has no F16C";
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float hw = f16c_half_to_float(static_cast<uint16_t>(h));
    const float sw = half_to_float_portable(static_cast<uint16_t>(h));
    ASSERT_EQ(std::bit_cast<uint32_t>(hw), std::bit_cast<uint32_t>(sw)) << std::hex << h;
  }
  std::vector<float> in = sample_floats();
  std::vector<uint16_t> bulk(in.size());
  f16c_half_from_float_bulk(in.data(), bulk.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const uint16_t sw = half_from_float_portable(in[i]);
    if (std::isnan(in[i])) {  // both NaN, both keep the sign
      ASSERT_EQ(f16c_half_from_float(in[i]) & 0x7C00, 0x7C00);
      ASSERT_EQ(bulk[i] & 0x7C00, 0x7C00);
      ASSERT_EQ(f16c_half_from_float(in[i]) & 0x8000, sw & 0x8000);
      continue;
    }
    ASSERT_EQ(f16c_half_from_float(in[i]), sw) << in[i];
    ASSERT_EQ(bulk[i], sw) << in[i];
  }
}
#endif

}  // namespace
