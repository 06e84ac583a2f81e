// `etrt`: the command line front of libetrt.
#include <csignal>
#include <cstdio>
#include <cstring>

#include "bundled_command.h"
#include "commands.h"
#include "etrt/etrt.h"
#include "run_options.h"
#include "terminal_text.h"

namespace {

using etrt::tools::Command;

void print_usage(FILE* stream) {
  std::fprintf(stream,
               "usage: etrt <command> [options]      (etrt <command> --help: the command's options)\n"
               "\n"
               "commands:\n"
               "  run MODEL.pte [options]\n"
               "      run a method; print its outputs, latency and the plugins that served it; with --profile,\n"
               "      --etdump or --trace, trace the timed runs. Options (executor_runner's spelling second):\n");
  etrt::tools::print_option_list(Command::run, stream);
  std::fprintf(stream,
               "  inspect MODEL.pte [options]\n"
               "      list methods, inputs/outputs, operators and delegates, and which plugin would serve\n"
               "      each (nothing is run or loaded). Options:\n");
  etrt::tools::print_option_list(Command::inspect, stream);
  std::fprintf(stream,
               "  generate MODEL.pte --tokenizer FILE --prompt TEXT [options]\n"
               "      generate text with an LLM program; stream it, then print prefill/decode tokens/s\n"
               "      and the time to first token (etrt generate --help: its options)\n"
               "  plugins [--json] [--load-all] [--manifest PATH]...\n"
               "      list manifests, plugins (loaded or not), what each provides, and the\n"
               "      loader's decisions\n"
               "  version, --version\n"
               "      print the etrt and plugin ABI versions\n");
}

int print_version() {
  uint32_t major = 0, min_minor = 0, max_minor = 0;
  et_host_abi_version(&major, &min_minor, &max_minor);
  std::printf("etrt %s, plugin ABI %u.%u-%u.%u\n", et_version(), major, min_minor, major, max_minor);
  return 0;
}

bool asks_for_help(int argc, char** argv) {
  for (int i = 0; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // A file larger than the process' size limit (ulimit -f) is then a write error the command reports,
  // naming the file, instead of a signal that kills it.
  std::signal(SIGXFSZ, SIG_IGN);
  if (argc < 2) {
    std::fprintf(stderr, "etrt: no command given\n\n");
    print_usage(stderr);
    return 2;
  }
  const char* command = argv[1];
  if (std::strcmp(command, "--help") == 0 || std::strcmp(command, "-h") == 0 || std::strcmp(command, "help") == 0) {
    print_usage(stdout);
    return 0;
  }
  if (std::strcmp(command, "plugins") == 0) return run_plugins_command(argc - 2, argv + 2);
  if (std::strcmp(command, "run") == 0) {
    int exit_code = 0;  // a bundled program (.bpte) or --verify: tools/bundled_command.cpp
    if (etrt::tools::run_bundled_program_command(argc - 2, argv + 2, &exit_code)) return exit_code;
    return run_run_command(argc - 2, argv + 2);
  }
  if (std::strcmp(command, "inspect") == 0) return run_inspect_command(argc - 2, argv + 2);
  if (std::strcmp(command, "generate") == 0) return run_generate_command(argc - 2, argv + 2);
  if (std::strcmp(command, "version") == 0 || std::strcmp(command, "--version") == 0) {
    if (asks_for_help(argc - 2, argv + 2)) {
      std::printf("usage: etrt version   (or etrt --version)\n\nPrints the etrt version and the plugin ABI "
                  "versions it accepts.\n");
      return 0;
    }
    if (argc > 2) {
      std::fprintf(stderr, "etrt version: unexpected argument '%s' (it takes none)\n",
                   etrt::tools::terminal_text(argv[2]).c_str());
      return 2;
    }
    return print_version();
  }
  std::fprintf(stderr, "etrt: unknown command '%s'\n\n", etrt::tools::terminal_text(command).c_str());
  print_usage(stderr);
  return 2;
}
