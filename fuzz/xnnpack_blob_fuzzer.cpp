// libFuzzer target for the XNNPACK delegate blob parser (plugins/xnnpack/blob.cpp):
// any bytes go to parse_blob, named data resolving to a zero-filled buffer of
// 1 MiB (keys starting with "missing" are absent); a blob that parses has its
// shapes inferred for its declared input shapes (plugins/xnnpack/shapes.cpp).
//
// Built by fuzz/CMakeLists.txt as xnnpack_blob_fuzzer (clang, ETRT_BUILD_FUZZERS=ON)
// and, with any compiler, into xnnpack_blob_fuzz_replay (fuzz/replay_main.cpp).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graph.h"

namespace {

constexpr size_t kNamedDataBytes = size_t{1} << 20;

std::string lookup(const char* key, const void** data, size_t* size) {
  alignas(64) static const uint8_t zeros[kNamedDataBytes] = {};
  if (std::strncmp(key, "missing", 7) == 0) return "no such key";
  *data = zeros;
  *size = kNamedDataBytes;
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The delegate gets its blob from the program at an arbitrary alignment; copy so ASan sees its exact end.
  std::vector<uint8_t> blob(data, data + size);
  etrt::xnn::Graph graph;
  bool unsupported = false;
  std::string error = etrt::xnn::parse_blob(blob.data(), blob.size(), lookup, &graph, &unsupported);
  if (!error.empty()) return 0;
  std::vector<etrt::xnn::Shape> inputs;
  for (uint32_t v : graph.inputs) inputs.push_back(graph.values[v].dims);
  std::vector<etrt::xnn::Shape> shapes;
  etrt::xnn::infer_all(graph, inputs, &shapes);
  return 0;
}
