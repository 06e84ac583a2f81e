// The options of `etrt run` and `etrt inspect`: one table per command gives each option's spellings
// (etrt's, and the one ExecuTorch's executor_runner takes, so its command lines run unchanged), its
// value and its help; parsing, `--help` and the top-level usage all read the same table.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace etrt::tools {

enum class PrintOutput { none, summary, all };

struct ProgramOptions {
  std::string model;
  std::string method;  // empty: "forward" when the program has it, else its first method
  std::vector<std::string> inputs;      // .npy, or raw bytes of the input's declared size
  std::vector<std::string> data_files;  // .ptd: weights kept outside the program
  std::string output_dir;               // output_<i>.npy
  std::string output_file_base;         // <base>-<i>.bin, raw bytes (executor_runner's --output_file)
  int iterations = 10;
  int warmup = 0;
  size_t threads = 0;  // 0: the pool's default
  PrintOutput print_output = PrintOutput::summary;
  bool json = false;
  // Tracing (the etdump tracer plugin, loaded only when one of these is given).
  bool profile = false;
  std::string etdump_path, debug_buffer_path, trace_path;
  std::string debug_buffer_size_flag;        // the spelling the user typed, for messages
  size_t debug_buffer_size = size_t{1} << 30;  // a limit: the buffer only grows to what the runs need
  bool debug_buffer_size_given = false;
  bool traced() const { return profile || !etdump_path.empty() || !trace_path.empty(); }
};

enum class Command { run, inspect };
// Parses argv (after the command's name) into *options. -1: go on. Otherwise the command's exit code, after
// printing: 0 for --help / -h (the help, on standard output), 2 for a usage error (why -- the option as typed
// and what it takes -- and the usage line, on standard error).
int parse_program_options(Command command, int argc, char** argv, ProgramOptions* options);

// The command's usage line and every option with its help (`etrt run --help`).
void print_command_help(Command command, FILE* stream);
// One line per option, indented, for the top-level usage.
void print_option_list(Command command, FILE* stream);

}  // namespace etrt::tools
