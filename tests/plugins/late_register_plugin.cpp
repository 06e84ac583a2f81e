// A plugin whose threads keep registering after its init returned, which the
// ABI forbids (registration is only allowed during init). Its kernel
// "test_late::register_after_init" takes (threads, calls per thread) as two
// ints, starts that many threads, each calling register_kernel,
// register_backend and register_tracer in turn with a name too long to be
// stored inline, and writes into its third and fourth arguments (ints) how many
// calls the host refused with ET_ERR_INVALID_STATE and how many it answered
// otherwise. Deliberately starts threads of its own: it plays a careless plugin.
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "etrt/plugin_api.h"

namespace {

const et_host_api* g_host = nullptr;
et_plugin_handle* g_self = nullptr;

constexpr const char* kLateName = "test_late::a_name_registered_after_init_long_enough_to_be_allocated";

et_error* late_kernel(void*, et_exec_context*, et_value* const*, size_t) { return nullptr; }
et_error* late_backend_init(void*, const et_backend_init_args*, void**) { return nullptr; }
et_error* late_backend_execute(void*, void*, et_exec_context*, et_value* const*, size_t) { return nullptr; }
void ignore_event(void*, const et_trace_event*) {}

int32_t register_once(int which) {
  et_error* error = nullptr;
  if (which == 0) {
    et_kernel_descriptor kernel{};
    kernel.struct_size = sizeof kernel;
    kernel.name = kLateName;
    kernel.fn = late_kernel;
    error = g_host->register_kernel(g_self, &kernel);
  } else if (which == 1) {
    et_backend_descriptor backend{};
    backend.struct_size = sizeof backend;
    backend.id = kLateName;
    backend.init = late_backend_init;
    backend.execute = late_backend_execute;
    error = g_host->register_backend(g_self, &backend);
  } else {
    et_tracer_descriptor tracer{};
    tracer.struct_size = sizeof tracer;
    tracer.name = kLateName;
    tracer.begin = ignore_event;
    tracer.end = ignore_event;
    error = g_host->register_tracer(g_self, &tracer);
  }
  int32_t code = g_host->error_code(error);
  g_host->error_destroy(error);
  return code;
}

et_error* register_after_init(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  if (nargs != 4 || args[0]->tag != ET_VALUE_INT || args[1]->tag != ET_VALUE_INT)
    return g_host->error_create(ET_ERR_INVALID_ARGUMENT, "register_after_init(threads, calls, refused, other)");
  std::atomic<int64_t> refused{0}, other{0};
  std::vector<std::thread> threads;
  for (int64_t t = 0; t < args[0]->as_int; ++t)
    threads.emplace_back([&, calls = args[1]->as_int] {
      for (int64_t i = 0; i < calls; ++i)
        (register_once(static_cast<int>(i % 3)) == ET_ERR_INVALID_STATE ? refused : other).fetch_add(1);
    });
  for (std::thread& thread : threads) thread.join();
  args[2]->tag = ET_VALUE_INT;
  args[2]->as_int = refused.load();
  args[3]->tag = ET_VALUE_INT;
  args[3]->as_int = other.load();
  return nullptr;
}

et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  g_self = self;
  et_kernel_descriptor kernel{};
  kernel.struct_size = sizeof kernel;
  kernel.name = "test_late::register_after_init";
  kernel.fn = register_after_init;
  return host->register_kernel(self, &kernel);
}

const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, "test_late_register", "1.0.0", "registers after init", init,
};

}  // namespace

extern "C" ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
