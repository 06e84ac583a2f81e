// pte_probe: loads one .pte in a fresh process and exercises it, so that
// program_errors_test can run cases that may crash (known core bugs) or that
// must run under a lowered address-space limit without risking its own process.
//
//   pte_probe [--rlimit-mb N] [--mode load|rerun|move-over-input] FILE
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

// Input 2 of the move case is an Int constant (1); a MoveCall puts tensor
// value 0 over it. After one run, give input 2 a tensor.
int move_over_input(et_program* program) {
  et_method* method = nullptr;
  et_error* error = nullptr;
  if (et_method_load(program, "forward", &method, &error) != ET_OK) {
    result("method", etrt_pte::take_message(error));
    return 0;
  }
  etrt_pte::InputStorage storage;
  etrt_pte::Options options;
  options.scalar_inputs = 1;
  std::string message = etrt_pte::set_zero_inputs(program, "forward", method, &storage, options);
  if (message.empty() && et_method_execute(method, &error) != ET_OK) message = etrt_pte::take_message(error);
  std::printf("first run: %s\n", message.empty() ? "ok" : message.c_str());
  float zeros[15] = {};
  int64_t sizes[2] = {3, 5};
  uint8_t order[2] = {0, 1};
  et_tensor t{};
  t.struct_size = sizeof t;
  t.dtype = ET_DTYPE_FLOAT32;
  t.rank = 2;
  t.sizes = sizes;
  t.dim_order = order;
  t.data = zeros;
  t.nbytes = t.capacity_bytes = sizeof zeros;
  et_value v{};
  v.struct_size = sizeof v;
  v.tag = ET_VALUE_TENSOR;
  v.tensor = &t;
  error = nullptr;
  if (et_method_set_input(method, 2, &v, &error) != ET_OK)
    result("input", etrt_pte::take_message(error));
  else
    result("ok", "input 2 accepted a tensor");
  et_method_destroy(method);
  return 0;
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
      std::fprintf(stderr, "usage: pte_probe [--rlimit-mb N] [--mode load|rerun|move-over-input] FILE\n");
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
  } else if (mode == "move-over-input") {
    move_over_input(program);
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
