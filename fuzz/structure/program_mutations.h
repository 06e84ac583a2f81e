// Field-level mutations of a program's flatbuffer (fuzz/structure/containers.h's PteFile):
// instruction kinds, operand indices, list lengths, tensor sizes and types, value
// kinds, memory plans, operator names, delegate references and data tables.
#pragma once

#include "containers.h"
#include "random_values.h"

namespace etrt_fuzz {

// Applies one mutation to the program (its delegate blobs are graph_mutations.h's). Returns
// the mutation's name, or nullptr when the one drawn had nothing to apply to.
const char* mutate_program(PteFile& file, Random& random);

// Copies one piece of `donor` (an instruction, a value, an operator, a delegate payload)
// into `file`, keeping the donor's indices: they mean something else there.
const char* cross_programs(PteFile& file, PteFile& donor, Random& random);

// The names mutate_program can return, for tests and statistics.
const std::vector<const char*>& program_mutation_names();

}  // namespace etrt_fuzz
