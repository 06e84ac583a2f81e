/* Decoding of CPUID/XCR0 (x86) and AT_HWCAP/AT_HWCAP2 (aarch64) into cpuinfo's answers.
 * Bit positions are the architectures' own (Intel SDM and AMD APM for CPUID and XCR0;
 * the Linux arm64 ELF hwcaps ABI for the capabilities). */
#include "cpu_decode.h"

#include <string.h>

static bool bit(uint64_t word, unsigned position) { return (word >> position) & 1u; }

/* CPUID leaf 1 */
enum { kEcxSsse3 = 9, kEcxFma = 12, kEcxSse41 = 19, kEcxOsxsave = 27, kEcxAvx = 28, kEcxF16c = 29 };
enum { kEdxSse2 = 26 };
/* CPUID leaf 7 subleaf 0 */
enum { kEbxAvx2 = 5, kEbxAvx512f = 16, kEbxAvx512dq = 17, kEbxAvx512bw = 30, kEbxAvx512vl = 31 };
enum { kEcxAvx512vbmi = 1, kEcxGfni = 8, kEcxAvx512vnni = 11 };
enum { kEdxAvx512fp16 = 23, kEdxAmxTile = 24, kEdxAmxInt8 = 25 };
/* CPUID leaf 7 subleaf 1 */
enum { kEax71AvxVnni = 4 };
enum { kEdx71AvxVnniInt8 = 4 };

/* XCR0: SSE (XMM), AVX (YMM upper halves), AVX-512 (opmask, ZMM upper halves, ZMM16-31), AMX (tile config, tile data). */
static const uint64_t kXcr0Avx = (1u << 1) | (1u << 2);
static const uint64_t kXcr0Avx512 = (1u << 5) | (1u << 6) | (1u << 7);
static const uint64_t kXcr0Amx = (1u << 17) | (1u << 18);

uint32_t etrt_x86_family(uint32_t leaf1_eax) {
  uint32_t base = (leaf1_eax >> 8) & 0xF;
  return base == 0xF ? base + ((leaf1_eax >> 20) & 0xFF) : base;
}

uint32_t etrt_x86_model(uint32_t leaf1_eax) {
  uint32_t base_family = (leaf1_eax >> 8) & 0xF;
  uint32_t model = (leaf1_eax >> 4) & 0xF;
  if (base_family == 0x6 || base_family == 0xF) model |= ((leaf1_eax >> 16) & 0xF) << 4;
  return model;
}

/* The microarchitectures XNNPACK treats specially on x86 (see cpuinfo.h). */
static enum cpuinfo_uarch x86_uarch(const struct etrt_x86_cpuid* id, bool has_avx512f) {
  uint32_t family = etrt_x86_family(id->leaf1_eax);
  uint32_t model = etrt_x86_model(id->leaf1_eax);
  if (strcmp(id->vendor, "AuthenticAMD") == 0) {
    /* Family 17h: Zen and Zen+ below model 30h; Zen 2 from there (no special kernels). */
    if (family == 0x17 && model < 0x30) return cpuinfo_uarch_zen;
    /* Family 19h: Zen 3 and Zen 4; of the two only Zen 4 has AVX-512. */
    if (family == 0x19 && has_avx512f) return cpuinfo_uarch_zen4;
  } else if (strcmp(id->vendor, "HygonGenuine") == 0 && family == 0x18) {
    return cpuinfo_uarch_dhyana;
  }
  return cpuinfo_uarch_unknown;
}

void etrt_decode_x86(const struct etrt_x86_cpuid* id, struct etrt_cpu_features* out) {
  memset(out, 0, sizeof *out);
  const uint32_t ecx = id->leaf1_ecx, edx = id->leaf1_edx;
  const bool leaf7 = id->max_leaf >= 7;
  const bool leaf7_1 = leaf7 && id->leaf7_max_subleaf >= 1;
  const uint32_t ebx7 = leaf7 ? id->leaf7_ebx : 0, ecx7 = leaf7 ? id->leaf7_ecx : 0, edx7 = leaf7 ? id->leaf7_edx : 0;
  const uint32_t eax71 = leaf7_1 ? id->leaf7_1_eax : 0, edx71 = leaf7_1 ? id->leaf7_1_edx : 0;

  /* A vector extension counts only when the OS saves its registers across context switches. */
  const uint64_t xcr0 = bit(ecx, kEcxOsxsave) ? id->xcr0 : 0;
  const bool os_avx = (xcr0 & kXcr0Avx) == kXcr0Avx;
  const bool os_avx512 = os_avx && (xcr0 & kXcr0Avx512) == kXcr0Avx512;
  const bool os_amx = (xcr0 & kXcr0Amx) == kXcr0Amx;

  out->x86_sse2 = bit(edx, kEdxSse2);
  out->x86_ssse3 = bit(ecx, kEcxSsse3);
  out->x86_sse4_1 = bit(ecx, kEcxSse41);
  out->x86_gfni = bit(ecx7, kEcxGfni);
  out->x86_avx = os_avx && bit(ecx, kEcxAvx);
  out->x86_f16c = out->x86_avx && bit(ecx, kEcxF16c);
  out->x86_fma3 = out->x86_avx && bit(ecx, kEcxFma);
  out->x86_avx2 = out->x86_avx && bit(ebx7, kEbxAvx2);
  out->x86_avxvnni = out->x86_avx && bit(eax71, kEax71AvxVnni);
  out->x86_avx_vnni_int8 = out->x86_avx && bit(edx71, kEdx71AvxVnniInt8);
  out->x86_avx512f = os_avx512 && bit(ebx7, kEbxAvx512f);
  out->x86_avx512bw = out->x86_avx512f && bit(ebx7, kEbxAvx512bw);
  out->x86_avx512dq = out->x86_avx512f && bit(ebx7, kEbxAvx512dq);
  out->x86_avx512vl = out->x86_avx512f && bit(ebx7, kEbxAvx512vl);
  out->x86_avx512vbmi = out->x86_avx512f && bit(ecx7, kEcxAvx512vbmi);
  out->x86_avx512vnni = out->x86_avx512f && bit(ecx7, kEcxAvx512vnni);
  out->x86_avx512fp16 = out->x86_avx512f && bit(edx7, kEdxAvx512fp16);
  out->x86_amx_int8 = os_amx && bit(edx7, kEdxAmxTile) && bit(edx7, kEdxAmxInt8);
  out->uarch = x86_uarch(id, out->x86_avx512f);
}

/* AT_HWCAP */
enum { kHwcapFp = 0, kHwcapAsimd = 1, kHwcapFphp = 9, kHwcapAsimdhp = 10, kHwcapAsimddp = 20, kHwcapSve = 22 };
/* AT_HWCAP2 */
enum { kHwcap2Sve2 = 1, kHwcap2I8mm = 13, kHwcap2Bf16 = 14, kHwcap2Sme = 23, kHwcap2Sme2 = 37 };

void etrt_decode_arm64(uint64_t hwcap, uint64_t hwcap2, struct etrt_cpu_features* out) {
  memset(out, 0, sizeof *out);
  const bool neon = bit(hwcap, kHwcapAsimd);
  out->arm_vfpv3 = bit(hwcap, kHwcapFp);
  out->arm_neon = neon;
  /* Half-precision conversions, fused multiply-add and the ARMv8 additions are part of AArch64's Advanced SIMD. */
  out->arm_neon_fp16 = neon;
  out->arm_neon_fma = neon;
  out->arm_neon_v8 = neon;
  out->arm_fp16_arith = bit(hwcap, kHwcapFphp);
  out->arm_neon_fp16_arith = neon && bit(hwcap, kHwcapAsimdhp);
  out->arm_neon_dot = neon && bit(hwcap, kHwcapAsimddp);
  out->arm_neon_bf16 = neon && bit(hwcap2, kHwcap2Bf16);
  out->arm_i8mm = neon && bit(hwcap2, kHwcap2I8mm);
  out->arm_sve = bit(hwcap, kHwcapSve);
  out->arm_sve2 = out->arm_sve && bit(hwcap2, kHwcap2Sve2);
  out->arm_sme = bit(hwcap2, kHwcap2Sme);
  out->arm_sme2 = out->arm_sme && bit(hwcap2, kHwcap2Sme2);
  out->uarch = cpuinfo_uarch_unknown;
}
