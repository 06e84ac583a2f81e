// IEEE binary16 <-> binary32, for fp16 values at the delegate's boundary and fp16 constants (this XNNPACK's
// subgraph computes fp32; the plugin converts where the program stores fp16).
#pragma once

#include <cstdint>
#include <cstring>

namespace etrt::xnn {

inline float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16, exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf, NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int shift = 0;
    while ((mantissa & 0x400u) == 0) mantissa <<= 1, ++shift;
    bits = sign | ((113u - static_cast<uint32_t>(shift)) << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Rounds to nearest, ties to even, as PyTorch's float -> half conversion.
inline uint16_t float_to_half(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));  // NaN
  if (magnitude >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504: inf
  if (magnitude < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (magnitude < 0x33000000u) return sign;  // below half the smallest subnormal
    uint32_t exponent = magnitude >> 23, mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126 - exponent;  // 14 + (113 - exponent) - 1
    uint32_t value = mantissa >> shift, rest = mantissa & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (value & 1u))) ++value;
    return static_cast<uint16_t>(sign | value);
  }
  uint32_t value = ((magnitude - 0x38000000u) >> 13), rest = magnitude & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (value & 1u))) ++value;
  return static_cast<uint16_t>(sign | value);
}

}  // namespace etrt::xnn
