// The traced loop's per-instruction step (method_execute.cpp, run_chains<true>),
// inline there so an ABI 1.6 recorded instruction costs no call of its own: two
// counter readings and a raw record written in place in the session's buffer.
// The tracer converts and names the records when a result is fetched.
#pragma once

#include "method.h"
#include "tracing.h"

namespace etrt {

inline et_error* Method::call_traced(size_t chain, size_t pc, Instruction& instr, et_exec_context* context) {
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

}  // namespace etrt
