/* A plugin built for ABI 1.3 (ET_ABI_TARGET_MINOR=3), run by the 1.4 host in
 * abi_1_4_test.cpp: its kernel descriptor ends before 1.4's prepare entries,
 * and the bytes after it are garbage the host must not read. It serves
 * aten::relu.out (float32) and counts its calls (test_abi13::calls). */
#include <string.h>

#include "etrt/plugin_api.h"

static const et_host_api* g_host = NULL;
static int64_t g_calls = 0;

/* relu.out(self, out) -> out */
static et_error* relu_out(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data; (void)ctx;
  if (nargs != 3 || args[0]->tag != ET_VALUE_TENSOR || args[1]->tag != ET_VALUE_TENSOR ||
      args[0]->tensor->dtype != ET_DTYPE_FLOAT32 || args[1]->tensor->nbytes != args[0]->tensor->nbytes)
    return g_host->error_create(ET_ERR_INVALID_ARGUMENT, "test_abi_1_3 relu.out: float32 self and out of one size");
  const float* in = (const float*)args[0]->tensor->data;
  float* out = (float*)args[1]->tensor->data;
  for (size_t i = 0; i < args[0]->tensor->nbytes / sizeof(float); ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
  ++g_calls;
  return NULL;
}

/* calls(out): out INT = how many times relu_out ran. */
static et_error* calls(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data; (void)ctx;
  if (nargs != 1) return g_host->error_create(ET_ERR_INVALID_ARGUMENT, "test_abi13::calls(out)");
  args[0]->tag = ET_VALUE_INT;
  args[0]->as_int = g_calls;
  return NULL;
}

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  static const struct { const char* name; et_kernel_fn fn; } kernels[] = {
      {"aten::relu.out", relu_out},
      {"test_abi13::calls", calls},
  };
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; ++i) {
    /* The 1.3 descriptor, then what a 1.4 host would take for prepare, run_prepared and release. */
    union {
      et_kernel_descriptor kernel;
      unsigned char bytes[sizeof(et_kernel_descriptor) + 3 * sizeof(void*)];
    } storage;
    memset(storage.bytes, 0xA5, sizeof storage.bytes);
    memset(&storage.kernel, 0, sizeof storage.kernel);
    storage.kernel.struct_size = sizeof storage.kernel;
    storage.kernel.name = kernels[i].name;
    storage.kernel.fn = kernels[i].fn;
    et_error* error = host->register_kernel(self, &storage.kernel);
    if (error != NULL) return error;
  }
  return NULL;
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_TARGET_MINOR, "test_abi_1_3", "1.0.0", "an ABI 1.3 kernel plugin", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
