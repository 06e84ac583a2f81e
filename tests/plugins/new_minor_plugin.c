/* Built against a future minor (ET_ABI_MINOR + 1) whose structs grew at the
 * end. The host must accept it, speak its own minor, and ignore the extras. */
#include "test_plugin_common.h"

/* What the future minor's structs look like: today's plus trailing fields. */
typedef struct future_kernel_descriptor {
  et_kernel_descriptor base;
  uint64_t future_flags;
} future_kernel_descriptor;

typedef struct future_plugin_info {
  et_plugin_info base;
  const char* future_field;
} future_plugin_info;

static const et_host_api* g_host = NULL;

static et_error* report_host_minor(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data; (void)ctx;
  return test_report_value(g_host, g_host->abi_minor, args, nargs);
}

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  future_kernel_descriptor kernel;
  memset(&kernel, 0, sizeof kernel);
  kernel.base.struct_size = sizeof kernel;
  kernel.base.name = "test::new_minor_op";
  kernel.base.fn = report_host_minor;
  kernel.future_flags = 0xffffffffffffffffull;
  return host->register_kernel(self, &kernel.base);
}

static const future_plugin_info kInfo = {
    {sizeof(future_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR + 1, "test_new_minor", "1.0.0", "from a newer minor",
     init},
    "ignored by older hosts",
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo.base);
}
