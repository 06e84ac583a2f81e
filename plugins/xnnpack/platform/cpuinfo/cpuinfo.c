/* cpuinfo.h for the XNNPACK etrt builds: the CPU is read once per process, on first use
 * (XNNPACK calls cpuinfo_initialize first, but any query initialises too). */
#include "cpuinfo.h"

#include <pthread.h>
#include <string.h>

#include "cpu_decode.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

static struct etrt_cpu_features features;
static struct cpuinfo_core core;
static struct cpuinfo_uarch_info uarch_info;
static pthread_once_t read_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) || defined(__i386__)
static void read_x86(struct etrt_x86_cpuid* id) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(0, a, b, c, d);
  id->max_leaf = a;
  memcpy(id->vendor + 0, &b, 4);
  memcpy(id->vendor + 4, &d, 4);
  memcpy(id->vendor + 8, &c, 4);
  id->vendor[12] = '\0';
  if (id->max_leaf >= 1) {
    __cpuid(1, a, b, c, d);
    id->leaf1_eax = a;
    id->leaf1_ecx = c;
    id->leaf1_edx = d;
  }
  if (id->max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    id->leaf7_max_subleaf = a;
    id->leaf7_ebx = b;
    id->leaf7_ecx = c;
    id->leaf7_edx = d;
    if (id->leaf7_max_subleaf >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      id->leaf7_1_eax = a;
      id->leaf7_1_edx = d;
    }
  }
  if ((id->leaf1_ecx >> 27) & 1u) { /* OSXSAVE: XGETBV is available */
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    id->xcr0 = ((uint64_t)hi << 32) | lo;
  }
}
#endif

static void read_cpu(void) {
#if defined(__x86_64__) || defined(__i386__)
  struct etrt_x86_cpuid id;
  memset(&id, 0, sizeof id);
  read_x86(&id);
  etrt_decode_x86(&id, &features);
#elif defined(__aarch64__) && defined(__linux__)
  etrt_decode_arm64(getauxval(AT_HWCAP), getauxval(AT_HWCAP2), &features);
#else
  memset(&features, 0, sizeof features);
#endif
  core.uarch = features.uarch;
  uarch_info.uarch = features.uarch;
}

static const struct etrt_cpu_features* cpu(void) {
  pthread_once(&read_once, read_cpu);
  return &features;
}

bool cpuinfo_initialize(void) {
  cpu();
  return true;
}

const struct cpuinfo_core* cpuinfo_get_core(uint32_t index) {
  cpu();
  return index == 0 ? &core : NULL;
}

const struct cpuinfo_uarch_info* cpuinfo_get_uarch(uint32_t index) {
  cpu();
  return index == 0 ? &uarch_info : NULL;
}

bool cpuinfo_has_x86_sse2(void) { return cpu()->x86_sse2; }
bool cpuinfo_has_x86_ssse3(void) { return cpu()->x86_ssse3; }
bool cpuinfo_has_x86_sse4_1(void) { return cpu()->x86_sse4_1; }
bool cpuinfo_has_x86_avx(void) { return cpu()->x86_avx; }
bool cpuinfo_has_x86_f16c(void) { return cpu()->x86_f16c; }
bool cpuinfo_has_x86_fma3(void) { return cpu()->x86_fma3; }
bool cpuinfo_has_x86_avx2(void) { return cpu()->x86_avx2; }
bool cpuinfo_has_x86_avx512f(void) { return cpu()->x86_avx512f; }
bool cpuinfo_has_x86_avx512bw(void) { return cpu()->x86_avx512bw; }
bool cpuinfo_has_x86_avx512dq(void) { return cpu()->x86_avx512dq; }
bool cpuinfo_has_x86_avx512vl(void) { return cpu()->x86_avx512vl; }
bool cpuinfo_has_x86_avx512vbmi(void) { return cpu()->x86_avx512vbmi; }
bool cpuinfo_has_x86_avx512vnni(void) { return cpu()->x86_avx512vnni; }
bool cpuinfo_has_x86_avx512fp16(void) { return cpu()->x86_avx512fp16; }
bool cpuinfo_has_x86_avxvnni(void) { return cpu()->x86_avxvnni; }
bool cpuinfo_has_x86_avx_vnni_int8(void) { return cpu()->x86_avx_vnni_int8; }
bool cpuinfo_has_x86_gfni(void) { return cpu()->x86_gfni; }
bool cpuinfo_has_x86_amx_int8(void) { return cpu()->x86_amx_int8; }

bool cpuinfo_has_arm_v6(void) { return false; }
bool cpuinfo_has_arm_vfpv2(void) { return false; }
bool cpuinfo_has_arm_vfpv3(void) { return cpu()->arm_vfpv3; }
bool cpuinfo_has_arm_neon(void) { return cpu()->arm_neon; }
bool cpuinfo_has_arm_neon_fp16(void) { return cpu()->arm_neon_fp16; }
bool cpuinfo_has_arm_neon_fma(void) { return cpu()->arm_neon_fma; }
bool cpuinfo_has_arm_neon_v8(void) { return cpu()->arm_neon_v8; }
bool cpuinfo_has_arm_fp16_arith(void) { return cpu()->arm_fp16_arith; }
bool cpuinfo_has_arm_neon_fp16_arith(void) { return cpu()->arm_neon_fp16_arith; }
bool cpuinfo_has_arm_neon_bf16(void) { return cpu()->arm_neon_bf16; }
bool cpuinfo_has_arm_neon_dot(void) { return cpu()->arm_neon_dot; }
bool cpuinfo_has_arm_i8mm(void) { return cpu()->arm_i8mm; }
bool cpuinfo_has_arm_sve(void) { return cpu()->arm_sve; }
bool cpuinfo_has_arm_sve2(void) { return cpu()->arm_sve2; }
bool cpuinfo_has_arm_sme(void) { return cpu()->arm_sme; }
bool cpuinfo_has_arm_sme2(void) { return cpu()->arm_sme2; }
