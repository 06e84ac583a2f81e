#include "run_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "terminal_text.h"

namespace etrt::tools {
namespace {

// An option as the user typed it: its name and, for messages, its value.
struct Given {
  std::string_view spelling;
  std::string_view value;
  std::string quoted() const { return "'" + terminal_text(value) + "'"; }
};

struct OptionSpec {
  const char* name;        // etrt's spelling ("--iterations"); nullptr: only the alias exists
  const char* alias;       // executor_runner's spelling ("--num_executions"); nullptr: none
  const char* value_name;  // "N", "FILE"; nullptr: a switch
  bool for_inspect;        // also an option of `etrt inspect`
  const char* help;
  // Applies the value; false with *problem saying what the value must be.
  bool (*apply)(ProgramOptions&, const Given&, std::string* problem);
};

// A whole decimal number in [lowest, highest]; false with *problem saying so.
bool parse_count(const Given& given, long long lowest, long long highest, const char* meaning, long long* out,
                 std::string* problem) {
  const std::string text(given.value);
  char* end = nullptr;
  errno = 0;
  const long long value = text.empty() ? 0 : std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < lowest || value > highest) {
    *problem = std::string(given.spelling) + " takes " + meaning + ", not " + given.quoted();
    return false;
  }
  *out = value;
  return true;
}

bool set_path(std::string* target, const Given& given, std::string* problem) {
  if (given.value.empty()) {
    *problem = std::string(given.spelling) + " takes a file name, not an empty one";
    return false;
  }
  *target = given.value;
  return true;
}

// executor_runner's --inputs: one argument, files separated by commas.
bool add_inputs(ProgramOptions& o, const Given& given, std::string* problem) {
  if (given.spelling != "--inputs" && given.spelling != "-inputs") return set_path(&o.inputs.emplace_back(), given, problem);
  std::string_view rest = given.value;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (item.empty()) {
      *problem = std::string(given.spelling) + " takes file names separated by commas; " + given.quoted() +
                 " has an empty one";
      return false;
    }
    o.inputs.emplace_back(item);
    if (comma == std::string_view::npos) return true;
    rest.remove_prefix(comma + 1);
  }
}

const OptionSpec kOptions[] = {
    {nullptr, "--model_path", "FILE", true, "the program, instead of MODEL.pte",
     [](ProgramOptions& o, const Given& g, std::string* p) {
       if (!o.model.empty()) {
         *p = std::string(g.spelling) + " " + g.quoted() + ": the program is already given ('" +
              terminal_text(o.model) + "')";
         return false;
       }
       return set_path(&o.model, g, p);
     }},
    {"--data", "--data_path", "FILE.ptd", true,
     "weights exported outside the program (ExecuTorch's .ptd); repeat for several files",
     [](ProgramOptions& o, const Given& g, std::string* p) { return set_path(&o.data_files.emplace_back(), g, p); }},
    {"--method", "--method_name", "NAME", false, "the method to run (default: forward, else the program's first)",
     [](ProgramOptions& o, const Given& g, std::string* p) {
       if (g.value.empty()) return *p = std::string(g.spelling) + " takes a method name, not an empty one", false;
       return o.method = g.value, true;
     }},
    {"--input", "--inputs", "FILE", false,
     "an input, in order: a .npy file, or raw bytes of the input's declared size and dtype; repeat for each "
     "input (--inputs: all of them, separated by commas). bfloat16 inputs are given as float32 .npy. "
     "Without inputs, generated values of the declared shapes are used",
     add_inputs},
    {"--iterations", "--num_executions", "N", false, "timed runs, 1 or more (default 10)",
     [](ProgramOptions& o, const Given& g, std::string* p) {
       long long n = 0;
       if (!parse_count(g, 1, 1'000'000'000, "a whole number of runs, 1 or more", &n, p)) return false;
       return o.iterations = static_cast<int>(n), true;
     }},
    {"--warmup", nullptr, "N", false, "untimed, untraced runs before the timed ones (default 0)",
     [](ProgramOptions& o, const Given& g, std::string* p) {
       long long n = 0;
       if (!parse_count(g, 0, 1'000'000'000, "a whole number of runs, 0 or more", &n, p)) return false;
       return o.warmup = static_cast<int>(n), true;
     }},
    {"--threads", "--cpu_threads", "N", false,
     "threads of the pool operators and delegates share (default: one per core; --cpu_threads -1 or 0: the "
     "default)",
     [](ProgramOptions& o, const Given& g, std::string* p) {
       const bool runner_spelling = g.spelling.find('_') != std::string_view::npos;
       long long n = 0;
       if (!parse_count(g, runner_spelling ? -1 : 1, 4096,
                        runner_spelling ? "a number of threads from 1 to 4096, or -1 for the default"
                                        : "a number of threads from 1 to 4096",
                        &n, p))
         return false;
       return o.threads = n > 0 ? static_cast<size_t>(n) : 0, true;
     }},
    {"--output-dir", nullptr, "DIR", false, "write each tensor output as DIR/output_<i>.npy (bfloat16 as float32)",
     [](ProgramOptions& o, const Given& g, std::string* p) { return set_path(&o.output_dir, g, p); }},
    {"--output-file", "--output_file", "BASE", false, "write each tensor output's raw bytes to BASE-<i>.bin",
     [](ProgramOptions& o, const Given& g, std::string* p) { return set_path(&o.output_file_base, g, p); }},
    {"--print-output", "--print_output", "MODE", false,
     "how outputs are printed: none, summary (default: dtype, shape, range, first values) or all (every element)",
     [](ProgramOptions& o, const Given& g, std::string* p) {
       if (g.value == "none") o.print_output = PrintOutput::none;
       else if (g.value == "summary") o.print_output = PrintOutput::summary;
       else if (g.value == "all") o.print_output = PrintOutput::all;
       else return *p = std::string(g.spelling) + " takes none, summary or all, not " + g.quoted(), false;
       return true;
     }},
    {"--json", nullptr, nullptr, true, "print one JSON document on standard output instead of text",
     [](ProgramOptions& o, const Given&, std::string*) { return o.json = true; }},
    {"--profile", nullptr, nullptr, false, "trace the timed runs and print the time of each operator and delegate",
     [](ProgramOptions& o, const Given&, std::string*) { return o.profile = true; }},
    {"--etdump", "--etdump_path", "FILE", false,
     "trace the timed runs and write ExecuTorch's ETDump (read it with executorch.devtools.Inspector)",
     [](ProgramOptions& o, const Given& g, std::string* p) { return set_path(&o.etdump_path, g, p); }},
    {"--debug-buffer", nullptr, "FILE", false,
     "with --etdump: also record every intermediate tensor, written to FILE (the Inspector's debug_buffer_path)",
     [](ProgramOptions& o, const Given& g, std::string* p) { return set_path(&o.debug_buffer_path, g, p); }},
    {"--debug-buffer-size", nullptr, "BYTES", false,
     "the most the debug buffer may hold (default 1 GiB; it grows only to what the runs need). Every traced "
     "run adds the same bytes (its intermediate tensors), so the need is --iterations times one run's; when "
     "it does not fit, the error gives the bytes needed, in all and per run, and the trace and profile are "
     "still written",
     [](ProgramOptions& o, const Given& g, std::string* p) {
       long long n = 0;
       if (!parse_count(g, 1, INT64_MAX, "a number of bytes, 1 or more", &n, p)) return false;
       o.debug_buffer_size_flag = g.spelling;
       o.debug_buffer_size_given = true;
       return o.debug_buffer_size = static_cast<size_t>(n), true;
     }},
    {"--trace", nullptr, "FILE.json", false, "trace the timed runs and write a Chrome trace (chrome://tracing, Perfetto)",
     [](ProgramOptions& o, const Given& g, std::string* p) { return set_path(&o.trace_path, g, p); }},
};

bool offered(const OptionSpec& spec, Command command) { return command == Command::run || spec.for_inspect; }

const char* command_name(Command command) { return command == Command::run ? "run" : "inspect"; }

// The spec named by `name` ("--x"; executor_runner's spellings also as "-x", as gflags takes them).
const OptionSpec* find_option(Command command, std::string_view name) {
  for (const OptionSpec& spec : kOptions) {
    if (!offered(spec, command)) continue;
    if (spec.name != nullptr && name == spec.name) return &spec;
    if (spec.alias != nullptr && (name == spec.alias || (name.size() > 1 && name == spec.alias + 1))) return &spec;
  }
  return nullptr;
}

std::string spellings(const OptionSpec& spec) {
  std::string text = spec.name != nullptr ? spec.name : spec.alias;
  if (spec.name != nullptr && spec.alias != nullptr) text += std::string(", ") + spec.alias;
  if (spec.value_name != nullptr) text += std::string(" ") + spec.value_name;
  return text;
}

const char* usage_line(Command command) {
  return command == Command::run ? "usage: etrt run MODEL.pte [options]" : "usage: etrt inspect MODEL.pte [options]";
}

enum class ParseOutcome { ok, help, usage_error };

ParseOutcome parse(Command command, int argc, char** argv, ProgramOptions* options, std::string* problem) {
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return ParseOutcome::help;
    if (arg.empty() || arg[0] != '-' || arg == "-") {
      if (!options->model.empty()) {
        *problem = "unexpected argument '" + terminal_text(arg) + "': the program is already given ('" +
                   terminal_text(options->model) + "')";
        return ParseOutcome::usage_error;
      }
      options->model = arg;
      continue;
    }
    // --name=value, as gflags (executor_runner's parser) also takes it.
    const size_t equals = arg.find('=');
    const std::string_view name = arg.substr(0, equals);
    const OptionSpec* spec = find_option(command, name);
    if (spec == nullptr) {
      *problem = "unknown option '" + terminal_text(name) + "' (etrt " + command_name(command) +
                 " --help lists the options)";
      return ParseOutcome::usage_error;
    }
    Given given{name, {}};
    if (spec->value_name == nullptr) {
      if (equals != std::string_view::npos) {
        *problem = std::string(name) + " takes no value";
        return ParseOutcome::usage_error;
      }
    } else if (equals != std::string_view::npos) {
      given.value = arg.substr(equals + 1);
    } else if (i + 1 < argc) {
      given.value = argv[++i];
    } else {
      *problem = std::string(name) + " needs a value (" + spec->value_name + ")";
      return ParseOutcome::usage_error;
    }
    if (!spec->apply(*options, given, problem)) return ParseOutcome::usage_error;
  }
  if (options->model.empty()) {
    *problem = "no program given (MODEL.pte)";
    return ParseOutcome::usage_error;
  }
  if (!options->debug_buffer_path.empty() && options->etdump_path.empty()) {
    *problem = "--debug-buffer needs --etdump (the dump says where each tensor is)";
    return ParseOutcome::usage_error;
  }
  if (options->debug_buffer_size_given && options->debug_buffer_path.empty()) {
    *problem = options->debug_buffer_size_flag + " needs --debug-buffer FILE (the buffer it sizes)";
    return ParseOutcome::usage_error;
  }
  return ParseOutcome::ok;
}

}  // namespace

int parse_program_options(Command command, int argc, char** argv, ProgramOptions* options) {
  std::string problem;
  switch (parse(command, argc, argv, options, &problem)) {
    case ParseOutcome::help:
      print_command_help(command, stdout);
      return 0;
    case ParseOutcome::usage_error:
      std::fprintf(stderr, "etrt %s: %s\n%s   (etrt %s --help lists the options)\n", command_name(command),
                   problem.c_str(), usage_line(command), command_name(command));
      return 2;
    case ParseOutcome::ok:
      break;
  }
  return -1;
}

void print_option_list(Command command, FILE* stream) {
  for (const OptionSpec& spec : kOptions)
    if (offered(spec, command)) std::fprintf(stream, "      %s\n", spellings(spec).c_str());
}

void print_command_help(Command command, FILE* stream) {
  std::fprintf(stream, "%s%s\n", usage_line(command), command == Command::run ? "   (or --model_path MODEL.pte)" : "");
  std::fputs(command == Command::run
                 ? "\nRuns a method of an ExecuTorch program (.pte) and prints its outputs, its latency (min, median,\n"
                   "p90, p99, max) and the plugins that served it. The second spelling of an option is\n"
                   "executor_runner's (also as --name=value or -name value), so its command lines run unchanged.\n"
                 : "\nLists the program's methods, their inputs and outputs, operators and delegates, and which\n"
                   "plugin would serve each, without loading a plugin or running anything.\n",
             stream);
  std::fputs("\noptions:\n", stream);
  for (const OptionSpec& spec : kOptions) {
    if (!offered(spec, command)) continue;
    std::fprintf(stream, "  %s\n", spellings(spec).c_str());
    // The help wrapped at 72 columns under the option.
    std::string_view help = spec.help;
    while (!help.empty()) {
      size_t cut = help.size() <= 72 ? help.size() : help.rfind(' ', 72);
      if (cut == std::string_view::npos || cut == 0) cut = std::min<size_t>(help.size(), 72);
      std::fprintf(stream, "      %.*s\n", static_cast<int>(cut), help.data());
      help.remove_prefix(cut);
      while (!help.empty() && help.front() == ' ') help.remove_prefix(1);
    }
  }
  std::fputs("  -h, --help\n      this help\n", stream);
}

}  // namespace etrt::tools
