// Method runs with a tracer: the method's span, one span per instruction
// (with its output values when the session records them) and, through the
// exec context, the spans delegates and pool workers add.
#include "../error.h"
#include "method.h"
#include "tracing_record.h"

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
    // Made once per session, not per run: a run only resets what changes.
    traced_ = std::make_unique<TracedCall>();
    traced_->session = session.get();
    traced_->clock = &session->clock();
    traced_->batches = session->batches();
  }
  if (session == nullptr) traced_.reset();
  trace_ = std::move(session);
}

et_error* Method::execute_traced() {
  // trace_ is not replaced while this method runs (Method is one caller's at a
  // time), so the run borrows the session instead of copying the shared_ptr.
  TraceSession& session = *trace_;
  std::lock_guard<RunGate> lock(session.run_gate());
  TracedCall& traced = *traced_;
  // The thread's traced call is this run's for the whole run (parallel_for runs
  // only inside instructions), restored after it (a run inside a kernel).
  TracedRunScope scope(traced);
  et_exec_context context{name_.c_str(), 0, &scratch_, &traced};
  if (traced.batches) {  // ABI 1.6: the run's spans as raw records in the session's buffer
    session.open_run();
    const uint64_t start = traced.clock->start_ticks();
    et_error* error = run_chains<Tracing::kRecords>(&context);
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
  traced.event = method_event(trace_method_name_);  // call_spanned sets kind, name, ids, plugin per instruction
  et_error* error = run_chains<Tracing::kSpans>(&context);
  if (error == nullptr && session.records_values()) {
    traced.event = method_event(trace_method_name_);
    for (int32_t output : outputs_) session.value(traced.event, values_[output].value, true);
  }
  event.timestamp_ns = traced.clock->now();
  session.end(event);
  return error;
}

// ABI 1.6, a delegate call: its own events are readings of the host's clock
// (trace_clock_ns), so its bounds are too (they nest; no re-anchoring: the
// records around it convert within the clock's error, nanoseconds). Its record
// is kept aside during the call: the events the delegate reports are records
// that end first (host_trace_span), so they go into the buffer before it.
et_error* Method::record_delegate(size_t chain, size_t pc, Instruction& instr, et_exec_context* context) {
  TracedCall& traced = *context->traced;
  et_trace_record record{};
  record.struct_size = sizeof record;
  describe(record, instr, chain, pc, ET_TRACE_DELEGATE, ET_TRACE_RECORD_NS);
  record.debug_handle = -1;
  traced.delegate_call = &record;
  record.start = trace_now_ns();
  et_error* error = call(instr, context);
  record.end = trace_now_ns();
  traced.flush_worker_spans();
  traced.delegate_call = nullptr;
  traced.session->slot() = record;
  traced.session->commit();
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
  if (instr.kind != Kind::Folded) error = call(instr, context);
  uint64_t end = exact ? traced.clock->exact_now() : traced.clock->now();
  traced.flush_worker_spans();
  traced.session->span(event, start, end);
  if (error == nullptr && traced.session->records_values()) trace_outputs(instr, traced);
  return error;
}

// What ExecuTorch logs after an instruction: every argument of a delegate call;
// a kernel's out arguments, one value each, as its generated kernel wrappers do.
// A kernel's arguments end with its return value: the out tensor again for one
// output, or for several a TensorList of the out tensors just before it, which
// is not logged itself (the Inspector compares one tensor per output).
void Method::trace_outputs(const Instruction& instr, TracedCall& traced) {
  if (instr.args.empty()) return;
  if (instr.kind == Kind::Delegate) {
    for (const et_value* arg : instr.args) traced.session->value(traced.event, *arg, false);
    return;
  }
  const size_t outs = listed_outputs(instr.args);
  if (outs == 0) {
    traced.session->value(traced.event, *instr.args.back(), false);
    return;
  }
  const size_t first = instr.args.size() - 1 - outs;
  for (size_t i = first; i < first + outs; ++i) traced.session->value(traced.event, *instr.args[i], false);
}

// n when a kernel's last argument is a TensorList of the n tensor arguments just
// before it (several outputs), else 0.
size_t Method::listed_outputs(const std::vector<et_value*>& args) {
  const et_value& last = *args.back();
  if (last.tag != ET_VALUE_TENSOR_LIST || last.count < 2 || last.count >= args.size()) return 0;
  const auto* items = static_cast<et_tensor* const*>(last.items);
  const size_t first = args.size() - 1 - last.count;
  for (size_t k = 0; k < last.count; ++k) {
    const et_value& out = *args[first + k];
    if (out.tag != ET_VALUE_TENSOR || out.tensor != items[k]) return 0;
  }
  return last.count;
}

}  // namespace etrt
