// Tracing on the host side: a session of a tracer plugin that one or more
// methods report to while they run, and the per-call state that lets a
// delegate (trace_span) and the pool's workers (parallel_for) add their own
// spans to the instruction that is running.
//
// Cost when no method is traced: Method::execute tests one pointer per run and
// runs the untraced instantiation of its loop; parallel_for reads one
// process-wide count (g_traced_runs). No tracer plugin is loaded until a session is created.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "../../../threadpool/threadpool.h"
#include "etrt/plugin_api.h"
#include "trace_clock.h"

namespace etrt {

uint64_t trace_clock_ns();  // host table entry: trace_now_ns()

// Records a session holds before handing them to a 1.6 tracer: the records of
// successive runs accumulate (a run with more instructions delivers a batch
// each time the buffer fills).
constexpr size_t kTraceRecordBatch = 256;

// One method run at a time per session: a flag, not a mutex (a run takes and
// releases it with one atomic each; ~40 instructions fewer than a mutex). A
// caller that finds it taken waits on a condition variable.
class RunGate {
 public:
  void lock() {
    if (busy_.exchange(true)) [[unlikely]]
      wait();
  }
  void unlock() {
    busy_.store(false);
    if (waiters_.load() > 0) [[unlikely]]
      wake();
  }

 private:
  void wait();
  void wake();
  std::atomic<bool> busy_{false};
  std::atomic<int> waiters_{0};
  std::mutex mutex_;
  std::condition_variable released_;
};

class TraceSession {
 public:
  // Finds tracer `name` (loading its plugin on first need) and opens a session.
  static et_error* create(const std::string& tracer, const std::string& label, size_t debug_buffer_size,
                          std::shared_ptr<TraceSession>* out);
  ~TraceSession();
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  // Held for a whole method run: one run at a time per session keeps run blocks whole.
  RunGate& run_gate() { return run_gate_; }
  // ABI 1.6: instruction and run spans go to the tracer as raw records, in batches
  // (not in sessions that record values: their debug events interleave with the spans).
  bool batches() const { return batches_; }
  // A run starts / records spans / ends (batches() only; under run_gate()). A
  // span is written in place into slot() and kept by commit(); slot() is always
  // free (the buffer is delivered as soon as it fills). The records of
  // successive runs wait in the buffer: it goes to the tracer when it fills,
  // before any other call to the tracer, and before a result or the session's end.
  void open_run() { run_told_ = false; }
  et_trace_record& slot() { return *next_; }
  void commit() {
    if (++next_ == limit_) [[unlikely]]
      deliver_full();
  }
  // Before any other call to the tracer during a run: the records so far go
  // first, and the tracer learns that a run is open (a span being written stays in slot()).
  void before_event() {
    if (batches_ && (next_ != records_.data() || !run_told_)) deliver_records(true, true);
  }
  void close_run() { commit(); }
  // Every call into the tracer is fenced: an exception it throws stops the
  // session's recording (tracer_threw), never the run.
  void begin(const et_trace_event& event) {
    try {
      tracer_.session_begin(session_, &event);
    } catch (...) {
      tracer_threw("session_begin");
    }
  }
  void end(const et_trace_event& event) {
    try {
      tracer_.session_end(session_, &event);
    } catch (...) {
      tracer_threw("session_end");
    }
  }
  // An instruction's whole span: one call to a 1.5 tracer, a begin/end pair to an older one.
  // Its name and plugin must come from keep_name() (1.5: they outlive the session's tracer state).
  void span(et_trace_event& event, uint64_t start_ns, uint64_t end_ns) {
    if (tracer_.session_span != nullptr) {
      event.timestamp_ns = end_ns;
      try {
        tracer_.session_span(session_, &event, start_ns);
      } catch (...) {
        tracer_threw("session_span");
      }
      return;
    }
    event.timestamp_ns = start_ns;
    begin(event);
    event.timestamp_ns = end_ns;
    end(event);
  }
  // A copy of `name` that lives as long as this session (freed after session_destroy).
  const char* keep_name(const std::string& name);
  // The runs' clock: used under run_gate().
  TraceClock& clock() { return clock_; }
  bool records_values() const { return tracer_.session_value != nullptr && debug_buffer_size_ > 0; }
  void value(const et_trace_event& event, const et_value& value, bool is_method_output) {
    try {
      tracer_.session_value(session_, &event, &value, is_method_output ? 1 : 0);
    } catch (...) {
      tracer_threw("session_value");
    }
  }
  // The result named `what` ("etdump", "debug_buffer", "chrome_trace", "operator_summary").
  et_error* result(const char* what, std::string* out);

 private:
  TraceSession() = default;
  // Hands [data(), next_) to the tracer; `in_run`: a run is open after them;
  // `keep_slot`: the span being written in slot() moves to the buffer's front.
  void deliver_records(bool in_run, bool keep_slot);
  [[gnu::noinline, gnu::cold]] void deliver_full();
  void deliver_pending();  // before a result or the session's end: no run is open
  // Called in a catch block: keeps the error (the session's results give it),
  // notes the fault on the plugin and replaces the tracer's recording calls with
  // ones that do nothing, so a run goes on untraced.
  [[gnu::cold, gnu::noinline]] void tracer_threw(const char* call) noexcept;

  et_tracer_descriptor tracer_{};
  std::string plugin_;  // the tracer's plugin, for errors
  std::string fault_;   // why the session stopped recording (tracer_threw); "" while it records
  void* session_ = nullptr;
  size_t debug_buffer_size_ = 0;
  bool batches_ = false;
  bool run_told_ = false;  // a batch told the tracer that the running run is open (ET_TRACE_BATCH_IN_RUN)
  std::vector<et_trace_record> records_;  // allocated once per session; [data(), next_) not yet delivered
  et_trace_record* next_ = nullptr;
  et_trace_record* limit_ = nullptr;
  RunGate run_gate_;
  TraceClock clock_;
  std::mutex names_mutex_;
  std::unordered_set<std::string> names_;  // keep_name(); node-based, so the texts never move
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
  TraceClock* clock = nullptr;           // the session's (trace_clock.h)
  bool batches = false;                  // session->batches(): session->slot() describes the instruction, not `event`
  et_trace_event event{};  // the instruction's event (kind, name, ids, plugin)
  // batches: the record of the delegate call running (Method::record_delegate),
  // kept off the buffer so the events it reports are records before it.
  const et_trace_record* delegate_call = nullptr;

  // What the instruction's delegate events and worker chunks copy (kind, name, ids, plugin).
  et_trace_event instruction_event() const {
    if (!batches) return event;
    // The running instruction's: a delegate call's, or a kernel's being written in slot() (record_call).
    const et_trace_record& record = delegate_call != nullptr ? *delegate_call : session->slot();
    et_trace_event e{};
    e.struct_size = sizeof e;
    e.kind = record.kind;
    e.name = record.name;
    e.id = record.id;
    e.chain_id = record.chain_id;
    e.debug_handle = -1;
    e.plugin = record.plugin;
    return e;
  }
  std::mutex worker_mutex;
  std::vector<WorkerSpan> worker_spans;

  // Delivers the worker spans recorded so far as ET_TRACE_WORKER events.
  void flush_worker_spans() {
    if (!worker_spans.empty()) deliver_worker_spans();
  }
  void deliver_worker_spans();

  // A copy of a delegate's event name that the session keeps, found again by
  // the address the delegate passes (and checked by content: an address may be
  // reused for another text) without the session's lock and hashing.
  const char* kept_event_name(const char* name) {
    NameSlot& slot = event_names_[(reinterpret_cast<uintptr_t>(name) * 0x9E3779B97F4A7C15ull) >> 58];
    if (slot.given != name || std::strcmp(name, slot.kept) != 0) [[unlikely]]
      slot = {name, session->keep_name(name)};
    return slot.kept;
  }

 private:
  struct NameSlot {
    const char* given = nullptr;
    const char* kept = nullptr;
  };
  std::array<NameSlot, 64> event_names_{};
};

// The traced run on this thread (set by TracedRunScope for the whole run).
TracedCall*& current_traced_call();

// Traced runs in progress in the process: parallel_for looks the thread's
// traced call up only while there are any (in a shared library a thread-local
// costs a __tls_get_addr call, on every parallel_for of every untraced run).
inline std::atomic<int> g_traced_runs{0};

// A traced run on this thread, for as long as it lives; an outer run's (a run
// inside a kernel) is restored after it. Not when the pool is known to have one
// thread: parallel_for then runs work inline and looks nothing up, so the run
// skips the thread-local (a __tls_get_addr call in a shared library) and leaves
// g_traced_runs alone. (A pool not created yet counts as splitting.)
class TracedRunScope {
 public:
  explicit TracedRunScope(TracedCall& call) {
    if (ThreadPool::published_size() == 1) return;
    slot_ = &current_traced_call();
    outer_ = *slot_;
    g_traced_runs.fetch_add(1, std::memory_order_relaxed);  // only this thread reads its own slot
    *slot_ = &call;
  }
  ~TracedRunScope() {
    if (slot_ == nullptr) return;
    *slot_ = outer_;
    g_traced_runs.fetch_sub(1, std::memory_order_relaxed);
  }
  TracedRunScope(const TracedRunScope&) = delete;
  TracedRunScope& operator=(const TracedRunScope&) = delete;

 private:
  TracedCall** slot_ = nullptr;
  TracedCall* outer_ = nullptr;
};

// parallel_for's hook when the calling thread runs a traced call and the work
// splits over more than one thread: runs `body` over chunks through `run`,
// recording one span per chunk and thread.
using ParallelFn = void (*)(size_t range, size_t grain, et_parallel_body body, void* context);
void traced_parallel_for(TracedCall& call, ParallelFn run, size_t range, size_t grain, et_parallel_body body,
                         void* context);

// Host table entry (ABI 1.3).
int32_t host_trace_span(et_exec_context* ctx, const char* name, int64_t delegate_debug_id, uint64_t start_ns,
                        uint64_t end_ns);

}  // namespace etrt
