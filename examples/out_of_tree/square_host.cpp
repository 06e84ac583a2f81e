// A host that adds a plugin's manifest, then calls its operator through the
// registry (the plugin is loaded on that first lookup).
#include <cstdio>
#include <vector>

#include "etrt/etrt.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: square_host MANIFEST\n");
    return 2;
  }
  try {
    auto& runtime = etrt::Runtime::get();
    runtime.add_manifest(argv[1]);
    et_kernel_descriptor square = runtime.find_kernel("my_ops::square.out");  // loads the plugin

    std::vector<float> x = {1, 2, 3, -4}, y(4);
    int64_t sizes[] = {4}, strides[] = {1};
    uint8_t order[] = {0};
    et_tensor tensors[2]{};
    et_value values[2]{};
    float* data[2] = {x.data(), y.data()};
    for (int i = 0; i < 2; ++i) {
      tensors[i] = {sizeof(et_tensor), ET_DTYPE_FLOAT32, 1, sizes, order, strides, data[i], 16, 16, 0, 0};
      values[i].struct_size = sizeof(et_value);
      values[i].tag = ET_VALUE_TENSOR;
      values[i].tensor = &tensors[i];
    }
    // As a program passes them: the schema's arguments (self, out), then the returned out again.
    et_value* args[] = {&values[0], &values[1], &values[1]};
    if (et_error* error = square.fn(square.user_data, nullptr, args, 3)) etrt::check(et_error_code(error), error);
    for (float v : y) std::printf("%g ", v);
    std::printf("\n");
    for (const auto& plugin : runtime.plugins())
      if (plugin.loaded()) std::printf("loaded: %s %s\n", plugin.name.c_str(), plugin.version.c_str());
  } catch (const etrt::Error& error) {
    std::fprintf(stderr, "square_host: %s\n", error.what());
    return 1;
  }
  return 0;
}
