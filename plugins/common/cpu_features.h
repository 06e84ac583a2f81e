// What the CPU can run, read once per process by the plugins' kernels.
//
// CPUID and XCR0 read directly: __builtin_cpu_supports would link libgcc's
// CPU-model constructor into the plugin, and plugins have no static initialisers.
#pragma once

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace etrt::cpu {

inline bool detect_avx2_fma() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  if ((c & bit_FMA) == 0 || (c & bit_AVX) == 0 || (c & bit_OSXSAVE) == 0) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 6u) != 6u) return false;  // the OS saves the YMM registers
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  return (b & bit_AVX2) != 0;
#else
  return false;
#endif
}

// AVX2 and FMA both present and enabled by the OS; computed on first call.
inline bool has_avx2_fma() {
  static const bool yes = detect_avx2_fma();
  return yes;
}

}  // namespace etrt::cpu
