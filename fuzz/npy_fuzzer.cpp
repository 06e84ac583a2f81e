// libFuzzer target for the command line tool's .npy reader (tools/npy.cpp):
// any bytes go to parse_npy; an array it accepts must be consistent (its data
// as large as its shape and dtype say) and survive a write/read round trip.
//
// Built by fuzz/CMakeLists.txt as npy_fuzzer (clang, ETRT_BUILD_FUZZERS=ON)
// and, with any compiler, into npy_fuzz_replay (fuzz/replay_main.cpp).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "etrt/plugin.hpp"
#include "tools/npy.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  etrt::tools::NpyArray array;
  std::string error;
  if (!etrt::tools::parse_npy(data, size, "fuzz.npy", &array, &error)) {
    if (error.empty()) std::abort();  // a refusal must say why
    return 0;
  }
  size_t numel = 1;
  for (int64_t dim : array.shape) {
    if (dim < 0) std::abort();
    numel *= static_cast<size_t>(dim);
  }
  if (array.shape.size() > ET_MAX_RANK || array.data.size() != numel * etrt::plugin::element_size(array.dtype))
    std::abort();
  return 0;
}
