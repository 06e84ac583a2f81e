// float16 and bfloat16 storage types and their conversions to and from float.
// Kernels compute half-precision tensors in float32 and round on store:
// round-to-nearest-even, overflow to +-inf, NaN stays NaN (quiet, sign kept),
// subnormals kept. With F16C (x86, e.g. -march=x86-64-v3) or on aarch64 the
// float16 conversions use the hardware instruction; the portable bit
// arithmetic below gives the same bits (tests/kernels/half_conversion_test.cpp
// checks them against each other) and is what baseline x86-64 runs.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace etrt::plugin {

// The bits of one element; no arithmetic on purpose (convert to float first).
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

namespace half_detail {

// float16 -> float32, exact.
inline float half_to_float_portable(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F)  // inf; a NaN keeps its payload and is made quiet, as F16C and aarch64 do
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa != 0 ? 0x400000u : 0u) | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// float32 -> float16, round to nearest even.
inline uint16_t half_from_float_portable(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t magnitude = x & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u)  // NaN: quiet, top payload bits kept
    return static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  if (magnitude >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520 (and inf) -> inf
  if (magnitude < 0x38800000u) {
    // Below float16's smallest normal: adding 0.5 puts the value's 2^-24 multiples in the low mantissa bits,
    // rounded to nearest even by the FPU (floats in [0.5, 1) are spaced 2^-24 apart, float16 subnormals too).
    const float shifted = std::bit_cast<float>(magnitude) + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(shifted) - 0x3F000000u));
  }
  // Rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even; a carry moves into the exponent.
  const uint32_t odd = (magnitude >> 13) & 1u;
  magnitude += 0xC8000FFFu + odd;
  return static_cast<uint16_t>(sign | (magnitude >> 13));
}

}  // namespace half_detail

inline float to_float(Half h) {
#if defined(__F16C__)
  return _cvtsh_ss(h.bits);
#elif defined(__aarch64__)
  return static_cast<float>(std::bit_cast<__fp16>(h.bits));
#else
  return half_detail::half_to_float_portable(h.bits);
#endif
}

inline Half half_from_float(float f) {
#if defined(__F16C__)
  return Half{static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT))};
#elif defined(__aarch64__)
  return Half{std::bit_cast<uint16_t>(static_cast<__fp16>(f))};
#else
  return Half{half_detail::half_from_float_portable(f)};
#endif
}

// bfloat16 is float32's upper half: widening is exact.
inline float to_float(BFloat16 b) { return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16); }

inline BFloat16 bfloat16_from_float(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return BFloat16{static_cast<uint16_t>((x >> 16) | 0x0040u)};  // NaN stays NaN
  const uint32_t odd = (x >> 16) & 1u;
  return BFloat16{static_cast<uint16_t>((x + 0x7FFFu + odd) >> 16)};  // nearest even; overflow carries to inf
}

// H from a float, for H = Half or BFloat16.
template <typename H>
inline H half_cast(float f) {
  if constexpr (std::is_same_v<H, Half>) return half_from_float(f);
  else return bfloat16_from_float(f);
}

// Bulk conversions of n elements (F16C converts 8 at a time).
inline void half_to_float(const Half* in, float* out, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
#endif
  for (; i < n; ++i) out[i] = to_float(in[i]);
}
inline void half_from_float(const float* in, Half* out, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) out[i] = half_from_float(in[i]);
}
inline void half_to_float(const BFloat16* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = to_float(in[i]);
}
inline void half_from_float(const float* in, BFloat16* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = bfloat16_from_float(in[i]);
}

}  // namespace etrt::plugin
