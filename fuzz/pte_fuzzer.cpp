// libFuzzer target for the program loader and executor: any bytes go to
// et_program_load_bytes; a program that loads has every method loaded and run
// once on zero-filled inputs of its declared shapes. Errors are expected; a
// crash, a sanitizer report, a leak or an allocation beyond -rss_limit_mb /
// -malloc_limit_mb is a finding.
//
// Built by fuzz/CMakeLists.txt as pte_fuzzer (clang, ETRT_BUILD_FUZZERS=ON,
// see fuzz/run_fuzzer.sh), into pte_struct_fuzzer with the structure-aware
// mutator (pte_struct_fuzzer.cpp) and, with any compiler, into pte_fuzz_replay,
// which runs this entry point over files (fuzz/replay_main.cpp).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "etrt/etrt.h"
#include "pte_exercise.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // One thread: deterministic runs, and no pool threads to confuse leak checks.
  setenv("ETRT_NUM_THREADS", "1", 0);
  // A mutated program plans whatever its numbers say: under the default 32 GiB limit one that
  // plans gigabytes and runs a kernel over them ends the campaign at -rss_limit_mb (not a bug:
  // the limit is the host's choice). Far above every seed, so the refusal path is fuzzed too.
  setenv("ETRT_MAX_PLANNED_MEMORY", "256M", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  et_program* program = nullptr;
  et_error* error = nullptr;
  if (et_program_load_bytes(data, size, "fuzz.pte", &program, &error) != ET_OK) {
    et_error_destroy(error);
    return 0;
  }
  etrt_pte::Options options;
  options.max_input_bytes = size_t{16} << 20;  // our own inputs stay small; the runtime's are its business
  etrt_pte::exercise(program, 1, options);
  et_program_destroy(program);
  return 0;
}
