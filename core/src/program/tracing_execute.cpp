// Method runs with a tracer: the method's span, one span per instruction
// (with its output values when the session records them) and, through the
// exec context, the spans delegates and pool workers add.
#include "../error.h"
#include "method.h"

namespace etrt {
namespace {

et_trace_event method_event(const std::string& name) {
  et_trace_event event{};
  event.struct_size = sizeof event;
  event.kind = ET_TRACE_METHOD;
  event.name = name.c_str();
  event.id = -1;
  event.chain_id = -1;
  event.debug_handle = -1;
  event.plugin = "";
  return event;
}

}  // namespace

et_error* Method::execute_traced() {
  std::shared_ptr<TraceSession> session = trace_;  // kept alive for the run
  std::lock_guard<std::mutex> lock(session->run_mutex());
  TracedCall traced;
  traced.session = session.get();
  traced.thread_slot = &current_traced_call();
  et_exec_context context{name_.c_str(), 0, &scratch_, &traced};
  et_trace_event event = method_event(name_);
  event.timestamp_ns = trace_now_ns();
  session->begin(event);
  et_error* error = run_chains<true>(&context);
  if (error == nullptr && session->records_values()) {
    traced.event = method_event(name_);
    for (int32_t output : outputs_) session->value(traced.event, values_[output].value, true);
  }
  event.timestamp_ns = trace_now_ns();
  session->end(event);
  return error;
}

et_error* Method::call_traced(size_t chain, size_t pc, Instruction& instr, et_exec_context* context) {
  TracedCall& traced = *context->traced;
  et_trace_event& event = traced.event;
  event = et_trace_event{};
  event.struct_size = sizeof event;
  event.kind = instr.kind == Kind::Delegate ? ET_TRACE_DELEGATE : ET_TRACE_OPERATOR;
  event.name = instr.name.c_str();
  event.id = static_cast<int64_t>(pc);
  event.chain_id = static_cast<int64_t>(chain);
  event.debug_handle = -1;
  event.plugin = instr.plugin.c_str();
  TraceSession& session = *traced.session;
  event.timestamp_ns = trace_now_ns();
  session.begin(event);
  et_error* error = nullptr;
  if (instr.kind != Kind::Folded) {
    *traced.thread_slot = &traced;
    error = call(instr, context);
    *traced.thread_slot = nullptr;
  }
  et_trace_event end = event;
  end.timestamp_ns = trace_now_ns();
  traced.flush_worker_spans();
  session.end(end);
  if (error == nullptr && session.records_values()) trace_outputs(instr, traced);
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
