/* Provides "test::dup_op" and reports TEST_PRIORITY_TAG through it; built twice
 * (low and high manifest priority) to test the loader's choice. */
#include "test_plugin_common.h"

#ifndef TEST_OP_NAME
#define TEST_OP_NAME "test::dup_op"
#endif

static const et_host_api* g_host = NULL;

static et_error* report_tag(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data;
  (void)ctx;
  return test_report_value(g_host, TEST_PRIORITY_TAG, args, nargs);
}

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  et_kernel_descriptor kernel;
  memset(&kernel, 0, sizeof kernel);
  kernel.struct_size = sizeof kernel;
  kernel.name = TEST_OP_NAME;
  kernel.fn = report_tag;
  return host->register_kernel(self, &kernel);
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, TEST_PLUGIN_NAME, "1.0.0", "duplicate provider", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
