// Method runs with a tracer: the method's span, one span per instruction
// (with its output values when the session records them) and, through the
// exec context, the spans delegates and pool workers add.
#include "../error.h"
#include "method.h"

namespace etrt {
namespace {

et_trace_event method_event(const char* name) {
  et_trace_event event{};
  event.struct_size = sizeof event;
  event.kind = ET_TRACE_METHOD;
  event.name = name;
  event.id = -1;
  event.chain_id = -1;
  event.debug_handle = -1;
  event.plugin = "";
  return event;
}

}  // namespace

void Method::set_trace_session(std::shared_ptr<TraceSession> session) {
  // The names a run reports are copies the session keeps: they outlive this
  // method if the session does (ABI 1.5 session_span lets the tracer keep them).
  if (session != nullptr && session != trace_) {
    trace_method_name_ = session->keep_name(name_);
    for (std::vector<Instruction>& chain : chains_)
      for (Instruction& instr : chain) {
        instr.trace_name = session->keep_name(instr.name);
        instr.trace_plugin = session->keep_name(instr.plugin);
      }
  }
  trace_ = std::move(session);
}

et_error* Method::execute_traced() {
  // trace_ is not replaced while this method runs (Method is one caller's at a
  // time), so the run borrows the session instead of copying the shared_ptr.
  TraceSession& session = *trace_;
  std::lock_guard<RunGate> lock(session.run_gate());
  TracedCall traced;
  traced.session = &session;
  traced.thread_slot = &current_traced_call();
  traced.clock = &session.clock();
  et_exec_context context{name_.c_str(), 0, &scratch_, &traced};
  if (session.batches()) {  // ABI 1.6: the run's spans as raw records in the session's buffer
    traced.batches = true;
    session.open_run();
    // The thread's traced call is this run's for the whole run (parallel_for
    // runs only inside instructions), restored after it (a run inside a kernel).
    TracedCall* const outer = *traced.thread_slot;
    *traced.thread_slot = &traced;
    const uint64_t start = traced.clock->start_ticks();
    et_error* error = run_chains<true>(&context);
    *traced.thread_slot = outer;
    et_trace_record& run = session.slot();
    run.start = start;
    run.end = traced.clock->ticks_now();
    run.name = trace_method_name_;
    run.plugin = "";
    run.kind = ET_TRACE_METHOD;
    run.id = -1;
    run.chain_id = -1;
    run.flags = 0;
    session.close_run();  // commits the run's own record; the records wait in the buffer (tracing.h)
    return error;
  }
  et_trace_event event = method_event(trace_method_name_);
  event.timestamp_ns = traced.clock->start();
  session.begin(event);
  traced.event = method_event(trace_method_name_);  // call_traced sets kind, name, ids, plugin per instruction
  et_error* error = run_chains<true>(&context);
  if (error == nullptr && session.records_values()) {
    traced.event = method_event(trace_method_name_);
    for (int32_t output : outputs_) session.value(traced.event, values_[output].value, true);
  }
  event.timestamp_ns = traced.clock->now();
  session.end(event);
  return error;
}

// ABI 1.6: two counter readings and a raw record written in place in the
// session's buffer (the tracer converts and names it when a result is fetched);
// older tracers and value-recording sessions go to call_spanned.
et_error* Method::call_traced(size_t chain, size_t pc, Instruction& instr, et_exec_context* context) {
  TracedCall& traced = *context->traced;
  if (!traced.batches) [[unlikely]]
    return call_spanned(chain, pc, instr, traced, context);  // 1.5 and older tracers, value-recording sessions
  TraceSession& session = *traced.session;
  et_trace_record* record = &session.slot();
  record->name = instr.trace_name;
  record->plugin = instr.trace_plugin;
  record->id = static_cast<int32_t>(pc);
  record->chain_id = static_cast<int32_t>(chain);
  et_error* error = nullptr;
  uint64_t end = 0;
  if (instr.kind == Kind::Delegate) [[unlikely]] {
    // A delegate's own events are exact clock readings: its bounds are exact too, so they nest.
    record->kind = ET_TRACE_DELEGATE;
    record->flags = ET_TRACE_RECORD_NS;
    record->start = traced.clock->exact_now();
    error = call(instr, context);
    end = traced.clock->exact_now();
  } else {
    record->kind = ET_TRACE_OPERATOR;
    record->flags = 0;
    record->start = traced.clock->ticks_now();
    if (instr.kind != Kind::Folded) error = call(instr, context);
    end = traced.clock->ticks_now();
  }
  traced.flush_worker_spans();
  session.slot().end = end;  // the slot moved if a delegate event or worker chunk delivered the records before it
  session.commit();
  return error;
}

// ABI 1.5 and older tracers, and sessions that record values: one call per span.
et_error* Method::call_spanned(size_t chain, size_t pc, Instruction& instr, TracedCall& traced,
                               et_exec_context* context) {
  et_trace_event& event = traced.event;
  event.kind = instr.kind == Kind::Delegate ? ET_TRACE_DELEGATE : ET_TRACE_OPERATOR;
  event.name = instr.trace_name;
  event.id = static_cast<int64_t>(pc);
  event.chain_id = static_cast<int64_t>(chain);
  event.plugin = instr.trace_plugin;
  // A delegate's own events are exact clock readings: its bounds are read exactly too, so they nest.
  const bool exact = instr.kind == Kind::Delegate;
  uint64_t start = exact ? traced.clock->exact_now() : traced.clock->now();
  et_error* error = nullptr;
  if (instr.kind != Kind::Folded) {
    TracedCall* const outer = *traced.thread_slot;  // a traced run this one runs inside, if any
    *traced.thread_slot = &traced;
    error = call(instr, context);
    *traced.thread_slot = outer;
  }
  uint64_t end = exact ? traced.clock->exact_now() : traced.clock->now();
  traced.flush_worker_spans();
  traced.session->span(event, start, end);
  if (error == nullptr && traced.session->records_values()) trace_outputs(instr, traced);
  return error;
}

// What ExecuTorch logs after an instruction: a kernel's return value (its last
// argument), every argument of a delegate call.
void Method::trace_outputs(const Instruction& instr, TracedCall& traced) {
  if (instr.args.empty()) return;
  if (instr.kind == Kind::Delegate) {
    for (const et_value* arg : instr.args) traced.session->value(traced.event, *arg, false);
    return;
  }
  traced.session->value(traced.event, *instr.args.back(), false);
}

}  // namespace etrt
