#include "tracing.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <thread>

#include "../error.h"
#include "exec_context.h"

namespace etrt {
namespace {

void append_to_string(void* sink_context, const void* data, size_t size) {
  static_cast<std::string*>(sink_context)->append(static_cast<const char*>(data), size);
}

// A small, stable index per pool thread for trace tracks (0 is the method's thread).
uint32_t worker_track() {
  static std::atomic<uint32_t> next{1};
  thread_local uint32_t track = next.fetch_add(1, std::memory_order_relaxed);
  return track;
}

struct ChunkContext {
  TracedCall* call;
  std::thread::id caller;
  et_parallel_body body;
  void* context;
};

void traced_chunk(void* context, size_t begin, size_t end) {
  auto* chunk = static_cast<ChunkContext*>(context);
  const TraceClock& clock = *chunk->call->clock;
  uint64_t start = clock.worker_now();
  chunk->body(chunk->context, begin, end);
  WorkerSpan span{start, clock.worker_now(), std::this_thread::get_id() == chunk->caller ? 0u : worker_track()};
  std::lock_guard<std::mutex> lock(chunk->call->worker_mutex);
  chunk->call->worker_spans.push_back(span);
}

// What a tracer's recording calls become once one of them threw.
void ignore_event(void*, const et_trace_event*) {}
void ignore_span(void*, const et_trace_event*, uint64_t) {}
void ignore_value(void*, const et_trace_event*, const et_value*, int32_t) {}
void ignore_records(void*, const et_trace_batch*) {}

}  // namespace

uint64_t trace_clock_ns() { return trace_now_ns(); }

TraceSession::~TraceSession() {
  if (session_ == nullptr) return;
  deliver_pending();
  try {
    tracer_.session_destroy(tracer_.user_data, session_);
  } catch (...) {
    tracer_threw("session_destroy");
  }
}

void TraceSession::tracer_threw(const char* call) noexcept {
  char where[256];
  std::snprintf(where, sizeof where, "tracer '%s' %s", tracer_.name, call);
  et_error* error = plugin_exception_error(plugin_, where);
  try {
    if (fault_.empty()) fault_ = error->message;
  } catch (...) {  // out of memory: the session still stops recording
  }
  delete error;
  tracer_.session_begin = ignore_event;
  tracer_.session_end = ignore_event;
  if (tracer_.session_span != nullptr) tracer_.session_span = ignore_span;
  if (tracer_.session_value != nullptr) tracer_.session_value = ignore_value;
  if (tracer_.session_records != nullptr) tracer_.session_records = ignore_records;
}

const char* TraceSession::keep_name(const std::string& name) {
  std::lock_guard<std::mutex> lock(names_mutex_);
  return names_.insert(name).first->c_str();
}

void RunGate::wait() {
  waiters_.fetch_add(1);
  std::unique_lock<std::mutex> lock(mutex_);
  released_.wait(lock, [this] { return !busy_.exchange(true); });
  waiters_.fetch_sub(1);
}

void RunGate::wake() {
  // Under the mutex: a waiter tests busy_ and sleeps without a release slipping in between.
  std::lock_guard<std::mutex> lock(mutex_);
  released_.notify_one();
}

void TraceSession::deliver_records(bool in_run, bool keep_slot) {
  // The latest conversion holds for the older records too (one rate; earlier ticks extrapolate back).
  const TraceClock::Conversion conversion = clock_.conversion();
  et_trace_batch batch{};
  batch.struct_size = sizeof batch;
  batch.records = records_.data();
  batch.count = static_cast<size_t>(next_ - records_.data());
  batch.anchor_ticks = conversion.anchor_ticks;
  batch.anchor_ns = conversion.anchor_ns;
  batch.ns_per_tick = conversion.ns_per_tick;
  batch.flags = in_run ? ET_TRACE_BATCH_IN_RUN : 0u;
  try {
    tracer_.session_records(session_, &batch);
  } catch (...) {
    tracer_threw("session_records");
  }
  if (keep_slot && next_ != records_.data()) records_.front() = *next_;  // the span being written
  next_ = records_.data();
  run_told_ = in_run;
}

void TraceSession::deliver_full() {
  // Full after a run's own record: no run is open (the next record begins one).
  deliver_records(limit_[-1].kind != ET_TRACE_METHOD, false);
}

void TraceSession::deliver_pending() {
  if (batches_ && next_ != records_.data()) deliver_records(false, false);
}

et_error* TraceSession::result(const char* what, std::string* out) {
  std::lock_guard<RunGate> lock(run_gate_);  // not while a run is recording
  deliver_pending();  // the runs recorded so far
  out->clear();
  if (!fault_.empty())
    return make_error(ET_ERR_INTERNAL, "the session stopped recording: " + fault_, plugin_);
  try {
    return tracer_.session_result(session_, what, append_to_string, out);
  } catch (...) {
    char where[256];
    std::snprintf(where, sizeof where, "tracer '%s' session_result", tracer_.name);
    return plugin_exception_error(plugin_, where);
  }
}

void TracedCall::deliver_worker_spans() {
  // Called after the instruction's parallel_for returned: no worker writes any more.
  session->before_event();
  et_trace_event worker = instruction_event();
  worker.kind = ET_TRACE_WORKER;
  for (const WorkerSpan& span : worker_spans) {
    worker.thread = span.thread;
    worker.timestamp_ns = span.start_ns;
    session->begin(worker);
    worker.timestamp_ns = span.end_ns;
    session->end(worker);
  }
  worker_spans.clear();  // keeps its capacity for the next instruction
}

TracedCall*& current_traced_call() {
  thread_local TracedCall* call = nullptr;
  return call;
}

void traced_parallel_for(TracedCall& call, ParallelFn run, size_t range, size_t grain, et_parallel_body body,
                         void* context) {
  ChunkContext chunk{&call, std::this_thread::get_id(), body, context};
  run(range, grain, traced_chunk, &chunk);
}

int32_t host_trace_span(et_exec_context* ctx, const char* name, int64_t delegate_debug_id, uint64_t start_ns,
                        uint64_t end_ns) {
  if (ctx == nullptr || ctx->traced == nullptr) return 0;
  if (start_ns == 0 && end_ns == 0) return 1;  // the delegate asks whether to measure
  TracedCall& call = *ctx->traced;
  if (call.delegate_call != nullptr) {  // ABI 1.6, during a delegate call: a record, before the call's own
    et_trace_record& record = call.session->slot();
    record = *call.delegate_call;  // its instruction, chain and plugin
    record.kind = ET_TRACE_DELEGATE_EVENT;
    record.name = call.kept_event_name(name != nullptr ? name : "");
    record.debug_handle = delegate_debug_id;
    record.start = start_ns;
    record.end = end_ns < start_ns ? start_ns : end_ns;
    call.session->commit();
    return 1;
  }
  call.session->before_event();
  et_trace_event event = call.instruction_event();
  event.kind = ET_TRACE_DELEGATE_EVENT;
  event.name = name != nullptr ? name : "";
  event.debug_handle = delegate_debug_id;
  event.timestamp_ns = start_ns;
  call.session->begin(event);
  event.timestamp_ns = end_ns < start_ns ? start_ns : end_ns;
  call.session->end(event);
  return 1;
}

}  // namespace etrt
