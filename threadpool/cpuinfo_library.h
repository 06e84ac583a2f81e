// libetrt's own cpuinfo (to count the physical cores), opened with
// dlopen(RTLD_DEEPBIND) and called through function pointers from dlsym on that handle.
//
// Why not link it: a process may already hold other copies with the same
// symbol names in its global scope (libc10 exports cpuinfo_*; ExecuTorch's
// threadpool library too). Symbols libetrt imported by DT_NEEDED would bind to
// whichever came first. dlsym on our own handle cannot be interposed, and
// DEEPBIND keeps the library's internal calls inside it.
#pragma once

#include <cstdint>
#include <string>

namespace etrt {

struct CpuinfoLibrary {
  bool (*initialize)() = nullptr;
  uint32_t (*get_cores_count)() = nullptr;
  std::string path;
};

// Opened once (thread-safe); nullptr, with *error set, when the library or a symbol is missing.
const CpuinfoLibrary* cpuinfo_library(std::string* error);

}  // namespace etrt
