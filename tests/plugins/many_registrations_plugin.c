/* Registers as many kernels as the setting ETRT_TEST_REGISTRATIONS says
 * ("test_many::op_0", "test_many::op_1", ...): the cost of registering must
 * grow with their number, not with its square. Its init may run again (the
 * loader's tests load it directly, more than once). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrt/plugin_api.h"

static et_error* never_called(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data; (void)ctx; (void)args; (void)nargs;
  return NULL;
}

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  const char* setting = host->setting(self, "ETRT_TEST_REGISTRATIONS");
  long count = setting != NULL ? strtol(setting, NULL, 10) : 0;
  for (long i = 0; i < count; ++i) {
    char name[64];
    snprintf(name, sizeof name, "test_many::op_%ld", i);
    et_kernel_descriptor kernel;
    memset(&kernel, 0, sizeof kernel);
    kernel.struct_size = sizeof kernel;
    kernel.name = name;
    kernel.fn = never_called;
    et_error* error = host->register_kernel(self, &kernel);
    if (error != NULL) return error;
  }
  return NULL;
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, "test_many_registrations", "1.0.0", "many kernels", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
