// One tracing session of the etdump tracer: turns the host's span and value
// callbacks (plugin_api.h, ABI 1.3) into an EventLog and a DebugBuffer, and
// writes them as ETDump, the debug buffer, a Chrome trace or an operator
// summary. The host calls a session from one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "debug_buffer.h"
#include "etrt/plugin_api.h"
#include "event_log.h"

namespace etrt::etdump {

class EtdumpSession {
 public:
  // `memory_limit`: what the session may hold, its debug buffer and its records
  // together (ETRT_MAX_TRACE_MEMORY); past it, it stops recording and every
  // result fails saying so. The caller refuses a debug buffer larger than the limit.
  EtdumpSession(std::string label, size_t debug_buffer_size, uint64_t memory_limit);

  void begin(const et_trace_event& event);
  void end(const et_trace_event& event);
  // ABI 1.5: an instruction's whole span; its name and plugin are kept by the host.
  void span(const et_trace_event& event, uint64_t start_ns);
  // ABI 1.6: a batch of raw records of one or more runs (each run its own "Execute" block).
  void records(const et_trace_batch& batch) {
    if (stopped_) return;
    log_.add_raw(batch, execute_block_);
    check_memory();
  }
  void value(const et_trace_event& event, const et_value& value, bool is_method_output);
  // Recording stops for good (memory ran out while recording: the entry points catch bad_alloc).
  void stop_out_of_memory() { stopped_ = out_of_memory_ = true; }

  // "etdump", "debug_buffer", "chrome_trace", "operator_summary"; false with
  // *error set when `what` is unknown or the debug buffer overflowed.
  // Reads the kept names of the spans recorded so far (while the session lives).
  bool result(const std::string& what, std::string* out, int32_t* error_code, std::string* error);

  const EventLog& log() const { return log_; }

 private:
  bool buffer_overflow(int32_t* error_code, std::string* error) const;
  bool stopped(int32_t* error_code, std::string* error) const;
  // Compares what the session holds with its limit: after each batch, debug value and run, and
  // every kCheckEvery spans (an estimate of a few loads, not per span).
  void check_memory() {
    since_check_ = 0;
    if (log_.memory_bytes() + buffer_.bytes().capacity() > memory_limit_) [[unlikely]]
      stopped_ = true;
  }
  void counted_check() {
    if (++since_check_ == kCheckEvery) [[unlikely]]
      check_memory();
  }
  static constexpr uint32_t kCheckEvery = 1024;
  std::string operator_summary() const;

  std::string label_;
  EventLog log_;
  DebugBuffer buffer_;
  uint64_t memory_limit_;
  bool stopped_ = false, out_of_memory_ = false;
  uint32_t since_check_ = 0;
  std::vector<uint64_t> open_spans_;  // start times of spans begun and not yet ended
  // Names every run uses, interned once.
  NameId execute_block_ = kNoName, method_execute_ = kNoName, delegate_call_ = kNoName;
};

}  // namespace etrt::etdump
