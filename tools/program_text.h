// What `etrt run` and `etrt inspect` share: loading the program the options name, the method they run,
// and the words for shapes, kinds and counts.
#pragma once

#include <string>

#include "etrt/etrt.hpp"
#include "run_options.h"

namespace etrt::tools {

// The program with its .ptd files attached.
etrt::Program load_program(const ProgramOptions& options);
// --method, else "forward" when the program has it, else its first method (as executor_runner).
std::string method_to_run(const etrt::Program& program, const ProgramOptions& options);

// An error for the terminal: its message may quote names from the program.
void print_error(const char* command, const std::string& message);

std::string shape_text(const int64_t* sizes, int32_t rank);
const char* dynamism_text(int32_t dynamism);
const char* tag_text(int32_t tag);
// "1 run", "3 runs": `count` and the noun, plural unless count is 1.
std::string counted(size_t count, const char* singular, const char* plural);

}  // namespace etrt::tools
