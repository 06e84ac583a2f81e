/* A well-behaved plugin written in plain C: one kernel per name it was built
 * with (TEST_PLUGIN_NAME, TEST_OP_NAME), a backend and a tracer. Its kernel
 * reports how many times init ran, so tests can prove it loaded once. */
#include "test_plugin_common.h"

#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "test_good"
#endif
#ifndef TEST_OP_NAME
#define TEST_OP_NAME "test::good_op"
#endif
#ifndef TEST_BACKEND_ID
#define TEST_BACKEND_ID "TestGoodBackend"
#endif

static const et_host_api* g_host = NULL;
static int g_init_count = 0;

static et_error* report_init_count(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  (void)user_data;
  (void)ctx;
  return test_report_value(g_host, g_init_count, args, nargs);
}

static int32_t backend_available(void* user_data) { (void)user_data; return 1; }
static et_error* backend_init(void* user_data, const et_backend_init_args* args, void** out_handle) {
  (void)user_data;
  (void)args;
  *out_handle = NULL;
  return NULL;
}
static et_error* backend_execute(void* user_data, void* handle, et_exec_context* ctx, et_value* const* args,
                                 size_t nargs) {
  (void)user_data;
  (void)handle;
  (void)ctx;
  return test_report_value(g_host, 42, args, nargs);
}
static void backend_destroy(void* user_data, void* handle) { (void)user_data; (void)handle; }

static void tracer_event(void* user_data, const et_trace_event* event) { (void)user_data; (void)event; }

static et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  ++g_init_count;
  et_kernel_descriptor kernel;
  memset(&kernel, 0, sizeof kernel);
  kernel.struct_size = sizeof kernel;
  kernel.name = TEST_OP_NAME;
  kernel.fn = report_init_count;
  et_error* error = host->register_kernel(self, &kernel);
  if (error) return error;

  et_backend_descriptor backend;
  memset(&backend, 0, sizeof backend);
  backend.struct_size = sizeof backend;
  backend.id = TEST_BACKEND_ID;
  backend.is_available = backend_available;
  backend.init = backend_init;
  backend.execute = backend_execute;
  backend.destroy = backend_destroy;
  error = host->register_backend(self, &backend);
  if (error) return error;

  et_tracer_descriptor tracer;
  memset(&tracer, 0, sizeof tracer);
  tracer.struct_size = sizeof tracer;
  tracer.name = TEST_PLUGIN_NAME "_tracer";
  tracer.begin = tracer_event;
  tracer.end = tracer_event;
  return host->register_tracer(self, &tracer);
}

static const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, TEST_PLUGIN_NAME, "1.0.0", "test plugin", init,
};

ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
