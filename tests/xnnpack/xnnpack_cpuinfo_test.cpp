// etrt's cpuinfo for the XNNPACK it builds (plugins/xnnpack/platform/cpuinfo): the decoding of
// CPUID/XCR0 and of the aarch64 hardware capabilities on synthetic CPUs, and the live answers
// against what the kernel reports in /proc/cpuinfo and against etrt's own AVX2 detection.
#include <gtest/gtest.h>

#include <cpuinfo.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cpu_decode.h"
#include "cpu_features.h"

namespace {

// --- x86 decoding -------------------------------------------------------------------------

constexpr uint32_t kOsxsave = 1u << 27, kAvx = 1u << 28, kFma = 1u << 12, kF16c = 1u << 29;
constexpr uint32_t kSse41 = 1u << 19, kSsse3 = 1u << 9, kSse2 = 1u << 26;
constexpr uint32_t kAvx2 = 1u << 5, kAvx512f = 1u << 16, kAvx512dq = 1u << 17, kAvx512bw = 1u << 30,
                   kAvx512vl = 1u << 31;
constexpr uint32_t kVbmi = 1u << 1, kGfni = 1u << 8, kVnni = 1u << 11;
constexpr uint32_t kFp16 = 1u << 23, kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;
constexpr uint32_t kAvxVnni = 1u << 4;
constexpr uint64_t kXcr0Ymm = 0x7, kXcr0Zmm = 0xE7, kXcr0Amx = 0x600E7;

// Leaf 1 EAX for a family and model, encoded as CPUID does.
uint32_t signature(uint32_t family, uint32_t model) {
  uint32_t base_family = family >= 0xF ? 0xF : family;
  uint32_t ext_family = family >= 0xF ? family - 0xF : 0;
  return (ext_family << 20) | ((model >> 4) << 16) | (base_family << 8) | ((model & 0xF) << 4) | 0x1;
}

// A CPU with everything up to AVX-512 VNNI, GFNI, AVX512-FP16, AVX-VNNI and AMX-INT8.
etrt_x86_cpuid full_x86(const char* vendor, uint32_t family, uint32_t model, uint64_t xcr0) {
  etrt_x86_cpuid id{};
  id.max_leaf = 0x20;
  std::memcpy(id.vendor, vendor, std::min(std::strlen(vendor), sizeof id.vendor - 1));
  id.leaf1_eax = signature(family, model);
  id.leaf1_ecx = kOsxsave | kAvx | kFma | kF16c | kSse41 | kSsse3;
  id.leaf1_edx = kSse2;
  id.leaf7_max_subleaf = 1;
  id.leaf7_ebx = kAvx2 | kAvx512f | kAvx512dq | kAvx512bw | kAvx512vl;
  id.leaf7_ecx = kVbmi | kGfni | kVnni;
  id.leaf7_edx = kFp16 | kAmxTile | kAmxInt8;
  id.leaf7_1_eax = kAvxVnni;
  id.xcr0 = xcr0;
  return id;
}

etrt_cpu_features decode(const etrt_x86_cpuid& id) {
  etrt_cpu_features f;
  etrt_decode_x86(&id, &f);
  return f;
}

TEST(CpuinfoX86, FamilyAndModelFollowTheExtendedFields) {
  EXPECT_EQ(etrt_x86_family(signature(0x19, 0x11)), 0x19u);
  EXPECT_EQ(etrt_x86_model(signature(0x19, 0x11)), 0x11u);
  EXPECT_EQ(etrt_x86_family(signature(0x6, 0x8F)), 0x6u);
  EXPECT_EQ(etrt_x86_model(signature(0x6, 0x8F)), 0x8Fu);
  // Below family 6 the extended model does not count.
  EXPECT_EQ(etrt_x86_model(signature(0x5, 0x12) ), 0x2u);
}

TEST(CpuinfoX86, EveryExtensionTheOsSavesIsReported) {
  etrt_cpu_features f = decode(full_x86("GenuineIntel", 6, 0x8F, kXcr0Amx));
  EXPECT_TRUE(f.x86_sse2 && f.x86_ssse3 && f.x86_sse4_1 && f.x86_avx && f.x86_f16c && f.x86_fma3 && f.x86_avx2);
  EXPECT_TRUE(f.x86_avx512f && f.x86_avx512bw && f.x86_avx512dq && f.x86_avx512vl);
  EXPECT_TRUE(f.x86_avx512vbmi && f.x86_avx512vnni && f.x86_avx512fp16 && f.x86_gfni);
  EXPECT_TRUE(f.x86_avxvnni && f.x86_amx_int8);
  EXPECT_FALSE(f.x86_avx_vnni_int8);
  EXPECT_EQ(f.uarch, cpuinfo_uarch_unknown) << "Intel cores are not told apart";
}

TEST(CpuinfoX86, VectorExtensionsNeedTheOsToSaveTheirRegisters) {
  // The OS saves YMM but not the AVX-512 state: AVX2 yes, AVX-512 no.
  etrt_cpu_features ymm = decode(full_x86("GenuineIntel", 6, 0x8F, kXcr0Ymm));
  EXPECT_TRUE(ymm.x86_avx2 && ymm.x86_fma3 && ymm.x86_avxvnni);
  EXPECT_FALSE(ymm.x86_avx512f || ymm.x86_avx512bw || ymm.x86_avx512vnni || ymm.x86_avx512fp16);
  EXPECT_FALSE(ymm.x86_amx_int8) << "AMX tiles need XCR0 bits 17 and 18";
  EXPECT_TRUE(ymm.x86_gfni) << "GFNI's SSE form needs no extra state";

  // Only XMM saved: no AVX at all, whatever CPUID says.
  etrt_cpu_features xmm = decode(full_x86("GenuineIntel", 6, 0x8F, 0x3));
  EXPECT_FALSE(xmm.x86_avx || xmm.x86_avx2 || xmm.x86_fma3 || xmm.x86_f16c || xmm.x86_avxvnni);
  EXPECT_TRUE(xmm.x86_sse4_1);

  // Without OSXSAVE the XCR0 value is not trusted (XGETBV would fault).
  etrt_x86_cpuid no_osxsave = full_x86("GenuineIntel", 6, 0x8F, kXcr0Amx);
  no_osxsave.leaf1_ecx &= ~kOsxsave;
  etrt_cpu_features n = decode(no_osxsave);
  EXPECT_FALSE(n.x86_avx || n.x86_avx512f || n.x86_amx_int8);
}

TEST(CpuinfoX86, LeavesTheCpuDoesNotHaveAreIgnored) {
  etrt_x86_cpuid old = full_x86("GenuineIntel", 6, 0x3C, kXcr0Ymm);
  old.max_leaf = 6;
  etrt_cpu_features f = decode(old);
  EXPECT_TRUE(f.x86_avx && f.x86_fma3);
  EXPECT_FALSE(f.x86_avx2 || f.x86_gfni || f.x86_avxvnni);

  etrt_x86_cpuid no_subleaf = full_x86("GenuineIntel", 6, 0x8F, kXcr0Zmm);
  no_subleaf.leaf7_max_subleaf = 0;
  EXPECT_FALSE(decode(no_subleaf).x86_avxvnni);
  EXPECT_TRUE(decode(no_subleaf).x86_avx512vnni);
}

TEST(CpuinfoX86, AmdAndHygonCoresXnnpackTunesFor) {
  // EPYC 9004 (Genoa): family 19h model 11h with AVX-512 enabled.
  EXPECT_EQ(decode(full_x86("AuthenticAMD", 0x19, 0x11, kXcr0Zmm)).uarch, cpuinfo_uarch_zen4);
  EXPECT_EQ(decode(full_x86("AuthenticAMD", 0x19, 0x61, kXcr0Zmm)).uarch, cpuinfo_uarch_zen4);
  // Zen 3 (family 19h without AVX-512) and Zen 2 (family 17h from model 30h) get the general kernels.
  etrt_x86_cpuid zen3 = full_x86("AuthenticAMD", 0x19, 0x01, kXcr0Ymm);
  zen3.leaf7_ebx &= ~(kAvx512f | kAvx512dq | kAvx512bw | kAvx512vl);
  EXPECT_EQ(decode(zen3).uarch, cpuinfo_uarch_unknown);
  EXPECT_EQ(decode(full_x86("AuthenticAMD", 0x17, 0x31, kXcr0Ymm)).uarch, cpuinfo_uarch_unknown);
  EXPECT_EQ(decode(full_x86("AuthenticAMD", 0x17, 0x01, kXcr0Ymm)).uarch, cpuinfo_uarch_zen);
  EXPECT_EQ(decode(full_x86("AuthenticAMD", 0x17, 0x18, kXcr0Ymm)).uarch, cpuinfo_uarch_zen);
  EXPECT_EQ(decode(full_x86("HygonGenuine", 0x18, 0x01, kXcr0Ymm)).uarch, cpuinfo_uarch_dhyana);
  EXPECT_EQ(decode(full_x86("GenuineIntel", 0x19, 0x11, kXcr0Zmm)).uarch, cpuinfo_uarch_unknown);
}

// --- aarch64 decoding ---------------------------------------------------------------------

constexpr uint64_t kFp = 1u << 0, kAsimd = 1u << 1, kFphp = 1u << 9, kAsimdhp = 1u << 10, kAsimddp = 1u << 20,
                   kSve = 1u << 22;
constexpr uint64_t kSve2 = 1u << 1, kI8mm = 1u << 13, kBf16 = 1u << 14, kSme = 1u << 23, kSme2 = 1ull << 37;

etrt_cpu_features decode_arm(uint64_t hwcap, uint64_t hwcap2) {
  etrt_cpu_features f;
  etrt_decode_arm64(hwcap, hwcap2, &f);
  return f;
}

TEST(CpuinfoArm64, BaselineAdvancedSimdImpliesItsParts) {
  etrt_cpu_features f = decode_arm(kFp | kAsimd, 0);
  EXPECT_TRUE(f.arm_neon && f.arm_vfpv3 && f.arm_neon_fp16 && f.arm_neon_fma && f.arm_neon_v8);
  EXPECT_FALSE(f.arm_neon_dot || f.arm_i8mm || f.arm_neon_bf16 || f.arm_fp16_arith || f.arm_neon_fp16_arith);
  EXPECT_FALSE(f.arm_sve || f.arm_sve2 || f.arm_sme || f.arm_sme2);
  EXPECT_FALSE(f.x86_avx2);
  EXPECT_EQ(f.uarch, cpuinfo_uarch_unknown);
}

TEST(CpuinfoArm64, EachCapabilityBitIsItsOwnFeature) {
  // A Neoverse N2-like core: dotprod, i8mm, bf16, fp16 arithmetic, SVE2.
  etrt_cpu_features f = decode_arm(kFp | kAsimd | kFphp | kAsimdhp | kAsimddp | kSve, kSve2 | kI8mm | kBf16);
  EXPECT_TRUE(f.arm_neon_dot && f.arm_i8mm && f.arm_neon_bf16 && f.arm_fp16_arith && f.arm_neon_fp16_arith);
  EXPECT_TRUE(f.arm_sve && f.arm_sve2);
  EXPECT_FALSE(f.arm_sme || f.arm_sme2);

  EXPECT_TRUE(decode_arm(kFp | kAsimd | kAsimddp, 0).arm_neon_dot);
  EXPECT_FALSE(decode_arm(kFp | kAsimd | kAsimddp, 0).arm_i8mm);
  EXPECT_TRUE(decode_arm(kFp | kAsimd, kI8mm).arm_i8mm);
  EXPECT_FALSE(decode_arm(kFp | kAsimd, kSve2).arm_sve2) << "SVE2 without SVE";
  EXPECT_TRUE(decode_arm(kFp | kAsimd, kSme | kSme2).arm_sme2) << "HWCAP2_SME2 is bit 37";
  EXPECT_FALSE(decode_arm(kFp | kAsimd, kSme2).arm_sme2) << "SME2 without SME";
}

// --- the running CPU ----------------------------------------------------------------------

// The kernel's feature words for the first processor: x86 "flags", aarch64 "Features".
std::set<std::string> kernel_features(const char* key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> out;
    for (std::string w; words >> w;) out.insert(w);
    return out;
  }
  return {};
}

TEST(CpuinfoLive, OneCoreAndOneMicroarchitecture) {
  ASSERT_TRUE(cpuinfo_initialize());
  ASSERT_NE(cpuinfo_get_core(0), nullptr);
  ASSERT_NE(cpuinfo_get_uarch(0), nullptr);
  EXPECT_EQ(cpuinfo_get_core(1), nullptr);
  EXPECT_EQ(cpuinfo_get_uarch(1), nullptr) << "XNNPACK's loop over little cores must stop at index 1";
  EXPECT_EQ(cpuinfo_get_core(0)->uarch, cpuinfo_get_uarch(0)->uarch);
}

#if defined(__x86_64__)
std::string kernel_field(const char* key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return line.substr(line.find(':') + 2);
  return "";
}

TEST(CpuinfoLive, X86AnswersMatchTheKernelsFlags) {
  std::set<std::string> flags = kernel_features("flags");
  if (flags.empty()) GTEST_SKIP() << "no x86 flags line in /proc/cpuinfo";
  auto has = [&](const char* f) { return flags.count(f) != 0; };
  EXPECT_EQ(cpuinfo_has_x86_sse2(), has("sse2"));
  EXPECT_EQ(cpuinfo_has_x86_ssse3(), has("ssse3"));
  EXPECT_EQ(cpuinfo_has_x86_sse4_1(), has("sse4_1"));
  EXPECT_EQ(cpuinfo_has_x86_avx(), has("avx"));
  EXPECT_EQ(cpuinfo_has_x86_f16c(), has("f16c"));
  EXPECT_EQ(cpuinfo_has_x86_fma3(), has("fma"));
  EXPECT_EQ(cpuinfo_has_x86_avx2(), has("avx2"));
  EXPECT_EQ(cpuinfo_has_x86_avx512f(), has("avx512f"));
  EXPECT_EQ(cpuinfo_has_x86_avx512bw(), has("avx512bw"));
  EXPECT_EQ(cpuinfo_has_x86_avx512dq(), has("avx512dq"));
  EXPECT_EQ(cpuinfo_has_x86_avx512vl(), has("avx512vl"));
  EXPECT_EQ(cpuinfo_has_x86_avx512vbmi(), has("avx512vbmi"));
  EXPECT_EQ(cpuinfo_has_x86_avx512vnni(), has("avx512_vnni"));
  EXPECT_EQ(cpuinfo_has_x86_avx512fp16(), has("avx512_fp16"));
  EXPECT_EQ(cpuinfo_has_x86_avxvnni(), has("avx_vnni"));
  EXPECT_EQ(cpuinfo_has_x86_gfni(), has("gfni"));
  EXPECT_EQ(cpuinfo_has_x86_amx_int8(), has("amx_int8"));
  // Kernels older than the extension do not list it: only what they list must be found.
  if (has("avx_vnni_int8")) {
    EXPECT_TRUE(cpuinfo_has_x86_avx_vnni_int8());
  }
  EXPECT_FALSE(cpuinfo_has_arm_neon());
}

TEST(CpuinfoLive, X86AgreesWithEtrtsOwnAvx2Detection) {
  EXPECT_EQ(cpuinfo_has_x86_avx2() && cpuinfo_has_x86_fma3(), etrt::cpu::has_avx2_fma());
}

TEST(CpuinfoLive, X86MicroarchitectureFollowsTheKernelsFamily) {
  const std::string vendor = kernel_field("vendor_id");
  const int family = std::stoi(kernel_field("cpu family"));
  const int model = std::stoi(kernel_field("model\t"));
  const bool avx512 = kernel_features("flags").count("avx512f") != 0;
  cpuinfo_uarch expected = cpuinfo_uarch_unknown;
  if (vendor == "AuthenticAMD" && family == 0x17 && model < 0x30) expected = cpuinfo_uarch_zen;
  if (vendor == "AuthenticAMD" && family == 0x19 && avx512) expected = cpuinfo_uarch_zen4;
  if (vendor == "HygonGenuine" && family == 0x18) expected = cpuinfo_uarch_dhyana;
  EXPECT_EQ(cpuinfo_get_core(0)->uarch, expected) << vendor << " family " << family << " model " << model;
}
#endif

#if defined(__aarch64__)
TEST(CpuinfoLive, Arm64AnswersMatchTheKernelsFeatures) {
  std::set<std::string> features = kernel_features("Features");
  // qemu-user shows the build machine's /proc/cpuinfo: nothing to compare with there.
  if (features.empty()) GTEST_SKIP() << "no aarch64 Features line in /proc/cpuinfo (emulated?)";
  auto has = [&](const char* f) { return features.count(f) != 0; };
  EXPECT_EQ(cpuinfo_has_arm_neon(), has("asimd"));
  EXPECT_EQ(cpuinfo_has_arm_fp16_arith(), has("fphp"));
  EXPECT_EQ(cpuinfo_has_arm_neon_fp16_arith(), has("asimdhp"));
  EXPECT_EQ(cpuinfo_has_arm_neon_dot(), has("asimddp"));
  EXPECT_EQ(cpuinfo_has_arm_i8mm(), has("i8mm"));
  EXPECT_EQ(cpuinfo_has_arm_neon_bf16(), has("bf16"));
  EXPECT_EQ(cpuinfo_has_arm_sve(), has("sve"));
  EXPECT_EQ(cpuinfo_has_arm_sve2(), has("sve2"));
  EXPECT_EQ(cpuinfo_has_arm_sme(), has("sme"));
  EXPECT_FALSE(cpuinfo_has_x86_avx2());
}
#endif

}  // namespace
