// What ABI 1.4 adds: prepared kernels (et_kernel_descriptor.prepare, run_prepared, release). Checked here from
// outside: the host speaks 1.4, kernels_optimized's hot kernels prepare, and a plugin built for 1.3
// (abi_1_3_plugin.c, whose descriptor is followed by garbage where 1.4's entries would be) still registers, loads
// and serves a real program. The host's side of prepare (once per instruction at load, run_prepared per call,
// release with the method, errors) is tested with a fake resolver in tests/program/method_resolver_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "test_support.h"

using namespace etrt_test;

namespace {

int64_t abi13_relu_calls() {
  et_kernel_descriptor kernel = etrt::Runtime::get().find_kernel("test_abi13::calls");
  et_value out{};
  out.struct_size = sizeof out;
  et_value* args[] = {&out};
  et_error* error = kernel.fn(kernel.user_data, nullptr, args, 1);
  EXPECT_EQ(error, nullptr);
  return out.as_int;
}

TEST(Abi14, HostSpeaksTheNewMinor) {
  const et_host_api* host = et_host_api_get();
  EXPECT_GE(host->abi_minor, 4u);  // 1.5 hosts keep every 1.4 entry
  EXPECT_EQ(host->abi_minor, static_cast<uint32_t>(ET_ABI_MINOR));
}

// Runs before the 1.3 plugin's manifest is added (it outranks kernels_optimized's relu).
TEST(Abi14, KernelsOptimizedPreparesItsHotKernels) {
  for (const char* op : {"aten::add.out", "aten::mul.out", "aten::relu.out", "aten::where.self_out",
                         "aten::view_copy.out", "aten::permute_copy.out"}) {
    et_kernel_descriptor kernel{};
    kernel.struct_size = sizeof kernel;
    ASSERT_EQ(et_find_kernel(op, &kernel, nullptr), ET_OK) << op;
    EXPECT_NE(kernel.prepare, nullptr) << op;
    EXPECT_NE(kernel.run_prepared, nullptr) << op;
    EXPECT_NE(kernel.release, nullptr) << op;
  }
}

// A host compiled against a 1.3 etrt.h passes the smaller descriptor: the lookup writes no byte past it.
TEST(Abi14, LookupWritesOnlyTheDescriptorPrefixTheCallerHasRoomFor) {
  struct {
    et_kernel_descriptor kernel;
    unsigned char canary[64];
  } out;
  std::memset(&out, 0xAB, sizeof out);
  const size_t size_1_3 = offsetof(et_kernel_descriptor, prepare);
  out.kernel.struct_size = size_1_3;
  ASSERT_EQ(et_find_kernel("aten::add.out", &out.kernel, nullptr), ET_OK);
  EXPECT_EQ(out.kernel.struct_size, size_1_3);
  EXPECT_NE(out.kernel.fn, nullptr);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&out);
  for (size_t i = size_1_3; i < sizeof out; ++i) ASSERT_EQ(bytes[i], 0xAB) << "byte " << i << " overwritten";

  et_kernel_descriptor unset{};
  et_error* error = nullptr;
  EXPECT_EQ(et_find_kernel("aten::add.out", &unset, &error), ET_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(et_error_message(error), ::testing::HasSubstr("et_find_kernel: out->struct_size is not set"));
  et_error_destroy(error);
}

TEST(Abi14, AKernelWithPrepareButNoRunPreparedIsRefused) {
  try {
    etrt::Runtime::get().load_plugin(ETRT_TEST_BAD_PREPARE_PLUGIN);
    FAIL() << "a descriptor with prepare alone must be refused";
  } catch (const etrt::Error& error) {
    EXPECT_THAT(error.what(), ::testing::HasSubstr(
                                  "kernel descriptor 'test_abi14::prepare_only' has prepare but not run_prepared and release"));
  }
}

TEST(Abi14, APluginBuiltForOneThreeRegistersWithoutThePrepareEntries) {
  etrt::Runtime::get().add_manifest(ETRT_TEST_ABI13_MANIFEST);
  et_kernel_descriptor relu = etrt::Runtime::get().find_kernel("aten::relu.out");
  etrt::PluginInfo plugin = plugin_named("test_abi_1_3");
  EXPECT_EQ(plugin.failure, "");
  EXPECT_EQ(plugin.abi_minor, 3u);
  // The bytes after its struct_size are 0xA5: read, they would be non-null entries.
  EXPECT_EQ(relu.prepare, nullptr);
  EXPECT_EQ(relu.run_prepared, nullptr);
  EXPECT_EQ(relu.release, nullptr);
}

TEST(Abi14, APluginBuiltForOneThreeServesAProgram) {
  etrt::Runtime::get().add_manifest(ETRT_TEST_ABI13_MANIFEST);
  etrt::Program program = etrt::Program::load(std::string(ETRT_TEST_MODELS_DIR) + "/op_relu/portable.pte");
  etrt::Method method = program.load_method("forward");
  std::vector<int64_t> sizes = {3, 7};
  std::vector<float> input(21);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i) - 10.5f;
  et_tensor tensor = float32_tensor(sizes, input);
  int64_t before = abi13_relu_calls();
  for (int run = 0; run < 3; ++run) {
    method.set_input(0, tensor);
    method.execute();
    const et_value& out = method.output(0);
    ASSERT_EQ(out.tag, ET_VALUE_TENSOR);
    const auto* result = static_cast<const float*>(out.tensor->data);
    for (size_t i = 0; i < input.size(); ++i) EXPECT_EQ(result[i], input[i] > 0 ? input[i] : 0.0f) << i;
  }
  EXPECT_EQ(abi13_relu_calls() - before, 3) << "the 1.3 plugin's relu served every run";
}

}  // namespace
