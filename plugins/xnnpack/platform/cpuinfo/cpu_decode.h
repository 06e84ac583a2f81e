/* How cpuinfo.c turns what the CPU and the kernel report into cpuinfo's answers: pure
 * functions of the raw register values, compiled on every architecture, so a test on
 * one machine can check the decoding for CPUs it is not running on. */
#ifndef ETRT_XNNPACK_PLATFORM_CPU_DECODE_H
#define ETRT_XNNPACK_PLATFORM_CPU_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "cpuinfo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CPUID leaves and XCR0 that x86 decoding reads (zero when a leaf is absent). */
struct etrt_x86_cpuid {
  uint32_t max_leaf;        /* leaf 0 EAX */
  char vendor[13];          /* leaf 0 EBX, EDX, ECX: "GenuineIntel", "AuthenticAMD", ... */
  uint32_t leaf1_eax;       /* family, model, stepping */
  uint32_t leaf1_ecx;
  uint32_t leaf1_edx;
  uint32_t leaf7_max_subleaf; /* leaf 7 subleaf 0 EAX */
  uint32_t leaf7_ebx;
  uint32_t leaf7_ecx;
  uint32_t leaf7_edx;
  uint32_t leaf7_1_eax;     /* leaf 7 subleaf 1 */
  uint32_t leaf7_1_edx;
  uint64_t xcr0;            /* XGETBV(0): the register states the OS saves; 0 without OSXSAVE */
};

/* Everything cpuinfo.h answers. */
struct etrt_cpu_features {
  bool x86_sse2, x86_ssse3, x86_sse4_1, x86_avx, x86_f16c, x86_fma3, x86_avx2;
  bool x86_avx512f, x86_avx512bw, x86_avx512dq, x86_avx512vl, x86_avx512vbmi, x86_avx512vnni, x86_avx512fp16;
  bool x86_avxvnni, x86_avx_vnni_int8, x86_gfni, x86_amx_int8;
  bool arm_vfpv3, arm_neon, arm_neon_fp16, arm_neon_fma, arm_neon_v8;
  bool arm_fp16_arith, arm_neon_fp16_arith, arm_neon_bf16, arm_neon_dot, arm_i8mm;
  bool arm_sve, arm_sve2, arm_sme, arm_sme2;
  enum cpuinfo_uarch uarch;
};

/* x86 family as CPUID defines it: the base family plus, for base family 15, the extended family. */
uint32_t etrt_x86_family(uint32_t leaf1_eax);
/* x86 model: the base model, extended by the extended model for families 6 and 15 and above. */
uint32_t etrt_x86_model(uint32_t leaf1_eax);

void etrt_decode_x86(const struct etrt_x86_cpuid* id, struct etrt_cpu_features* out);
/* AT_HWCAP and AT_HWCAP2 as the aarch64 Linux kernel reports them. */
void etrt_decode_arm64(uint64_t hwcap, uint64_t hwcap2, struct etrt_cpu_features* out);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif
