// The recorded step of a traced run (ABI 1.6), inline in the recorded instantiation
// of Method::run_chains: an instruction's span is written in place into the
// session's buffer as a raw record -- two counter readings and the names the
// session keeps -- and converted by the tracer only when a result is fetched.
// Included by method_execute.cpp and tracing_execute.cpp.
#pragma once

#include "method.h"

namespace etrt {

// What a record says of its instruction (all but the readings).
[[gnu::always_inline]] inline void Method::describe(et_trace_record& record, const Instruction& instr, size_t chain,
                                                    size_t pc, int32_t kind, uint32_t flags) {
  record.name = instr.trace_name;
  record.plugin = instr.trace_plugin;
  record.kind = kind;
  record.id = static_cast<int32_t>(pc);
  record.chain_id = static_cast<int32_t>(chain);
  record.flags = flags;
}

[[gnu::always_inline]] inline et_error* Method::record_call(size_t chain, size_t pc, Instruction& instr,
                                                            et_exec_context* context) {
  TracedCall& traced = *context->traced;
  TraceSession& session = *traced.session;
  et_trace_record& record = session.slot();
  describe(record, instr, chain, pc, ET_TRACE_OPERATOR, 0);
  record.start = traced.clock->ticks_now();
  et_error* error = call(instr, context);
  const uint64_t end = traced.clock->ticks_now();
  traced.flush_worker_spans();
  session.slot().end = end;  // the slot moved if a worker chunk delivered the records before it
  session.commit();
  return error;
}

// An instruction computed at load: listed with a zero-length span, so a trace
// shows every operator instruction of the method.
[[gnu::always_inline]] inline void Method::record_folded(size_t chain, size_t pc, const Instruction& instr,
                                                         TracedCall& traced) {
  TraceSession& session = *traced.session;
  et_trace_record& record = session.slot();
  describe(record, instr, chain, pc, ET_TRACE_OPERATOR, 0);
  record.start = record.end = traced.clock->ticks_now();
  session.commit();
}

}  // namespace etrt
