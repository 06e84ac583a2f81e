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
  EtdumpSession(std::string label, size_t debug_buffer_size);

  void begin(const et_trace_event& event);
  void end(const et_trace_event& event);
  // ABI 1.5: an instruction's whole span; its name and plugin are kept by the host.
  void span(const et_trace_event& event, uint64_t start_ns);
  // ABI 1.6: a batch of raw records of one or more runs (each run its own "Execute" block).
  void records(const et_trace_batch& batch) { log_.add_raw(batch, execute_block_); }
  void value(const et_trace_event& event, const et_value& value, bool is_method_output);

  // "etdump", "debug_buffer", "chrome_trace", "operator_summary"; false with
  // *error set when `what` is unknown or the debug buffer overflowed.
  // Reads the kept names of the spans recorded so far (while the session lives).
  bool result(const std::string& what, std::string* out, int32_t* error_code, std::string* error);

  const EventLog& log() const { return log_; }

 private:
  bool buffer_overflow(int32_t* error_code, std::string* error) const;
  std::string operator_summary() const;

  std::string label_;
  EventLog log_;
  DebugBuffer buffer_;
  std::vector<uint64_t> open_spans_;  // start times of spans begun and not yet ended
  // Names every run uses, interned once.
  NameId execute_block_ = kNoName, method_execute_ = kNoName, delegate_call_ = kNoName;
};

}  // namespace etrt::etdump
