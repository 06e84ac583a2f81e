/* Works, but exports symbols besides its entry (a hygiene warning, not a refusal:
 * RTLD_LOCAL keeps them from interposing). */
#include "test_plugin_common.h"

static const et_host_api* g_host = NULL;

__attribute__((visibility("default"))) int extra_exported_function(void) { return 1; }
__attribute__((visibility("default"))) int extra_exported_data = 5;

static et_error* report(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data; (void)ctx;
  return test_report_value(g_host, extra_exported_data, args, nargs);
}

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  et_kernel_descriptor kernel;
  memset(&kernel, 0, sizeof kernel);
  kernel.struct_size = sizeof kernel;
  kernel.name = "test::extra_exports_op";
  kernel.fn = report;
  return host->register_kernel(self, &kernel);
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, "test_extra_exports", "1.0.0", "leaky exports", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
