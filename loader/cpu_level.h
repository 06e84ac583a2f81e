// CPU levels: named instruction-set levels a plugin library may be compiled
// for (the names are GCC's -march values), what this host can run, and the
// choice among a manifest's library variants, all made before anything is
// dlopen'ed. The core reads CPUID (x86_64) or the auxiliary vector (aarch64)
// itself: it links no cpuinfo for this.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace etrt::loader {

struct CpuLevel {
  const char* name;  // e.g. "x86-64-v3"; also the -march value it is built with
  const char* arch;  // "x86_64" or "aarch64"
  int rank;          // within its architecture: 0 is the baseline; a higher rank runs everything below it
};

// Every level this build knows, grouped by architecture, lowest rank first.
const std::vector<CpuLevel>& known_cpu_levels();
const CpuLevel* find_cpu_level(std::string_view name);  // null when unknown

// What a host runs: its architecture and the highest level whose features it
// has. Detected once per process; tests build one by hand.
struct CpuHost {
  std::string arch;   // "" on an architecture without levels
  int best_rank = 0;
  bool runs(const CpuLevel& level) const { return arch == level.arch && level.rank <= best_rank; }
  std::string best_name() const;  // "" when the architecture has no levels
  std::string levels_text() const;  // the architecture's levels, e.g. "x86-64, x86-64-v2, ..."
};
const CpuHost& this_cpu();

// The highest level the loader may pick: the host's best, or ETRT_CPU_LEVEL
// when set (tests force a level with it). A forced name that is unknown or
// that the host cannot run leaves `error` set, naming the variable.
struct CpuLevelLimit {
  const CpuLevel* level = nullptr;  // null: no levels on this architecture
  bool forced = false;
  std::string error;
};
CpuLevelLimit cpu_level_limit(const CpuHost& host, const char* forced_name);
CpuLevelLimit cpu_level_limit_from_env();  // secure_getenv("ETRT_CPU_LEVEL"), this_cpu()

// One library of a manifest and the level it needs ("" : its architecture's baseline).
struct LibraryVariant {
  std::string cpu_level;
  std::string library;  // absolute
  std::string sha256;   // "" when the manifest pins nothing
};

struct VariantChoice {
  bool ok = false;
  size_t index = 0;     // into the candidates
  std::string level;    // the chosen library's level name ("" when the manifest names none)
  std::string reason;   // one line for `etrt plugins`
  std::string error;    // when !ok
};

// The highest-ranked candidate the host runs within the limit. A candidate
// whose level is unknown here, belongs to another architecture or is above the
// limit is never chosen; if none is left, the error names what was declared.
VariantChoice choose_library_variant(const std::vector<LibraryVariant>& candidates, const CpuHost& host,
                                     const CpuLevelLimit& limit);

}  // namespace etrt::loader
