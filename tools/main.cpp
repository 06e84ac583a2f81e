// `etrt`: the command line front of libetrt.
#include <csignal>
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "etrt/etrt.h"
#include "terminal_text.h"

namespace {

void print_usage(FILE* stream) {
  std::fprintf(stream,
               "usage: etrt <command> [options]\n"
               "\n"
               "commands:\n"
               "  run MODEL.pte [--data WEIGHTS.ptd ...] [--method NAME] [--input FILE.npy ...] [--iterations N]\n"
               "      [--output-dir DIR]\n"
               "      run a method; print its outputs, latency and the plugins that served it\n"
               "      (--data: weights exported outside the program, ExecuTorch's .ptd files;\n"
               "      bfloat16 tensors: inputs given as float32 .npy, outputs written as float32)\n"
               "  inspect MODEL.pte [--data WEIGHTS.ptd ...]\n"
               "      list methods, inputs/outputs, operators and delegates, and which plugin\n"
               "      would serve each (nothing is run or loaded)\n"
               "  plugins [--json] [--load-all] [--manifest PATH]...\n"
               "      list manifests, plugins (loaded or not), what each provides, and the\n"
               "      loader's decisions\n"
               "  version\n"
               "      print the etrt and plugin ABI versions\n");
}

}  // namespace

int main(int argc, char** argv) {
  // A file larger than the process' size limit (ulimit -f) is then a write error the command reports,
  // naming the file, instead of a signal that kills it.
  std::signal(SIGXFSZ, SIG_IGN);
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "plugins") == 0) return run_plugins_command(argc - 2, argv + 2);
  if (std::strcmp(argv[1], "run") == 0) return run_run_command(argc - 2, argv + 2);
  if (std::strcmp(argv[1], "inspect") == 0) return run_inspect_command(argc - 2, argv + 2);
  if (std::strcmp(argv[1], "version") == 0) {
    uint32_t major = 0, min_minor = 0, max_minor = 0;
    et_host_abi_version(&major, &min_minor, &max_minor);
    std::printf("etrt %s, plugin ABI %u.%u-%u.%u\n", et_version(), major, min_minor, major, max_minor);
    return 0;
  }
  std::fprintf(stderr, "etrt: unknown command '%s'\n\n", etrt::tools::terminal_text(argv[1]).c_str());
  print_usage(stderr);
  return 2;
}
