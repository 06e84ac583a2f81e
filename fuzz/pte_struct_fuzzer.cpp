// libFuzzer's mutation hooks for pte_struct_fuzzer, the structure-aware program
// target: the inputs are whole .pte files, and a mutation changes fields of the
// program's flatbuffer or of an XNNPACK delegate blob inside it, never bytes
// (fuzz/structure/). The entry point that loads and runs each mutant is
// pte_fuzzer.cpp's, linked in beside these: load, then every method run once,
// with the XNNPACK plugin found like any other (delegate programs run their
// blobs through it).
//
// Built by fuzz/CMakeLists.txt (clang, ETRT_BUILD_FUZZERS=ON; see fuzz/run_fuzzer.sh). Its
// findings replay in any build with pte_fuzz_replay, which runs the same entry point.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::vector<uint8_t> mutant;
  for (uint64_t attempt = 0; attempt < 4; ++attempt) {
    if (!etrt_fuzz::mutate_file(data, size, seed + attempt * 0x9E3779B97F4A7C15ull, &mutant)) break;
    if (mutant.size() <= max_size) {
      std::memcpy(data, mutant.data(), mutant.size());
      return mutant.size();
    }
  }
  // Not a program the decoder reads, or every mutant larger than libFuzzer allows now: bytes, so that
  // libFuzzer always gets an input.
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                                            uint8_t* out, size_t max_out_size, unsigned int seed) {
  std::vector<uint8_t> child;
  if (!etrt_fuzz::cross_files(data1, size1, data2, size2, seed, &child) || child.size() > max_out_size) return 0;
  std::memcpy(out, child.data(), child.size());
  return child.size();
}
