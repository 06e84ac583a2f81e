// A C++ host that traces a method through the public C++ API (etrt.hpp) and
// writes what the etdump tracer made of it, for the test that hands the files
// to ExecuTorch's deserializer and Inspector (test_tracing_executorch.py).
//
//   traced_host PROGRAM.pte METHOD INPUT.f32 RUNS OUT.etdp OUT.bin
//
// INPUT.f32: the raw float32 values of the method's first input, in the shape
// the program declares (the input the ETRecord's reference graph reruns).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "float_input.h"

namespace {

bool write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s PROGRAM.pte METHOD INPUT.f32 RUNS OUT.etdp OUT.bin\n", argv[0]);
    return 2;
  }
  const std::string method_name = argv[2];
  try {
    etrt::Program program = etrt::Program::load(argv[1]);
    etrt_test::FloatInput input(program, method_name);
    std::ifstream in(argv[3], std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (raw.size() != input.tensor.nbytes) {
      std::fprintf(stderr, "%s: %zu bytes; the method's first input is %zu bytes of float32\n", argv[3],
                   raw.size(), static_cast<size_t>(input.tensor.nbytes));
      return 1;
    }
    std::copy(raw.begin(), raw.end(), reinterpret_cast<char*>(input.data.data()));

    etrt::TraceSession session("etdump", 16 << 20, argv[1]);
    etrt::Method method = program.load_method(method_name);
    method.set_trace_session(&session);
    for (int run = 0, runs = std::stoi(argv[4]); run < runs; ++run) {
      method.set_input(0, input.tensor);
      method.execute();
    }
    if (!write_file(argv[5], session.result("etdump")) || !write_file(argv[6], session.result("debug_buffer"))) {
      std::fprintf(stderr, "cannot write %s or %s\n", argv[5], argv[6]);
      return 1;
    }
  } catch (const etrt::Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
