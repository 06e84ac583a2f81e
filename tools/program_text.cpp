#include "program_text.h"

#include <algorithm>
#include <cstdio>

#include "terminal_text.h"

namespace etrt::tools {

etrt::Program load_program(const ProgramOptions& options) {
  etrt::Program program = etrt::Program::load(options.model);
  for (const std::string& path : options.data_files) program.add_data_file(path);
  return program;
}

std::string method_to_run(const etrt::Program& program, const ProgramOptions& options) {
  if (!options.method.empty()) return options.method;
  const std::vector<std::string> names = program.method_names();
  if (names.empty() || std::find(names.begin(), names.end(), "forward") != names.end()) return "forward";
  return names.front();
}

void print_error(const char* command, const std::string& message) {
  std::fprintf(stderr, "etrt %s: %s\n", command, terminal_text(message, Newlines::keep).c_str());
}

std::string shape_text(const int64_t* sizes, int32_t rank) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

const char* dynamism_text(int32_t dynamism) {
  return dynamism == ET_SHAPE_STATIC ? "static" : dynamism == ET_SHAPE_DYNAMIC_BOUND ? "dynamic (bound)" : "dynamic";
}

const char* tag_text(int32_t tag) {
  switch (tag) {
    case ET_VALUE_INT: return "int";
    case ET_VALUE_BOOL: return "bool";
    case ET_VALUE_DOUBLE: return "double";
    case ET_VALUE_STRING: return "string";
    case ET_VALUE_TENSOR: return "tensor";
    default: return "none";
  }
}

std::string counted(size_t count, const char* singular, const char* plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

}  // namespace etrt::tools
