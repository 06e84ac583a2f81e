// Opening a tracer session: the one part of tracing that consults the
// registry (apart so the program layer builds without it, as in
// tests/program/method_resolver_test).
#include <cstdio>

#include "../error.h"
#include "../registry.h"
#include "tracing.h"

namespace etrt {

et_error* TraceSession::create(const std::string& tracer, const std::string& label, size_t debug_buffer_size,
                               std::shared_ptr<TraceSession>* out) {
  Provider provider;
  if (et_error* error = Registry::instance().find(ET_ENTRY_TRACER, tracer, &provider)) return error;
  const et_tracer_descriptor& d = provider.tracer;
  if (d.session_create == nullptr || d.session_destroy == nullptr || d.session_begin == nullptr ||
      d.session_end == nullptr || d.session_result == nullptr)
    return make_error(ET_ERR_NOT_SUPPORTED, "tracer '" + tracer + "' (plugin '" + provider.plugin->name +
                                                "') has no sessions (it needs ABI 1.3 session functions)");
  std::shared_ptr<TraceSession> session(new TraceSession());
  session->tracer_ = d;
  session->debug_buffer_size_ = debug_buffer_size;
  // Raw records are tick-counter readings: without a usable counter (no invariant
  // TSC) a session sends spans in ns, one call each, as to a 1.5 tracer.
  session->batches_ = d.session_records != nullptr && !session->records_values() && tick_counter_usable();
  if (session->batches_) {
    et_trace_record blank{};
    blank.struct_size = sizeof blank;  // written once: the spans leave it as it is
    session->records_.assign(kTraceRecordBatch, blank);
    session->next_ = session->records_.data();
    session->limit_ = session->records_.data() + session->records_.size();
  }
  session->plugin_ = provider.plugin->name;
  et_trace_session_args args{sizeof(et_trace_session_args), label.c_str(), debug_buffer_size};
  et_error* error = nullptr;
  try {
    error = d.session_create(d.user_data, &args, &session->session_);
  } catch (...) {
    session->session_ = nullptr;  // nothing to destroy: the tracer did not say it made one
    char where[256];
    std::snprintf(where, sizeof where, "tracer '%s' session_create", d.name);
    return plugin_exception_error(provider.plugin->name, where);
  }
  if (error != nullptr) {
    if (error->plugin.empty()) error->plugin = provider.plugin->name;
    return error;
  }
  if (session->session_ == nullptr)
    return make_error(ET_ERR_INTERNAL, "tracer '" + tracer + "' created no session", provider.plugin->name);
  trace_clock_calibrate();  // once per process: the runs' tick counter needs a rate (trace_clock.h)
  *out = std::move(session);
  return nullptr;
}

}  // namespace etrt
