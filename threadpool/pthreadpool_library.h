// libetrt's own pthreadpool and cpuinfo, opened with dlopen(RTLD_DEEPBIND)
// and called through function pointers from dlsym on that handle.
//
// Why not link them: a process may already hold other copies of these
// libraries with the same symbol names in its global scope (PyTorch's
// libtorch_cpu exports pthreadpool_*, libc10 exports cpuinfo_*; ExecuTorch's
// threadpool library exports both). Symbols libetrt imported by DT_NEEDED
// would bind to whichever came first, so libetrt could create its pool with
// PyTorch's implementation and hand it to an XNNPACK that drives it with
// Debian's: two layouts of one object. dlsym on our own handle cannot be
// interposed, and DEEPBIND keeps the library's internal calls inside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

struct pthreadpool;

namespace etrt {

struct PthreadpoolLibrary {
  using Task1dTile1d = void (*)(void*, size_t, size_t);

  pthreadpool* (*create)(size_t threads) = nullptr;
  void (*destroy)(pthreadpool*) = nullptr;
  size_t (*get_threads_count)(pthreadpool*) = nullptr;
  void (*parallelize_1d_tile_1d)(pthreadpool*, Task1dTile1d, void*, size_t, size_t, uint32_t) = nullptr;
  std::string path;  // where the library was found
};

struct CpuinfoLibrary {
  bool (*initialize)() = nullptr;
  uint32_t (*get_cores_count)() = nullptr;
  std::string path;
};

// Opened once (thread-safe); nullptr, with *error set, when the library or a symbol is missing.
const PthreadpoolLibrary* pthreadpool_library(std::string* error);
const CpuinfoLibrary* cpuinfo_library(std::string* error);

}  // namespace etrt
