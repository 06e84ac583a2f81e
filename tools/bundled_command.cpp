// `etrt run MODEL.bpte [--verify] [--bundleio_rtol X] [--bundleio_atol X] [--method_name M] [--testset_idx N]`:
// runs a bundled program's test cases and checks each output against the expected one
// (extensions/bundled_program). executor_runner's flag names are accepted as spelled.
#include "bundled_command.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "etrt/bundled_program.h"
#include "terminal_text.h"

namespace etrt::tools {
namespace {

struct BundledOptions {
  std::string model;
  bool verify = false;
  double rtol = etrt::bundled::kDefaultRtol;
  double atol = etrt::bundled::kDefaultAtol;
  std::string method;
  std::optional<size_t> testset;
};

bool is_flag(const char* arg, const char* name) { return std::strcmp(arg, name) == 0; }

// "--name value" or "--name=value"; advances *i past the value.
bool option_value(int argc, char** argv, int* i, const char* name, std::string* value, std::string* problem) {
  size_t length = std::strlen(name);
  if (std::strncmp(argv[*i], name, length) != 0) return false;
  if (argv[*i][length] == '=') {
    *value = argv[*i] + length + 1;
    return true;
  }
  if (argv[*i][length] != '\0') return false;
  if (*i + 1 >= argc) {
    *problem = std::string(name) + " needs a value";
    return true;
  }
  *value = argv[++*i];
  return true;
}

bool parse_tolerance(const std::string& text, const char* flag, double* out, std::string* problem) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value < 0) {
    *problem = std::string(flag) + " takes a non-negative number, not '" + terminal_text(text) + "'";
    return false;
  }
  *out = value;
  return true;
}

bool parse(int argc, char** argv, BundledOptions* options, std::string* problem) {
  for (int i = 0; i < argc; ++i) {
    std::string value;
    if (is_flag(argv[i], "--verify")) {
      options->verify = true;
    } else if (option_value(argc, argv, &i, "--bundleio_rtol", &value, problem)) {
      if (!problem->empty() || !parse_tolerance(value, "--bundleio_rtol", &options->rtol, problem)) return false;
    } else if (option_value(argc, argv, &i, "--bundleio_atol", &value, problem)) {
      if (!problem->empty() || !parse_tolerance(value, "--bundleio_atol", &options->atol, problem)) return false;
    } else if (option_value(argc, argv, &i, "--method_name", &value, problem) ||
               option_value(argc, argv, &i, "--method", &value, problem)) {
      if (!problem->empty()) return false;
      options->method = value;
    } else if (option_value(argc, argv, &i, "--testset_idx", &value, problem)) {
      if (!problem->empty()) return false;
      char* end = nullptr;
      unsigned long long index = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || value[0] == '-') {
        *problem = "--testset_idx takes a test case index (0, 1, ...), not '" + terminal_text(value) + "'";
        return false;
      }
      options->testset = static_cast<size_t>(index);
    } else if (option_value(argc, argv, &i, "--model_path", &value, problem)) {
      if (!problem->empty()) return false;
      options->model = value;
    } else if (argv[i][0] == '-') {
      *problem = std::string("option '") + terminal_text(argv[i]) +
                 "' does not apply to a bundled program (it takes --verify, --bundleio_rtol, --bundleio_atol, "
                 "--method_name, --testset_idx)";
      return false;
    } else if (options->model.empty()) {
      options->model = argv[i];
    } else {
      *problem = std::string("unexpected argument '") + terminal_text(argv[i]) + "'";
      return false;
    }
  }
  if (options->model.empty()) *problem = "no bundled program given";
  if (options->testset && options->method.empty()) options->method = "forward";
  return problem->empty();
}

// Whether the command is ours: --verify, or an argument that is a bundled program file.
bool concerns_bundled_program(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    if (is_flag(argv[i], "--help") || is_flag(argv[i], "-h")) return false;
  }
  for (int i = 0; i < argc; ++i) {
    if (is_flag(argv[i], "--verify")) return true;
    const char* arg = argv[i];
    if (std::strncmp(arg, "--model_path=", 13) == 0) arg += 13;
    if (arg[0] != '-' && etrt::bundled::is_bundled_program_file(arg)) return true;
  }
  return false;
}

}  // namespace

bool run_bundled_program_command(int argc, char** argv, int* exit_code) {
  if (!concerns_bundled_program(argc, argv)) return false;
  BundledOptions options;
  std::string problem;
  if (!parse(argc, argv, &options, &problem)) {
    std::fprintf(stderr, "etrt run: %s\n", problem.c_str());
    *exit_code = 2;
    return true;
  }
  if (!etrt::bundled::is_bundled_program_file(options.model)) {
    std::fprintf(stderr,
                 "etrt run: --verify checks a bundled program's expected outputs, and '%s' is not a bundled "
                 "program (.bpte): run a plain program without --verify\n",
                 terminal_text(options.model).c_str());
    *exit_code = 2;
    return true;
  }
  try {
    auto bundled = etrt::bundled::BundledProgram::load_file(options.model);
    std::printf("bundled program %s:", terminal_text(options.model).c_str());
    for (const auto& suite : bundled.test_suites())
      std::printf(" %s (%zu test case%s)", terminal_text(suite.method_name).c_str(), suite.cases.size(),
                  suite.cases.size() == 1 ? "" : "s");
    std::printf("\n");
    etrt::bundled::VerifyReport report =
        options.method.empty() ? bundled.verify_all(options.rtol, options.atol)
                               : bundled.verify_method(options.method, options.rtol, options.atol, options.testset);
    // One line at a time: a line's own text is escaped, the line breaks between them kept.
    std::string text = report.describe();
    for (size_t start = 0; start <= text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::printf("%s\n", terminal_text(text.substr(start, end - start)).c_str());
      start = end + 1;
    }
    if (report.cases.empty()) {
      std::fprintf(stderr, "etrt run: the bundled program has no test cases to verify\n");
      *exit_code = 1;
      return true;
    }
    *exit_code = report.passed() ? 0 : 1;
  } catch (const etrt::Error& error) {
    std::fprintf(stderr, "etrt run: %s\n", terminal_text(error.what()).c_str());
    *exit_code = 2;
  }
  return true;
}

}  // namespace etrt::tools
