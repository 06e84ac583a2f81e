// Writes an EventLog as Chrome trace-event JSON (the format Perfetto's UI and
// chrome://tracing open): one complete ("X") event per profile record, one
// track per thread that recorded events, one process per log.
#pragma once

#include <string>

#include "event_log.h"

namespace etrt::etdump {

// `process_name` labels the process row (e.g. "etrt: model.pte").
std::string write_chrome_trace(const EventLog& log, const std::string& process_name);

}  // namespace etrt::etdump
