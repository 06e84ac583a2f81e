// A host written the way ExecuTorch's documentation writes one for its C++
// Module (extension/module, extension/tensor, ETDump), compiled against etrt.
// Relative to ExecuTorch, only the marked lines differ: the includes and the
// namespaces. Usage: host MODEL.pte ETDUMP_OUT (MODEL: forward(a, b) = a + b
// on two float [3, 5] tensors, as tests/models/generated/op_add/portable.pte).
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <vector>

#include <etrt/module/etdump.h>  // ExecuTorch: <executorch/devtools/etdump/etdump_flatcc.h>
#include <etrt/module/module.h>  // ExecuTorch: <executorch/extension/module/module.h>
#include <etrt/module/tensor.h>  // ExecuTorch: <executorch/extension/tensor/tensor.h>

using namespace ::etrt::extension;            // ExecuTorch: ::executorch::extension
using ::etrt::aten::ScalarType;               // ExecuTorch: ::executorch::aten::ScalarType
using ::etrt::etdump::ETDumpGen;              // ExecuTorch: ::executorch::etdump::ETDumpGen
namespace runtime = ::etrt::runtime;          // ExecuTorch: ::executorch::runtime

#define CHECK(condition)                                                 \
  do {                                                                   \
    if (!(condition)) {                                                  \
      std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #condition); \
      return 1;                                                          \
    }                                                                    \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: host MODEL.pte ETDUMP_OUT\n");
    return 2;
  }
  const char* model_path = argv[1];

  // Create a Module (loads nothing yet), with an ETDump tracer.
  Module module(model_path, Module::LoadMode::MmapUseMlock, std::make_unique<ETDumpGen>());
  CHECK(!module.is_loaded());

  // Force-load the program and a method.
  const auto error = module.load();
  CHECK(error == runtime::Error::Ok);
  CHECK(module.is_loaded());
  CHECK(module.load_method("forward") == runtime::Error::Ok);
  CHECK(module.is_method_loaded("forward"));
  CHECK(module.load_forward() == runtime::Error::Ok);

  // Metadata.
  const auto method_names = module.method_names();
  CHECK(method_names.ok());
  CHECK(method_names->count("forward"));
  const auto method_meta = module.method_meta("forward");
  CHECK(method_meta.ok());
  CHECK(std::string(method_meta->name()) == "forward");
  CHECK(method_meta->num_inputs() == 2);
  const auto input_meta = method_meta->input_tensor_meta(0);
  CHECK(input_meta.ok());
  CHECK(input_meta->scalar_type() == ScalarType::Float);
  const auto output_meta = method_meta->output_tensor_meta(0);
  CHECK(output_meta.ok());
  CHECK(output_meta->sizes().size() == 2);

  // Wrap the input data with tensors and run.
  float a[3 * 5], b[3 * 5];
  for (int i = 0; i < 15; ++i) a[i] = static_cast<float>(i), b[i] = 1.0f;
  auto tensor_a = from_blob(a, {3, 5});
  auto tensor_b = from_blob(b, {3, 5});
  const auto result = module.forward({tensor_a, tensor_b});
  CHECK(result.ok());
  const auto output = result->at(0).toTensor().const_data_ptr<float>();
  for (int i = 0; i < 15; ++i) CHECK(output[i] == a[i] + 1.0f);

  // The same through execute(), with one input set ahead and a preallocated output.
  CHECK(module.set_input("forward", make_tensor_ptr({3, 5}, std::vector<float>(15, 2.0f)), 1) == runtime::Error::Ok);
  auto preallocated = empty({3, 5});
  CHECK(module.set_output(preallocated) == runtime::Error::Ok);
  const auto second = module.execute("forward", tensor_a);
  CHECK(second.ok());
  for (int i = 0; i < 15; ++i) CHECK(preallocated->const_data_ptr<float>()[i] == a[i] + 2.0f);
  std::vector<runtime::EValue> inputs = {tensor_a, tensor_b};
  CHECK(module.set_inputs(inputs) == runtime::Error::Ok);
  CHECK(module.forward().ok());
  CHECK(module.set_input(runtime::EValue(), 1) == runtime::Error::Ok);

  // Save the ETDump.
  if (auto* etdump = dynamic_cast<ETDumpGen*>(module.event_tracer())) {
    const auto trace = etdump->get_etdump_data();
    CHECK(trace.buf && trace.size > 0);
    std::unique_ptr<void, decltype(&free)> guard(trace.buf, free);
    std::ofstream file(argv[2], std::ios::binary);
    CHECK(file);
    file.write(static_cast<const char*>(trace.buf), trace.size);
  } else {
    CHECK(false);
  }

  CHECK(module.unload_method("forward"));
  CHECK(!module.is_method_loaded("forward"));
  std::printf("ok\n");
  return 0;
}
