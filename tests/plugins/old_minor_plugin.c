/* Built against ABI 1.0 (ET_ABI_TARGET_MINOR=0): smaller kernel descriptor and
 * host table, no tracers. Must load on a newer-minor host. */
#include "test_plugin_common.h"

#if ET_ABI_TARGET_MINOR != 0
#error "build with -DET_ABI_TARGET_MINOR=0"
#endif

static const et_host_api* g_host = NULL;

static et_error* report_descriptor_size(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data; (void)ctx;
  /* Reports the size of the kernel descriptor it registered with. */
  return test_report_value(g_host, (int64_t)sizeof(et_kernel_descriptor), args, nargs);
}

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  et_kernel_descriptor kernel;
  memset(&kernel, 0, sizeof kernel);
  kernel.struct_size = sizeof kernel;
  kernel.name = "test::old_minor_op";
  kernel.fn = report_descriptor_size;
  return host->register_kernel(self, &kernel);
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, 0, "test_old_minor", "1.0.0", "built against ABI 1.0", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
