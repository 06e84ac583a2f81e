#include "loader/cpu_level.h"

#include <cstdlib>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace etrt::loader {
namespace {

#if defined(__x86_64__)
constexpr const char* kHostArch = "x86_64";

// Register bits named by the x86-64 psABI's level definitions (written out:
// gcc's and clang's <cpuid.h> do not name all of them alike).
struct Cpuid {
  unsigned a = 0, b = 0, c = 0, d = 0;
};
Cpuid cpuid(unsigned leaf, unsigned subleaf = 0) {
  Cpuid r;
  if (__get_cpuid_count(leaf, subleaf, &r.a, &r.b, &r.c, &r.d) == 0) return Cpuid{};
  return r;
}
bool all(unsigned reg, unsigned mask) { return (reg & mask) == mask; }

int detect_best_rank() {
  Cpuid leaf1 = cpuid(1), leaf7 = cpuid(7, 0), ext1 = cpuid(0x80000001u);
  // x86-64-v2: SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, CMPXCHG16B, LAHF/SAHF.
  const unsigned v2_ecx = 1u << 0 | 1u << 9 | 1u << 13 | 1u << 19 | 1u << 20 | 1u << 23;
  if (!all(leaf1.c, v2_ecx) || !all(ext1.c, 1u << 0)) return 0;
  // x86-64-v3: FMA, MOVBE, OSXSAVE, AVX, F16C; BMI1, AVX2, BMI2; LZCNT; the OS saves YMM state.
  const unsigned v3_ecx = 1u << 12 | 1u << 22 | 1u << 27 | 1u << 28 | 1u << 29;
  const unsigned v3_ebx7 = 1u << 3 | 1u << 5 | 1u << 8;
  if (!all(leaf1.c, v3_ecx) || !all(leaf7.b, v3_ebx7) || !all(ext1.c, 1u << 5)) return 1;
  unsigned xcr0 = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_hi) : "c"(0));
  if (!all(xcr0, 0x6u)) return 1;
  // x86-64-v4: AVX-512 F, DQ, CD, BW, VL; the OS saves opmask and ZMM state.
  const unsigned v4_ebx7 = 1u << 16 | 1u << 17 | 1u << 28 | 1u << 30 | 1u << 31;
  if (!all(leaf7.b, v4_ebx7) || !all(xcr0, 0xE6u)) return 2;
  return 3;
}
#elif defined(__aarch64__)
constexpr const char* kHostArch = "aarch64";

int detect_best_rank() {
  // Linux HWCAP bits (asm/hwcap.h): CRC32, ATOMICS (LSE), FPHP, ASIMDHP, ASIMDRDM, DCPOP, ASIMDDP.
  const unsigned long wanted = 1ul << 7 | 1ul << 8 | 1ul << 9 | 1ul << 10 | 1ul << 12 | 1ul << 16 | 1ul << 20;
  return (getauxval(AT_HWCAP) & wanted) == wanted ? 1 : 0;
}
#else
constexpr const char* kHostArch = "";
int detect_best_rank() { return 0; }
#endif

std::string level_name(const CpuLevel* level) { return level != nullptr ? level->name : ""; }

}  // namespace

const std::vector<CpuLevel>& known_cpu_levels() {
  static const std::vector<CpuLevel> levels = {
      {"x86-64", "x86_64", 0},
      {"x86-64-v2", "x86_64", 1},
      {"x86-64-v3", "x86_64", 2},
      {"x86-64-v4", "x86_64", 3},
      {"armv8-a", "aarch64", 0},
      {"armv8.2-a+fp16+dotprod", "aarch64", 1},
  };
  return levels;
}

const CpuLevel* find_cpu_level(std::string_view name) {
  for (const CpuLevel& level : known_cpu_levels())
    if (name == level.name) return &level;
  return nullptr;
}

std::string CpuHost::best_name() const {
  for (const CpuLevel& level : known_cpu_levels())
    if (arch == level.arch && level.rank == best_rank) return level.name;
  return "";
}

std::string CpuHost::levels_text() const {
  std::string text;
  for (const CpuLevel& level : known_cpu_levels())
    if (arch == level.arch) text += (text.empty() ? "" : ", ") + std::string(level.name);
  return text.empty() ? "none" : text;
}

const CpuHost& this_cpu() {
  static const CpuHost host{kHostArch, detect_best_rank()};
  return host;
}

CpuLevelLimit cpu_level_limit(const CpuHost& host, const char* forced_name) {
  CpuLevelLimit limit;
  limit.level = find_cpu_level(host.best_name());
  if (forced_name == nullptr || *forced_name == '\0') return limit;
  limit.forced = true;
  std::string prefix = std::string("ETRT_CPU_LEVEL=") + forced_name + ": ";
  const CpuLevel* forced = find_cpu_level(forced_name);
  if (forced == nullptr)
    limit.error = prefix + "unknown CPU level (levels of this " + (host.arch.empty() ? "machine" : host.arch) +
                  " host: " + host.levels_text() + ")";
  else if (host.arch != forced->arch)
    limit.error = prefix + "a level of " + forced->arch + ", but this host is " +
                  (host.arch.empty() ? "another architecture" : host.arch);
  else if (!host.runs(*forced))
    limit.error = prefix + "this CPU cannot run it (it runs up to " + host.best_name() + ")";
  else
    limit.level = forced;
  return limit;
}

CpuLevelLimit cpu_level_limit_from_env() { return cpu_level_limit(this_cpu(), secure_getenv("ETRT_CPU_LEVEL")); }

VariantChoice choose_library_variant(const std::vector<LibraryVariant>& candidates, const CpuHost& host,
                                     const CpuLevelLimit& limit) {
  VariantChoice choice;
  if (!limit.error.empty()) {
    choice.error = limit.error;
    return choice;
  }
  int best_rank = -2;
  std::string declared;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& name = candidates[i].cpu_level;
    declared += (declared.empty() ? "" : ", ") + (name.empty() ? std::string("(no level)") : name);
    int rank = -1;  // a library that names no level runs on its architecture's baseline
    if (!name.empty()) {
      const CpuLevel* level = find_cpu_level(name);
      if (level == nullptr || !host.runs(*level) || limit.level == nullptr || level->rank > limit.level->rank)
        continue;
      rank = level->rank;
    }
    if (rank > best_rank) {
      best_rank = rank;
      choice.index = i;
    }
  }
  std::string limit_text = limit.forced ? "ETRT_CPU_LEVEL=" + level_name(limit.level)
                                        : "this CPU runs up to " + (host.best_name().empty() ? std::string("its baseline")
                                                                                             : host.best_name());
  if (best_rank == -2) {
    choice.error = "no library variant this CPU may run: the manifest declares " + declared + "; " + limit_text;
    return choice;
  }
  choice.ok = true;
  choice.level = candidates[choice.index].cpu_level;
  if (candidates.size() > 1 || limit.forced)
    choice.reason = "chosen from " + declared + "; " + limit_text;
  return choice;
}

}  // namespace etrt::loader
