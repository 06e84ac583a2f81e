// Logging through spdlog; the level comes from ETRT_LOG_LEVEL
// (trace, debug, info, warn, error, off; default warn).
#pragma once

#include <string_view>

namespace etrt {

enum class LogLevel { Trace = 0, Debug, Info, Warn, Error };

void log_message(LogLevel level, std::string_view message);
bool log_enabled(LogLevel level);

}  // namespace etrt
