// The structure-aware mutator as a whole (fuzz/pte_struct_fuzzer.cpp gives it to
// libFuzzer): a program file in, a program file out that differs in one to four
// fields of its flatbuffer or of an XNNPACK blob inside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace etrt_fuzz {

// Decodes `data` (containers.h), applies one to four mutations (program_mutations.h; half of them
// go to a delegate blob when the program has one, graph_mutations.h), encodes into *out. False when
// `data` is not a program the decoder reads or no mutation applied. `applied` (optional) receives
// the names of the mutations.
bool mutate_file(const uint8_t* data, size_t size, uint64_t seed, std::vector<uint8_t>* out,
                 std::vector<const char*>* applied = nullptr);

// Copies one piece of the second file into the first (an instruction, a value, an operator, a
// delegate payload, a graph node or value). False when either is not a program or nothing applied.
bool cross_files(const uint8_t* data, size_t size, const uint8_t* donor, size_t donor_size, uint64_t seed,
                 std::vector<uint8_t>* out, const char** applied = nullptr);

}  // namespace etrt_fuzz
