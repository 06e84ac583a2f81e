// Entry point of the etdump tracer plugin (libetrt_etdump.so.1): registers the
// tracer "etdump", whose sessions record ETDump, debug buffers and traces.
#include <cstddef>
#include <new>
#include <string>

#include "etdump_session.h"
#include "etrt/plugin.hpp"
#include "etrt/plugin_api.h"

namespace etrt::etdump {
namespace {

const et_host_api* g_host = nullptr;
et_plugin_handle* g_self = nullptr;

constexpr uint64_t kDefaultSessionMemory = uint64_t{4} << 30;

// ETRT_MAX_TRACE_MEMORY, read through the host (its rules for the environment) when a session opens.
// Its warning builds strings: call it inside a fence.
uint64_t session_memory_limit() {
  const char* text = et_host_setting(g_host, g_self, "ETRT_MAX_TRACE_MEMORY");
  if (text == nullptr || *text == '\0') return kDefaultSessionMemory;
  uint64_t bytes = 0;
  if (plugin::parse_byte_size(text, &bytes)) return bytes;
  if (g_host->log != nullptr)
    g_host->log(g_self, ET_LOG_WARN,
                ("ETRT_MAX_TRACE_MEMORY='" + std::string(text) + "' is not a byte size (e.g. 512M, 8G); using " +
                 plugin::byte_size_text(kDefaultSessionMemory))
                    .c_str());
  return kDefaultSessionMemory;
}

// Runs a recording call; memory running out ends the session's recording instead of the process.
template <typename Fn>
void recording(void* session, Fn&& fn) {
  try {
    fn(*static_cast<EtdumpSession*>(session));
  } catch (const std::bad_alloc&) {
    static_cast<EtdumpSession*>(session)->stop_out_of_memory();
  }
}

// A process-wide listener is not what this tracer is for: begin/end do nothing.
void ignore_event(void*, const et_trace_event*) {}

et_error* session_create(void*, const et_trace_session_args* args, void** out_session) {
  if (args == nullptr || out_session == nullptr ||
      args->struct_size < offsetof(et_trace_session_args, debug_buffer_size) + sizeof(size_t))
    return g_host->error_create(ET_ERR_INVALID_ARGUMENT, "etdump: session arguments are null or too small");
  // Messages and the session allocate: out of memory is an error, never an exception into the host.
  return plugin::fence(g_host, "etdump: session_create", [&]() -> et_error* {
    const uint64_t limit = session_memory_limit();
    if (args->debug_buffer_size > limit)
      return g_host->error_create(
          ET_ERR_OUT_OF_MEMORY,
          ("etdump: a debug buffer of " + std::to_string(args->debug_buffer_size) + " bytes is more than the " +
           plugin::byte_size_text(limit) + " a tracing session may hold (raise it with ETRT_MAX_TRACE_MEMORY)")
              .c_str());
    *out_session = new EtdumpSession(args->label ? args->label : "", args->debug_buffer_size, limit);
    return nullptr;
  });
}

void session_destroy(void*, void* session) { delete static_cast<EtdumpSession*>(session); }

void session_begin(void* session, const et_trace_event* event) {
  if (event != nullptr) recording(session, [&](EtdumpSession& s) { s.begin(*event); });
}

void session_end(void* session, const et_trace_event* event) {
  if (event != nullptr) recording(session, [&](EtdumpSession& s) { s.end(*event); });
}

void session_span(void* session, const et_trace_event* event, uint64_t start_ns) {
  if (event != nullptr) recording(session, [&](EtdumpSession& s) { s.span(*event, start_ns); });
}

void session_records(void* session, const et_trace_batch* batch) {
  if (batch == nullptr || batch->struct_size < offsetof(et_trace_batch, reserved) ||
      (batch->records == nullptr && batch->count > 0))
    return;
  recording(session, [&](EtdumpSession& s) { s.records(*batch); });
}

void session_value(void* session, const et_trace_event* event, const et_value* value, int32_t is_method_output) {
  if (event != nullptr && value != nullptr)
    recording(session, [&](EtdumpSession& s) { s.value(*event, *value, is_method_output != 0); });
}

et_error* session_result(void* session, const char* what, et_trace_sink sink, void* sink_context) {
  if (what == nullptr || sink == nullptr)
    return g_host->error_create(ET_ERR_INVALID_ARGUMENT, "etdump: result name or sink is null");
  return plugin::fence(g_host, "etdump: writing the result", [&]() -> et_error* {
    std::string out, error;
    int32_t code = ET_OK;
    if (!static_cast<EtdumpSession*>(session)->result(what, &out, &code, &error))
      return g_host->error_create(code, ("etdump: " + error).c_str());
    sink(sink_context, out.data(), out.size());
    return nullptr;
  });
}

et_error* init(const et_host_api* host, et_plugin_handle* self) {
  g_host = host;
  g_self = self;
  et_tracer_descriptor tracer{};
  tracer.struct_size = sizeof tracer;
  tracer.name = "etdump";
  tracer.begin = ignore_event;
  tracer.end = ignore_event;
  tracer.session_create = session_create;
  tracer.session_destroy = session_destroy;
  tracer.session_begin = session_begin;
  tracer.session_end = session_end;
  tracer.session_value = session_value;
  tracer.session_result = session_result;
  tracer.session_span = session_span;
  tracer.session_records = session_records;
  return host->register_tracer(self, &tracer);
}

}  // namespace
}  // namespace etrt::etdump

ETRT_PLUGIN("etdump", "0.1.0", "ETDump profiler: ExecuTorch's ETDump, debug buffers, Chrome traces", etrt::etdump::init)
