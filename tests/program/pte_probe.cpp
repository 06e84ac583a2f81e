// pte_probe: loads one .pte in a fresh process and exercises it, so that
// program_errors_test can run cases that may crash (known core bugs) or that
// must run under a lowered address-space limit without risking its own process.
//
//   pte_probe [--rlimit-mb N] [--mode load|rerun] FILE
//
// Prints "RESULT <stage>: <message>" (stage "ok" when everything succeeded)
// and "PEAK_RSS_KB <n>", and exits 0 whenever the runtime returned normally,
// whatever it returned. A crash shows as death by a signal; an escaping C++
// exception (std::bad_alloc) terminates with SIGABRT.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "pte_exercise.h"

namespace {

void result(const std::string& stage, const std::string& message) {
  std::printf("RESULT %s: %s\n", stage.c_str(), message.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  long rlimit_mb = 0;
  std::string mode = "load";
  const char* file = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rlimit-mb") == 0 && i + 1 < argc) {
      rlimit_mb = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
      mode = argv[++i];
    } else if (file == nullptr && argv[i][0] != '-') {
      file = argv[i];
    } else {
      std::fprintf(stderr, "usage: pte_probe [--rlimit-mb N] [--mode load|rerun] FILE\n");
      return 64;
    }
  }
  if (file == nullptr) {
    std::fprintf(stderr, "pte_probe: no file\n");
    return 64;
  }
  if (rlimit_mb > 0) {
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(rlimit_mb) << 20;
    if (setrlimit(RLIMIT_AS, &limit) != 0) {
      std::perror("setrlimit");
      return 65;
    }
  }

  et_program* program = nullptr;
  et_error* error = nullptr;
  if (et_program_load_file(file, &program, &error) != ET_OK) {
    result("program", etrt_pte::take_message(error));
  } else {
    etrt_pte::Outcome outcome = etrt_pte::exercise(program, mode == "rerun" ? 2 : 1);
    result(outcome.stage.empty() ? "ok" : outcome.stage, outcome.message);
  }
  et_program_destroy(program);

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("PEAK_RSS_KB %ld\n", usage.ru_maxrss);
  std::fflush(stdout);
  return 0;
}
