// Writes a small ETDump and debug buffer with known contents, for the test that
// reads them with ExecuTorch's own deserializer and Inspector.
#include <cstdio>
#include <fstream>
#include <string>

#include "debug_buffer.h"
#include "etdump_writer.h"
#include "event_log.h"

using namespace etrt::etdump;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT.etdp OUT.bin\n", argv[0]);
    return 2;
  }
  EventLog log;
  DebugBuffer buffer(1 << 20);
  log.begin_block("Default");
  log.add(ProfileRecord{log.intern("Method::init"), 0, -1, -1, kNoName, 1000, 5000, 0});
  log.add(ProfileRecord{log.intern("Program::load_method"), 0, -1, -1, kNoName, 500, 6000, 0});
  for (int run = 0; run < 2; ++run) {
    log.begin_block("Execute");
    uint64_t t = 10000 + run * 10000;
    const char* ops[] = {"native_call_addmm.out", "native_call_relu.out"};
    for (int i = 0; i < 2; ++i) {
      log.add(ProfileRecord{log.intern(ops[i]), 0, i, -1, kNoName, t + i * 1000, t + i * 1000 + 700, 0});
      float values[4] = {float(i), float(i + 1), 7.0f, -1.5f};  // the Inspector requires runs to agree
      DebugRecord debug;
      debug.instruction = i;
      debug.name = log.intern(ops[i]);
      debug.kind = DebugRecord::Kind::Tensor;
      debug.tensors.push_back(TensorRecord{6, {2, 2}, {2, 1}, *buffer.append(values, sizeof values)});
      log.add(std::move(debug));
    }
    log.add(ProfileRecord{log.intern("Method::execute"), 0, -1, -1, kNoName, t, t + 2500, 0});
  }
  std::vector<uint8_t> dump = write_etdump(log);
  std::ofstream(argv[1], std::ios::binary).write(reinterpret_cast<const char*>(dump.data()), dump.size());
  std::ofstream(argv[2], std::ios::binary)
      .write(reinterpret_cast<const char*>(buffer.bytes().data()), buffer.bytes().size());
  return 0;
}
