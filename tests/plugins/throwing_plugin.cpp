// A plugin that breaks the ABI's rule against exceptions everywhere it can: a
// C++ exception from everything it implements. Built three times:
//   THROW_IN_ENTRY: et_plugin_entry throws;
//   THROW_IN_INIT:  init registers a kernel, then throws (nothing may stay);
//   neither:        init succeeds, and then
//     - its kernel "aten::relu.out" (priority 300: it outranks every other relu) throws; it
//       prepares (ABI 1.4): its prepare throws when the setting ETRT_TEST_THROW_KERNEL is
//       "prepare"; with "release" it prepares a state whose release throws; else it prepares
//       nothing (the host calls fn);
//     - its backend "XnnpackBackend" (priority 300) throws from init when the setting
//       ETRT_TEST_THROW_BACKEND is "init", else from execute;
//     - its tracer "test_throwing_tracer" throws from session_create when the setting
//       ETRT_TEST_THROW_TRACER is "create", else from every recording call (its result
//       is "nothing recorded" when none of them ran).
// Deliberately not written with etrt/plugin.hpp's fence: the host's fences are what is tested.
#include <stdexcept>
#include <string>

#include "etrt/plugin_api.h"

namespace {

const et_host_api* g_host = nullptr;
et_plugin_handle* g_self = nullptr;

bool setting_is(const char* name, const char* value) {
  const char* text = g_host->setting(g_self, name);
  return text != nullptr && std::string(text) == value;
}

et_error* relu_throws(void*, et_exec_context*, et_value* const*, size_t) {
  throw std::runtime_error("kernel boom");
}

int g_states = 0;  // the state a prepare hands out when its release is to throw

et_error* relu_prepare(void*, et_value* const*, size_t, void** state) {
  if (setting_is("ETRT_TEST_THROW_KERNEL", "prepare")) throw std::runtime_error("prepare boom");
  *state = setting_is("ETRT_TEST_THROW_KERNEL", "release") ? &g_states : nullptr;
  return nullptr;
}

et_error* relu_run_prepared(void*, void*, et_exec_context*, et_value* const*, size_t) {
  throw std::runtime_error("kernel boom");
}

void relu_release(void*, void*) { throw std::runtime_error("release boom"); }

et_error* backend_init(void*, const et_backend_init_args*, void** out_handle) {
  if (setting_is("ETRT_TEST_THROW_BACKEND", "init")) throw std::invalid_argument("backend init boom");
  *out_handle = nullptr;
  return nullptr;
}

et_error* backend_execute(void*, void*, et_exec_context*, et_value* const*, size_t) {
  throw std::out_of_range("backend execute boom");
}

void backend_destroy(void*, void*) {}

struct Session {
  bool recorded = false;
};

void ignore_event(void*, const et_trace_event*) {}

et_error* session_create(void*, const et_trace_session_args*, void** out_session) {
  if (setting_is("ETRT_TEST_THROW_TRACER", "create")) throw std::runtime_error("session_create boom");
  *out_session = new Session;
  return nullptr;
}

void session_destroy(void*, void* session) { delete static_cast<Session*>(session); }

[[noreturn]] void recording_throws(void* session) {
  static_cast<Session*>(session)->recorded = true;
  throw std::runtime_error("tracer boom");
}

void session_begin(void* session, const et_trace_event*) { recording_throws(session); }
void session_end(void* session, const et_trace_event*) { recording_throws(session); }
void session_span(void* session, const et_trace_event*, uint64_t) { recording_throws(session); }
void session_records(void* session, const et_trace_batch*) { recording_throws(session); }

et_error* session_result(void* session, const char*, et_trace_sink sink, void* sink_context) {
  const std::string text = static_cast<Session*>(session)->recorded ? "recorded" : "nothing recorded";
  sink(sink_context, text.data(), text.size());
  return nullptr;
}

et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  g_self = self;
  et_kernel_descriptor kernel{};
  kernel.struct_size = sizeof kernel;
  kernel.name = "aten::relu.out";
  kernel.fn = relu_throws;
  kernel.prepare = relu_prepare;
  kernel.run_prepared = relu_run_prepared;
  kernel.release = relu_release;
  if (et_error* error = host->register_kernel(self, &kernel)) return error;
#ifdef THROW_IN_INIT
  throw std::logic_error("init boom");
#endif
  et_backend_descriptor backend{};
  backend.struct_size = sizeof backend;
  backend.id = "XnnpackBackend";
  backend.init = backend_init;
  backend.execute = backend_execute;
  backend.destroy = backend_destroy;
  if (et_error* error = host->register_backend(self, &backend)) return error;
  et_tracer_descriptor tracer{};
  tracer.struct_size = sizeof tracer;
  tracer.name = "test_throwing_tracer";
  tracer.begin = ignore_event;
  tracer.end = ignore_event;
  tracer.session_create = session_create;
  tracer.session_destroy = session_destroy;
  tracer.session_begin = session_begin;
  tracer.session_end = session_end;
  tracer.session_span = session_span;
  tracer.session_records = session_records;
  tracer.session_result = session_result;
  return host->register_tracer(self, &tracer);
}

const et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, TEST_PLUGIN_NAME, "1.0.0", "throws from everything", init,
};

}  // namespace

extern "C" ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
#ifdef THROW_IN_ENTRY
  (void)offer;
  (void)answer;
  throw std::runtime_error("entry boom");
#else
  return et_plugin_answer_offer(offer, answer, &kInfo);
#endif
}
