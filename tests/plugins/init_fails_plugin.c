/* Registers a kernel, then fails init: nothing it registered may stay. */
#include "test_plugin_common.h"

static et_error* never_called(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data; (void)ctx; (void)args; (void)nargs;
  return NULL;
}

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  et_kernel_descriptor kernel;
  memset(&kernel, 0, sizeof kernel);
  kernel.struct_size = sizeof kernel;
  kernel.name = "test::init_fails_op";
  kernel.fn = never_called;
  et_error* error = host->register_kernel(self, &kernel);
  if (error) return error;
  return host->error_create(ET_ERR_NOT_SUPPORTED, "simulated failure: required device missing");
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, "test_init_fails", "1.0.0", "fails to start", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
