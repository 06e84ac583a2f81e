// What `etrt run` does with a method's outputs: prints them (a summary or every element), describes
// them in JSON, and writes them as .npy (--output-dir) or raw bytes (executor_runner's --output_file).
#pragma once

#include <string>

#include "etrt/etrt.hpp"
#include "json_writer.h"
#include "npy.h"
#include "run_options.h"

namespace etrt::tools {

// NumPy has no bfloat16: a bfloat16 input is given as float32 (rounded to nearest even) and a bfloat16
// output is written as float32 (exact).
void float32_to_bfloat16(NpyArray* array);

void print_output(const et_value& value, size_t index, PrintOutput mode);
void add_output_json(JsonWriter& json, const et_value& value, size_t index);

// Writes every tensor output of `method`: as DIR/output_<i>.npy, and as BASE-<i>.bin. False with *error
// naming the file and the problem.
bool write_outputs_npy(const etrt::Method& method, size_t count, const std::string& dir, std::string* error);
bool write_outputs_raw(const etrt::Method& method, size_t count, const std::string& base, std::string* error);

}  // namespace etrt::tools
