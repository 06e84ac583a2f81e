/* etrt's stand-in for the cpuinfo library, for the XNNPACK etrt builds from source
 * (cmake/third_party/EtrtXnnpack.cmake).
 *
 * It declares only what XNNPACK's sources call, under cpuinfo's names and with
 * cpuinfo's meanings, so XNNPACK compiles unchanged against it. cpuinfo.c answers
 * from CPUID and XGETBV on x86-64 (a feature counts only when the OS saves its
 * registers) and from the kernel's hardware capabilities on aarch64. Every
 * processor is described by one core and one microarchitecture: etrt does not
 * tell big and little cores apart, and names a microarchitecture only where one
 * CPUID read identifies it (XNNPACK picks kernels differently on AMD Zen, Zen 4
 * and Hygon Dhyana); elsewhere it is cpuinfo_uarch_unknown, for which XNNPACK
 * picks its general-purpose kernels.
 *
 * Linked statically into the XNNPACK plugin and hidden there: nothing outside
 * the plugin sees these names. */
#ifndef ETRT_XNNPACK_PLATFORM_CPUINFO_H
#define ETRT_XNNPACK_PLATFORM_CPUINFO_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The microarchitectures XNNPACK's kernel selection names. */
enum cpuinfo_uarch {
  cpuinfo_uarch_unknown = 0,
  /* x86-64 */
  cpuinfo_uarch_zen,
  cpuinfo_uarch_zen4,
  cpuinfo_uarch_dhyana,
  /* Arm cores (32- and 64-bit) */
  cpuinfo_uarch_cortex_a5,
  cpuinfo_uarch_cortex_a7,
  cpuinfo_uarch_cortex_a32,
  cpuinfo_uarch_cortex_a35,
  cpuinfo_uarch_cortex_a53,
  cpuinfo_uarch_cortex_a55r0,
  cpuinfo_uarch_cortex_a55,
  cpuinfo_uarch_cortex_a57,
  cpuinfo_uarch_cortex_a72,
  cpuinfo_uarch_cortex_a73,
  cpuinfo_uarch_cortex_a75,
  cpuinfo_uarch_cortex_a76,
  cpuinfo_uarch_cortex_a77,
  cpuinfo_uarch_cortex_a78,
  cpuinfo_uarch_cortex_a510,
  cpuinfo_uarch_cortex_a710,
  cpuinfo_uarch_cortex_a715,
  cpuinfo_uarch_cortex_x1,
  cpuinfo_uarch_cortex_x2,
  cpuinfo_uarch_cortex_x3,
  cpuinfo_uarch_neoverse_n1,
  cpuinfo_uarch_neoverse_n2,
  cpuinfo_uarch_neoverse_v1,
  cpuinfo_uarch_neoverse_v2,
  cpuinfo_uarch_exynos_m1,
  cpuinfo_uarch_exynos_m2,
  cpuinfo_uarch_exynos_m3,
  cpuinfo_uarch_exynos_m4,
  cpuinfo_uarch_exynos_m5,
  cpuinfo_uarch_krait,
  cpuinfo_uarch_kryo,
};

/* One kind of core. Only the field XNNPACK reads. */
struct cpuinfo_uarch_info {
  enum cpuinfo_uarch uarch;
};

/* One core. Only the field XNNPACK reads. */
struct cpuinfo_core {
  enum cpuinfo_uarch uarch;
};

/* Reads the CPU once per process (later calls return at once); true when it could. */
bool cpuinfo_initialize(void);

/* The core with this index (only index 0 exists here), or NULL. */
const struct cpuinfo_core* cpuinfo_get_core(uint32_t index);
/* The microarchitecture with this index (only index 0 exists here), or NULL. */
const struct cpuinfo_uarch_info* cpuinfo_get_uarch(uint32_t index);

/* x86 and x86-64: instruction sets the CPU has and the OS enables. False elsewhere. */
bool cpuinfo_has_x86_sse2(void);
bool cpuinfo_has_x86_ssse3(void);
bool cpuinfo_has_x86_sse4_1(void);
bool cpuinfo_has_x86_avx(void);
bool cpuinfo_has_x86_f16c(void);
bool cpuinfo_has_x86_fma3(void);
bool cpuinfo_has_x86_avx2(void);
bool cpuinfo_has_x86_avx512f(void);
bool cpuinfo_has_x86_avx512bw(void);
bool cpuinfo_has_x86_avx512dq(void);
bool cpuinfo_has_x86_avx512vl(void);
bool cpuinfo_has_x86_avx512vbmi(void);
bool cpuinfo_has_x86_avx512vnni(void);
bool cpuinfo_has_x86_avx512fp16(void);
bool cpuinfo_has_x86_avxvnni(void);
bool cpuinfo_has_x86_avx_vnni_int8(void);
bool cpuinfo_has_x86_gfni(void);
bool cpuinfo_has_x86_amx_int8(void);

/* Arm: instruction sets the CPU has and the kernel reports. False elsewhere. The 32-bit
 * Arm queries are here because XNNPACK's sources name them; etrt builds no 32-bit Arm. */
bool cpuinfo_has_arm_v6(void);
bool cpuinfo_has_arm_vfpv2(void);
bool cpuinfo_has_arm_vfpv3(void);
bool cpuinfo_has_arm_neon(void);
bool cpuinfo_has_arm_neon_fp16(void);
bool cpuinfo_has_arm_neon_fma(void);
bool cpuinfo_has_arm_neon_v8(void);
bool cpuinfo_has_arm_fp16_arith(void);
bool cpuinfo_has_arm_neon_fp16_arith(void);
bool cpuinfo_has_arm_neon_bf16(void);
bool cpuinfo_has_arm_neon_dot(void);
bool cpuinfo_has_arm_i8mm(void);
bool cpuinfo_has_arm_sve(void);
bool cpuinfo_has_arm_sve2(void);
bool cpuinfo_has_arm_sme(void);
bool cpuinfo_has_arm_sme2(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif
