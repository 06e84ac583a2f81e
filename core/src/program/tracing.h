// Tracing on the host side: a session of a tracer plugin that one or more
// methods report to while they run, and the per-call state that lets a
// delegate (trace_span) and the pool's workers (parallel_for) add their own
// spans to the instruction that is running.
//
// Cost when no method is traced: Method::execute tests one pointer per run and
// runs the untraced instantiation of its loop; parallel_for reads one
// thread-local pointer. No tracer plugin is loaded until a session is created.
#pragma once

#include <time.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "etrt/plugin_api.h"

namespace etrt {

// The tracers' time base: CLOCK_MONOTONIC, read through the vDSO (about 20 ns,
// no system call), inline so a traced instruction pays no call for it. The
// same clock as std::chrono::steady_clock and as delegates' trace_clock_ns;
// the TSC would be cheaper still but needs calibration and an invariant TSC,
// which a profile that must agree with other processes' clocks cannot assume.
inline uint64_t trace_now_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}
uint64_t trace_clock_ns();  // host table entry: trace_now_ns()

class TraceSession {
 public:
  // Finds tracer `name` (loading its plugin on first need) and opens a session.
  static et_error* create(const std::string& tracer, const std::string& label, size_t debug_buffer_size,
                          std::shared_ptr<TraceSession>* out);
  ~TraceSession();
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  // Held for a whole method run: one run at a time per session keeps run blocks whole.
  std::mutex& run_mutex() { return run_mutex_; }
  void begin(const et_trace_event& event) { tracer_.session_begin(session_, &event); }
  void end(const et_trace_event& event) { tracer_.session_end(session_, &event); }
  bool records_values() const { return tracer_.session_value != nullptr && debug_buffer_size_ > 0; }
  void value(const et_trace_event& event, const et_value& value, bool is_method_output) {
    tracer_.session_value(session_, &event, &value, is_method_output ? 1 : 0);
  }
  // The result named `what` ("etdump", "debug_buffer", "chrome_trace", "operator_summary").
  et_error* result(const char* what, std::string* out);

 private:
  TraceSession() = default;
  et_tracer_descriptor tracer_{};
  void* session_ = nullptr;
  size_t debug_buffer_size_ = 0;
  std::mutex run_mutex_;
};

// A span measured off the method's thread, delivered after the instruction.
struct WorkerSpan {
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t thread = 0;
};

// The traced instruction running on this thread (reachable from exec context
// and, on the method's thread, from a thread-local while parallel_for runs).
struct TracedCall {
  TraceSession* session = nullptr;
  TracedCall** thread_slot = nullptr;  // current_traced_call() of the method's thread, looked up once per run
  size_t pool_threads = 0;              // the pool's size, asked once per run when work is split (0: not yet)
  et_trace_event event{};  // the instruction's event (kind, name, ids, plugin)
  std::mutex worker_mutex;
  std::vector<WorkerSpan> worker_spans;

  // Delivers the worker spans recorded so far as ET_TRACE_WORKER events.
  void flush_worker_spans() {
    if (!worker_spans.empty()) deliver_worker_spans();
  }
  void deliver_worker_spans();
};

// Set by the executor around a traced kernel or delegate call on its thread.
TracedCall*& current_traced_call();

// parallel_for's hook: runs `body` over chunks, recording one span per chunk
// and thread when the calling thread runs a traced call. `pool_threads` is
// asked only when the work could split (it takes the pool's lock).
using ParallelFn = void (*)(size_t range, size_t grain, et_parallel_body body, void* context);
void traced_parallel_for(TracedCall& call, ParallelFn run, size_t (*pool_threads)(), size_t range, size_t grain,
                         et_parallel_body body, void* context);

// Host table entry (ABI 1.3).
int32_t host_trace_span(et_exec_context* ctx, const char* name, int64_t delegate_debug_id, uint64_t start_ns,
                        uint64_t end_ns);

}  // namespace etrt
