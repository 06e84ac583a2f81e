// Float32 vector math for the kernels of the plugins (kernels_optimized and the
// XNNPACK plugin's own nodes): exp, expm1, log, log1p, tanh, sigmoid, erf, gelu
// (erf and tanh forms), sin, cos, pow and rsqrt on 8 AVX2+FMA lanes, and array
// forms (vexp, ...) that pick the vector code at run time and fall back to libm
// when the CPU lacks AVX2 or FMA.
//
// Header-only and private to the plugins (libetrt exports none of it). The
// vector functions carry target("avx2,fma") attributes, so the including file
// needs no -mavx2; callers check has_avx2_fma() before calling them.
//
// Method: Cody-Waite range reduction and Taylor or least-squares (Chebyshev
// nodes) polynomials fitted for this file; sin, cos and pow reduce and evaluate
// in double lanes, which keeps them within about 1 ulp over the whole range.
// Error bounds are asserted by tests/kernels/vector_math_test.cpp.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define ETRT_VM_X86 1
#define ETRT_VM_TARGET __attribute__((target("avx2,fma"), always_inline)) inline
#else
#define ETRT_VM_X86 0
#endif

namespace etrt::vm {

using cpu::has_avx2_fma;

#if ETRT_VM_X86
namespace avx2 {

ETRT_VM_TARGET __m256 splat(float v) { return _mm256_set1_ps(v); }
ETRT_VM_TARGET __m256 is_nan(__m256 x) { return _mm256_cmp_ps(x, x, _CMP_UNORD_Q); }
ETRT_VM_TARGET __m256 abs(__m256 x) { return _mm256_andnot_ps(splat(-0.0f), x); }
ETRT_VM_TARGET __m256 sign_of(__m256 x) { return _mm256_and_ps(splat(-0.0f), x); }
ETRT_VM_TARGET __m256 select(__m256 mask, __m256 yes, __m256 no) { return _mm256_blendv_ps(no, yes, mask); }
ETRT_VM_TARGET __m256 lt(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
ETRT_VM_TARGET __m256 eq(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
ETRT_VM_TARGET __m256 round_nearest(__m256 x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
// 2^n for integral n in [-126, 127].
ETRT_VM_TARGET __m256 pow2(__m256 n) {
  const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

constexpr float kLog2e = 1.44269504088896341f;
// ln 2 in two parts; n * kLn2Hi is exact for |n| < 2^9.
constexpr float kLn2Hi = 0.693145751953125f;
constexpr float kLn2Lo = 1.42860682030941723212e-6f;

// exp(r) - 1 - r for |r| <= ln2/2: Taylor series to r^9 (truncation < 2^-33 of the result).
ETRT_VM_TARGET __m256 expm1_tail(__m256 r) {
  __m256 p = splat(1.0f / 362880);
  p = _mm256_fmadd_ps(p, r, splat(1.0f / 40320));
  p = _mm256_fmadd_ps(p, r, splat(1.0f / 5040));
  p = _mm256_fmadd_ps(p, r, splat(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, splat(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, splat(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, splat(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, splat(0.5f));
  return _mm256_mul_ps(_mm256_mul_ps(r, r), p);
}

// exp: x = n ln2 + r, exp(x) = 2^n exp(r); 2^n applied in two factors so
// results in the subnormal range round once.
ETRT_VM_TARGET __m256 exp(__m256 x) {
  const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, splat(-104.0f)), splat(89.0f));  // NaN becomes -104
  const __m256 n = round_nearest(_mm256_mul_ps(xc, splat(kLog2e)));
  __m256 r = _mm256_fnmadd_ps(n, splat(kLn2Hi), xc);
  r = _mm256_fnmadd_ps(n, splat(kLn2Lo), r);
  const __m256 p = _mm256_add_ps(_mm256_add_ps(expm1_tail(r), r), splat(1.0f));
  const __m256 n1 = _mm256_floor_ps(_mm256_mul_ps(n, splat(0.5f)));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, pow2(n1)), pow2(_mm256_sub_ps(n, n1)));
  return select(is_nan(x), x, y);
}

// expm1: 2^n (expm1(r) + 1) - 1 = 2^n expm1(r) + (2^n - 1), exact for the small n
// used; beyond |x| = 20 the result is exp(x) or -1 in float.
ETRT_VM_TARGET __m256 expm1(__m256 x) {
  const __m256 xc = _mm256_min_ps(_mm256_max_ps(x, splat(-20.0f)), splat(20.0f));
  const __m256 n = round_nearest(_mm256_mul_ps(xc, splat(kLog2e)));
  __m256 r = _mm256_fnmadd_ps(n, splat(kLn2Hi), xc);
  r = _mm256_fnmadd_ps(n, splat(kLn2Lo), r);
  const __m256 em1r = _mm256_add_ps(expm1_tail(r), r);
  const __m256 t = pow2(n);
  __m256 y = _mm256_fmadd_ps(t, em1r, _mm256_sub_ps(t, splat(1.0f)));
  const __m256 big = _mm256_cmp_ps(x, splat(20.0f), _CMP_GT_OQ);
  if (_mm256_movemask_ps(big) != 0) y = select(big, exp(x), y);
  y = select(lt(x, splat(-20.0f)), splat(-1.0f), y);
  return select(_mm256_or_ps(is_nan(x), eq(x, _mm256_setzero_ps())), x, y);  // NaN, and the sign of zero
}

// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]: with s = f / (2 + f),
// log(1 + f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R(s^2)), R the atanh series past 2s.
ETRT_VM_TARGET __m256 log1p_reduced(__m256 f) {
  const __m256 s = _mm256_div_ps(f, _mm256_add_ps(f, splat(2.0f)));
  const __m256 z = _mm256_mul_ps(s, s);
  __m256 R = splat(2.0f / 11);
  R = _mm256_fmadd_ps(R, z, splat(2.0f / 9));
  R = _mm256_fmadd_ps(R, z, splat(2.0f / 7));
  R = _mm256_fmadd_ps(R, z, splat(2.0f / 5));
  R = _mm256_fmadd_ps(R, z, splat(2.0f / 3));
  R = _mm256_mul_ps(R, z);
  const __m256 hfsq = _mm256_mul_ps(splat(0.5f), _mm256_mul_ps(f, f));
  return _mm256_sub_ps(f, _mm256_fnmadd_ps(s, _mm256_add_ps(hfsq, R), hfsq));
}

// Splits positive finite x into 2^e * m, m in [sqrt(1/2), sqrt(2)); returns m - 1 and sets e.
ETRT_VM_TARGET __m256 log_split(__m256 x, __m256* e) {
  const __m256 subnormal = lt(x, splat(1.17549435e-38f));
  const __m256 xs = select(subnormal, _mm256_mul_ps(x, splat(8388608.0f)), x);  // 2^23
  // Adding 1 - sqrt(1/2) (in the bit pattern) moves the exponent boundary to sqrt(1/2).
  const __m256i bits = _mm256_add_epi32(_mm256_castps_si256(xs), _mm256_set1_epi32(0x3f800000 - 0x3f3504f3));
  const __m256i ei = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
  *e = _mm256_sub_ps(_mm256_cvtepi32_ps(ei), _mm256_and_ps(subnormal, splat(23.0f)));
  const __m256i mbits = _mm256_add_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)),
                                         _mm256_set1_epi32(0x3f3504f3));
  return _mm256_sub_ps(_mm256_castsi256_ps(mbits), splat(1.0f));
}

// log(2^e (1 + f)) + c, c a small correction of the argument's rounding.
ETRT_VM_TARGET __m256 log_assemble(__m256 e, __m256 f, __m256 c) {
  // ln 2 in two parts; e * kLogLn2Hi is exact for |e| < 2^8.
  const __m256 lo = _mm256_fmadd_ps(e, splat(9.05800061e-06f), _mm256_add_ps(log1p_reduced(f), c));
  return _mm256_fmadd_ps(e, splat(0.693138123f), lo);
}

ETRT_VM_TARGET __m256 log(__m256 x) {
  __m256 e;
  const __m256 f = log_split(x, &e);
  __m256 y = log_assemble(e, f, _mm256_setzero_ps());
  y = select(eq(x, _mm256_setzero_ps()), splat(-INFINITY), y);
  y = select(lt(x, _mm256_setzero_ps()), splat(NAN), y);
  return select(_mm256_or_ps(is_nan(x), eq(x, splat(INFINITY))), x, y);
}

// log1p: u = 1 + x rounded, log(u) plus the correction (x - (u - 1)) / u.
ETRT_VM_TARGET __m256 log1p(__m256 x) {
  const __m256 u = _mm256_add_ps(x, splat(1.0f));
  const __m256 c = _mm256_div_ps(_mm256_sub_ps(x, _mm256_sub_ps(u, splat(1.0f))), u);
  const __m256 finite = _mm256_cmp_ps(abs(u), splat(INFINITY), _CMP_LT_OQ);
  const __m256 positive = _mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_GT_OQ);
  __m256 e;
  const __m256 f = log_split(select(positive, u, splat(1.0f)), &e);
  __m256 y = log_assemble(e, f, _mm256_and_ps(_mm256_and_ps(c, finite), positive));
  y = select(eq(u, _mm256_setzero_ps()), splat(-INFINITY), y);
  y = select(lt(u, _mm256_setzero_ps()), splat(NAN), y);
  const __m256 keep = _mm256_or_ps(_mm256_or_ps(is_nan(x), eq(x, splat(INFINITY))), eq(x, _mm256_setzero_ps()));
  return select(keep, x, y);
}

// sigmoid: with e = exp(-|x|), 1 / (1 + e) for x >= 0 and e / (1 + e) below,
// so large negative x neither overflows nor loses its subnormal results.
ETRT_VM_TARGET __m256 sigmoid(__m256 x) {
  const __m256 e = exp(_mm256_or_ps(abs(x), splat(-0.0f)));
  const __m256 num = select(lt(x, _mm256_setzero_ps()), e, splat(1.0f));
  return _mm256_div_ps(num, _mm256_add_ps(e, splat(1.0f)));
}

// tanh(|x|) = -t / (t + 2) with t = expm1(-2|x|); the sign put back.
ETRT_VM_TARGET __m256 tanh(__m256 x) {
  const __m256 t = expm1(_mm256_mul_ps(splat(-2.0f), abs(x)));
  const __m256 y = _mm256_div_ps(_mm256_xor_ps(t, splat(-0.0f)), _mm256_add_ps(t, splat(2.0f)));
  return _mm256_or_ps(y, sign_of(x));
}

// erf(a) / a on [0, 1] as a polynomial in a^2 (least squares, relative error 1.4e-9).
ETRT_VM_TARGET __m256 erf_small(__m256 a) {
  const __m256 z = _mm256_mul_ps(a, a);
  __m256 p = splat(7.898209878e-05f);
  p = _mm256_fmadd_ps(p, z, splat(-8.024353883e-04f));
  p = _mm256_fmadd_ps(p, z, splat(5.190053489e-03f));
  p = _mm256_fmadd_ps(p, z, splat(-2.685480937e-02f));
  p = _mm256_fmadd_ps(p, z, splat(1.128361225e-01f));
  p = _mm256_fmadd_ps(p, z, splat(-3.761262894e-01f));
  p = _mm256_fmadd_ps(p, z, splat(1.128379226e+00f));
  return _mm256_mul_ps(p, a);
}

// erfc(a) for a in [1, inf): exp(-a^2) Q(a), Q a polynomial in 1 / (1 + a/2) - 0.4
// fitted on [1, 10.1] (relative error 8e-9); a^2 split in two parts for exp.
ETRT_VM_TARGET __m256 erfc_large(__m256 a) {
  const __m256 ac = _mm256_min_ps(a, splat(10.1f));
  const __m256 t = _mm256_sub_ps(_mm256_div_ps(splat(1.0f), _mm256_fmadd_ps(ac, splat(0.5f), splat(1.0f))), splat(0.4f));
  __m256 q = splat(8.466329426e-02f);
  q = _mm256_fmadd_ps(q, t, splat(7.371573150e-02f));
  q = _mm256_fmadd_ps(q, t, splat(-1.311309189e-01f));
  q = _mm256_fmadd_ps(q, t, splat(-1.663329601e-01f));
  q = _mm256_fmadd_ps(q, t, splat(1.593556404e-01f));
  q = _mm256_fmadd_ps(q, t, splat(5.870489478e-01f));
  q = _mm256_fmadd_ps(q, t, splat(7.827996612e-01f));
  q = _mm256_fmadd_ps(q, t, splat(6.796532869e-01f));
  q = _mm256_fmadd_ps(q, t, splat(1.790011525e-01f));
  const __m256 sq = _mm256_mul_ps(ac, ac);
  const __m256 sq_lo = _mm256_fmsub_ps(ac, ac, sq);
  const __m256 e_hi = exp(_mm256_sub_ps(_mm256_setzero_ps(), sq));
  const __m256 e = _mm256_fnmadd_ps(e_hi, sq_lo, e_hi);  // exp(-sq - sq_lo) to first order in sq_lo
  return select(_mm256_cmp_ps(a, splat(10.1f), _CMP_GT_OQ), _mm256_setzero_ps(), _mm256_mul_ps(e, q));
}

ETRT_VM_TARGET __m256 erf(__m256 x) {
  const __m256 a = abs(x);
  const __m256 small = lt(a, splat(1.0f));
  __m256 y = erf_small(a);
  if (_mm256_movemask_ps(small) != 0xff) y = select(small, y, _mm256_sub_ps(splat(1.0f), erfc_large(a)));
  return select(is_nan(x), x, _mm256_or_ps(y, sign_of(x)));
}

// gelu(x) = x/2 (1 + erf(x/sqrt2)); for x < 0 the bracket is erfc(|x|/sqrt2),
// computed directly so the negative tail keeps its relative accuracy.
ETRT_VM_TARGET __m256 gelu_erf(__m256 x) {
  const __m256 a = abs(_mm256_mul_ps(x, splat(0.70710678118654752f)));
  const __m256 small = lt(a, splat(1.0f));
  __m256 erfc_a = _mm256_sub_ps(splat(1.0f), erf_small(a));
  if (_mm256_movemask_ps(small) != 0xff) erfc_a = select(small, erfc_a, erfc_large(a));
  const __m256 bracket = select(lt(x, _mm256_setzero_ps()), erfc_a, _mm256_sub_ps(splat(2.0f), erfc_a));
  return select(is_nan(x), x, _mm256_mul_ps(_mm256_mul_ps(splat(0.5f), x), bracket));
}

// gelu, tanh form: x/2 (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
ETRT_VM_TARGET __m256 gelu_tanh(__m256 x) {
  const __m256 x2 = _mm256_mul_ps(x, x);
  const __m256 two_u = _mm256_mul_ps(x, _mm256_fmadd_ps(x2, splat(1.5957691216057308f * 0.044715f),
                                                       splat(1.5957691216057308f)));
  return _mm256_mul_ps(x, sigmoid(two_u));
}

ETRT_VM_TARGET __m256 rsqrt(__m256 x) { return _mm256_div_ps(splat(1.0f), _mm256_sqrt_ps(x)); }

// ----------------------------------------------------------- double lanes
ETRT_VM_TARGET __m256d splat_d(double v) { return _mm256_set1_pd(v); }
ETRT_VM_TARGET __m256d low_half(__m256 x) { return _mm256_cvtps_pd(_mm256_castps256_ps128(x)); }
ETRT_VM_TARGET __m256d high_half(__m256 x) { return _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)); }
ETRT_VM_TARGET __m256 join_halves(__m256d lo, __m256d hi) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}
// Integral n (|n| < 2^31) as 64-bit lanes.
ETRT_VM_TARGET __m256i to_int64(__m256d n) { return _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(n)); }

// sin (cos with quadrant_offset 1) of |x| < 2^23: x = n pi/2 + r, the
// subtraction exact in double, Taylor polynomials of sin and cos to r^13 / r^14.
ETRT_VM_TARGET __m256d sincos_d(__m256d x, int quadrant_offset) {
  const __m256d n = _mm256_round_pd(_mm256_mul_pd(x, splat_d(0.63661977236758134308)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(n, splat_d(1.5707963267948966), x);
  r = _mm256_fnmadd_pd(n, splat_d(6.123233995736766e-17), r);
  const __m256d z = _mm256_mul_pd(r, r);
  __m256d s = splat_d(1.0 / 6227020800.0);
  s = _mm256_fmadd_pd(s, z, splat_d(-1.0 / 39916800.0));
  s = _mm256_fmadd_pd(s, z, splat_d(1.0 / 362880.0));
  s = _mm256_fmadd_pd(s, z, splat_d(-1.0 / 5040.0));
  s = _mm256_fmadd_pd(s, z, splat_d(1.0 / 120.0));
  s = _mm256_fmadd_pd(s, z, splat_d(-1.0 / 6.0));
  s = _mm256_fmadd_pd(_mm256_mul_pd(s, z), r, r);
  __m256d c = splat_d(-1.0 / 87178291200.0);
  c = _mm256_fmadd_pd(c, z, splat_d(1.0 / 479001600.0));
  c = _mm256_fmadd_pd(c, z, splat_d(-1.0 / 3628800.0));
  c = _mm256_fmadd_pd(c, z, splat_d(1.0 / 40320.0));
  c = _mm256_fmadd_pd(c, z, splat_d(-1.0 / 720.0));
  c = _mm256_fmadd_pd(c, z, splat_d(1.0 / 24.0));
  c = _mm256_fmadd_pd(c, z, splat_d(-0.5));
  c = _mm256_fmadd_pd(c, z, splat_d(1.0));
  const __m256i q = _mm256_add_epi64(to_int64(n), _mm256_set1_epi64x(quadrant_offset));
  const __m256d odd = _mm256_castsi256_pd(
      _mm256_cmpeq_epi64(_mm256_and_si256(q, _mm256_set1_epi64x(1)), _mm256_set1_epi64x(1)));
  const __m256d y = _mm256_blendv_pd(s, c, odd);
  const __m256i sign = _mm256_slli_epi64(_mm256_and_si256(q, _mm256_set1_epi64x(2)), 62);
  return _mm256_xor_pd(y, _mm256_castsi256_pd(sign));
}

// Lanes outside the vector domain (|x| >= 2^23, inf, NaN) take libm's value.
ETRT_VM_TARGET __m256 sincos(__m256 x, int quadrant_offset) {
  __m256 y = join_halves(sincos_d(low_half(x), quadrant_offset), sincos_d(high_half(x), quadrant_offset));
  const int outside = _mm256_movemask_ps(_mm256_cmp_ps(abs(x), splat(8388608.0f), _CMP_NLT_UQ));
  if (outside != 0) {
    alignas(32) float xs[8], ys[8];
    _mm256_store_ps(xs, x);
    _mm256_store_ps(ys, y);
    for (int i = 0; i < 8; ++i)
      if (outside & (1 << i)) ys[i] = quadrant_offset == 0 ? std::sin(xs[i]) : std::cos(xs[i]);
    y = _mm256_load_ps(ys);
  }
  return y;
}
ETRT_VM_TARGET __m256 sin(__m256 x) { return sincos(x, 0); }
ETRT_VM_TARGET __m256 cos(__m256 x) { return sincos(x, 1); }

// log of positive normal doubles made from floats, to ~2^-45: m - 1 split as in
// log_split (exact in double), atanh series to s^17.
ETRT_VM_TARGET __m256d log_d(__m256d e, __m256d f) {
  const __m256d s = _mm256_div_pd(f, _mm256_add_pd(f, splat_d(2.0)));
  const __m256d z = _mm256_mul_pd(s, s);
  __m256d R = splat_d(2.0 / 17);
  for (double k : {15.0, 13.0, 11.0, 9.0, 7.0, 5.0, 3.0}) R = _mm256_fmadd_pd(R, z, splat_d(2.0 / k));
  const __m256d hfsq = _mm256_mul_pd(splat_d(0.5), _mm256_mul_pd(f, f));
  const __m256d l = _mm256_sub_pd(f, _mm256_fnmadd_pd(s, _mm256_add_pd(hfsq, _mm256_mul_pd(R, z)), hfsq));
  return _mm256_fmadd_pd(e, splat_d(0.69314718055994530942), l);
}

// exp of w in [-160, 130] to ~2^-45, as double.
ETRT_VM_TARGET __m256d exp_d(__m256d w) {
  const __m256d n = _mm256_round_pd(_mm256_mul_pd(w, splat_d(1.4426950408889634)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(n, splat_d(0.6931471803691238), w);
  r = _mm256_fnmadd_pd(n, splat_d(1.9082149292705877e-10), r);
  __m256d p = splat_d(1.0 / 39916800.0);
  for (double k : {3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0, 24.0, 6.0, 2.0, 1.0, 1.0})
    p = _mm256_fmadd_pd(p, r, splat_d(1.0 / k));
  const __m256i bits = _mm256_slli_epi64(_mm256_add_epi64(to_int64(n), _mm256_set1_epi64x(1023)), 52);
  return _mm256_mul_pd(p, _mm256_castsi256_pd(bits));
}

ETRT_VM_TARGET __m256d pow_d(__m256d e, __m256d f, __m256d y) {
  const __m256d w = _mm256_mul_pd(y, log_d(e, f));
  return exp_d(_mm256_min_pd(_mm256_max_pd(w, splat_d(-160.0)), splat_d(130.0)));
}

// pow: |x|^y = exp(y log|x|) in double lanes for finite nonzero x and finite y
// (negative x only with integral y, the sign from odd y); other lanes (zeros,
// infinities, NaN, negative x with fractional y) take libm's value.
ETRT_VM_TARGET __m256 pow(__m256 x, __m256 y) {
  const __m256 ax = abs(x);
  const __m256 y_integral = eq(round_nearest(y), y);
  const __m256 inf = splat(INFINITY);
  const __m256 ok = _mm256_and_ps(
      _mm256_and_ps(_mm256_cmp_ps(ax, inf, _CMP_LT_OQ), _mm256_cmp_ps(ax, _mm256_setzero_ps(), _CMP_GT_OQ)),
      _mm256_and_ps(_mm256_cmp_ps(abs(y), inf, _CMP_LT_OQ),
                    _mm256_or_ps(y_integral, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ))));
  __m256 e;
  const __m256 f = log_split(select(ok, ax, splat(1.0f)), &e);
  __m256 r = join_halves(pow_d(low_half(e), low_half(f), low_half(y)), pow_d(high_half(e), high_half(f), high_half(y)));
  // Odd integral y below 2^24 (larger floats are even) keeps the sign of x.
  const __m256 small_y = lt(abs(y), splat(16777216.0f));
  const __m256i yi = _mm256_cvttps_epi32(select(small_y, y, _mm256_setzero_ps()));
  const __m256 odd = _mm256_castsi256_ps(_mm256_slli_epi32(yi, 31));
  r = _mm256_or_ps(r, _mm256_and_ps(odd, sign_of(x)));
  const int fallback = ~_mm256_movemask_ps(ok) & 0xff;
  if (fallback != 0) {
    alignas(32) float xs[8], ys[8], rs[8];
    _mm256_store_ps(xs, x);
    _mm256_store_ps(ys, y);
    _mm256_store_ps(rs, r);
    for (int i = 0; i < 8; ++i)
      if (fallback & (1 << i)) rs[i] = std::pow(xs[i], ys[i]);
    r = _mm256_load_ps(rs);
  }
  return r;
}

// Lanes [0, n) of a tail, n < 8.
ETRT_VM_TARGET __m256i tail_mask(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// y[i] = f(x[i]) for an 8-lane functor f; x and y may be the same array.
template <typename F>
__attribute__((target("avx2,fma"))) void map(const float* x, float* y, size_t n, const F& f) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i mask = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, mask, f(_mm256_maskload_ps(x + i, mask)));
  }
}

// z[i] = f(x[i], y[i]).
template <typename F>
__attribute__((target("avx2,fma"))) void map2(const float* x, const float* y, float* z, size_t n, const F& f) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(z + i, f(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  if (i < n) {
    const __m256i mask = tail_mask(n - i);
    _mm256_maskstore_ps(z + i, mask, f(_mm256_maskload_ps(x + i, mask), _mm256_maskload_ps(y + i, mask)));
  }
}

}  // namespace avx2
#endif  // ETRT_VM_X86

// Array forms: y[i] = f(x[i]) for n floats (x == y allowed), AVX2+FMA when the
// CPU has it, libm otherwise.
#if ETRT_VM_X86
#define ETRT_VM_ARRAY(name, vector_fn, scalar_expr)                                     \
  struct name##_op {                                                                    \
    ETRT_VM_TARGET __m256 operator()(__m256 v) const { return avx2::vector_fn(v); }     \
  };                                                                                    \
  inline void name(const float* x, float* y, size_t n) {                                \
    if (has_avx2_fma()) return avx2::map(x, y, n, name##_op{});                          \
    for (size_t i = 0; i < n; ++i) {                                                    \
      const float v = x[i];                                                             \
      y[i] = (scalar_expr);                                                             \
    }                                                                                   \
  }
#else
#define ETRT_VM_ARRAY(name, vector_fn, scalar_expr)                                     \
  inline void name(const float* x, float* y, size_t n) {                                \
    for (size_t i = 0; i < n; ++i) {                                                    \
      const float v = x[i];                                                             \
      y[i] = (scalar_expr);                                                             \
    }                                                                                   \
  }
#endif

ETRT_VM_ARRAY(vexp, exp, std::exp(v))
ETRT_VM_ARRAY(vexpm1, expm1, std::expm1(v))
ETRT_VM_ARRAY(vlog, log, std::log(v))
ETRT_VM_ARRAY(vlog1p, log1p, std::log1p(v))
ETRT_VM_ARRAY(vtanh, tanh, std::tanh(v))
ETRT_VM_ARRAY(vsigmoid, sigmoid, 1.0f / (1.0f + std::exp(-v)))
ETRT_VM_ARRAY(verf, erf, std::erf(v))
ETRT_VM_ARRAY(vgelu_erf, gelu_erf, 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)))
ETRT_VM_ARRAY(vgelu_tanh, gelu_tanh, v / (1.0f + std::exp(-1.5957691216057308f * (v + 0.044715f * v * v * v))))
ETRT_VM_ARRAY(vsin, sin, std::sin(v))
ETRT_VM_ARRAY(vcos, cos, std::cos(v))
ETRT_VM_ARRAY(vrsqrt, rsqrt, 1.0f / std::sqrt(v))
#undef ETRT_VM_ARRAY

// z[i] = pow(x[i], y[i]).
inline void vpow(const float* x, const float* y, float* z, size_t n) {
#if ETRT_VM_X86
  struct pow_op {
    ETRT_VM_TARGET __m256 operator()(__m256 a, __m256 b) const { return avx2::pow(a, b); }
  };
  if (has_avx2_fma()) return avx2::map2(x, y, z, n, pow_op{});
#endif
  for (size_t i = 0; i < n; ++i) z[i] = std::pow(x[i], y[i]);
}

}  // namespace etrt::vm
