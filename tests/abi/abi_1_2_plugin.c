/* A plugin exercising what ABI 1.2 added: it leaves a backend's optional
 * entries NULL, reads settings and error messages through the host, and asks
 * for scratch memory outside a method. Each kernel reports through its
 * arguments (see abi_1_2_test.cpp). */
#include <string.h>

#include "etrt/plugin_api.h"

static const et_host_api* g_host = NULL;
static et_plugin_handle* g_self = NULL;
static char g_message[512];

/* args[0]: STRING, the setting's name; args[1] gets the value as a STRING, or NULL. */
static et_error* read_setting(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data; (void)ctx;
  if (nargs != 2 || args[0]->tag != ET_VALUE_STRING || args[0]->count >= sizeof g_message)
    return g_host->error_create(ET_ERR_INVALID_ARGUMENT, "test_abi::setting(name, out)");
  char name[sizeof g_message];
  memcpy(name, args[0]->items, args[0]->count);
  name[args[0]->count] = '\0';
  const char* value = et_host_setting(g_host, g_self, name);
  args[1]->tag = value != NULL ? ET_VALUE_STRING : ET_VALUE_NULL;
  args[1]->items = value;
  args[1]->count = value != NULL ? strlen(value) : 0;
  return NULL;
}

/* Asks the host for named data that does not exist and reports the host's own
 * code (args[0]) and message (args[1]). */
static et_error* read_host_error(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data; (void)ctx;
  if (nargs != 2) return g_host->error_create(ET_ERR_INVALID_ARGUMENT, "test_abi::error(code, message)");
  const void* data = NULL;
  size_t size = 0;
  et_error* error = g_host->named_data_get(NULL, "no_such_key", &data, &size);
  args[0]->tag = ET_VALUE_INT;
  args[0]->as_int = g_host->error_code(error);
  strncpy(g_message, et_host_error_message(g_host, error, "(host too old)"), sizeof g_message - 1);
  g_host->error_destroy(error);
  args[1]->tag = ET_VALUE_STRING;
  args[1]->items = g_message;
  args[1]->count = strlen(g_message);
  return NULL;
}

/* args[0].as_int = 1 when scratch_alloc refuses a call without a context. */
static et_error* scratch_without_context(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data;
  if (nargs != 1) return g_host->error_create(ET_ERR_INVALID_ARGUMENT, "test_abi::scratch_null(out)");
  args[0]->tag = ET_VALUE_INT;
  args[0]->as_int = et_host_scratch_alloc(g_host, ctx, 64, 16) == NULL;
  return NULL;
}

static et_error* minimal_init(void* user_data, const et_backend_init_args* args, void** handle) {
  (void)user_data; (void)args;
  *handle = NULL;
  return NULL;
}

static et_error* minimal_execute(void* user_data, void* handle, et_exec_context* ctx, et_value* const* args,
                                 size_t nargs) {
  (void)user_data; (void)handle; (void)ctx; (void)args; (void)nargs;
  return NULL;
}

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  g_self = self;
  static const struct { const char* name; et_kernel_fn fn; } kernels[] = {
      {"test_abi::setting", read_setting},
      {"test_abi::error", read_host_error},
      {"test_abi::scratch_null", scratch_without_context},
  };
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; ++i) {
    et_kernel_descriptor kernel;
    memset(&kernel, 0, sizeof kernel);
    kernel.struct_size = sizeof kernel;
    kernel.name = kernels[i].name;
    kernel.fn = kernels[i].fn;
    et_error* error = host->register_kernel(self, &kernel);
    if (error != NULL) return error;
  }
  et_backend_descriptor backend;
  memset(&backend, 0, sizeof backend);  /* is_available and destroy: optional, left NULL */
  backend.struct_size = sizeof backend;
  backend.id = "TestMinimalBackend";
  backend.init = minimal_init;
  backend.execute = minimal_execute;
  return host->register_backend(self, &backend);
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, "test_abi_1_2", "1.0.0", "ABI 1.2 entries", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
