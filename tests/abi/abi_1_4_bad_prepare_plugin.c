/* A 1.4 plugin whose kernel has prepare but neither run_prepared nor release: the host must refuse the
 * descriptor (and so the plugin's init fails with the host's message). Used by abi_1_4_test.cpp. */
#include <string.h>

#include "etrt/plugin_api.h"

static et_error* never_called(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data; (void)ctx; (void)args; (void)nargs;
  return NULL;
}

static et_error* prepare_only(void* user_data, et_value* const* args, size_t nargs, void** out_state) {
  (void)user_data; (void)args; (void)nargs;
  *out_state = NULL;
  return NULL;
}

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  et_kernel_descriptor kernel;
  memset(&kernel, 0, sizeof kernel);
  kernel.struct_size = sizeof kernel;
  kernel.name = "test_abi14::prepare_only";
  kernel.fn = never_called;
  kernel.prepare = prepare_only;
  return host->register_kernel(self, &kernel);
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, "test_abi_1_4_bad_prepare", "1.0.0", "prepare without run_prepared", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
