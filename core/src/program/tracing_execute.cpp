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
  std::shared_ptr<TraceSession> session = trace_;  // kept alive for the run
  std::lock_guard<std::mutex> lock(session->run_mutex());
  TracedCall traced;
  traced.session = session.get();
  traced.thread_slot = &current_traced_call();
  traced.clock = &session->clock();
  et_exec_context context{name_.c_str(), 0, &scratch_, &traced};
  et_trace_event event = method_event(trace_method_name_);
  event.timestamp_ns = traced.clock->start();
  session->begin(event);
  traced.event = method_event(trace_method_name_);  // call_traced sets kind, name, ids, plugin per instruction
  et_error* error = run_chains<true>(&context);
  if (error == nullptr && session->records_values()) {
    traced.event = method_event(trace_method_name_);
    for (int32_t output : outputs_) session->value(traced.event, values_[output].value, true);
  }
  event.timestamp_ns = traced.clock->now();
  session->end(event);
  return error;
}

et_error* Method::call_traced(size_t chain, size_t pc, Instruction& instr, et_exec_context* context) {
  TracedCall& traced = *context->traced;
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
    *traced.thread_slot = &traced;
    error = call(instr, context);
    *traced.thread_slot = nullptr;
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
