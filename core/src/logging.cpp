#include "logging.h"

#include <cstdlib>
#include <memory>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "etrt/base/printable_text.h"

namespace etrt {
namespace {

// The level ETRT_LOG_LEVEL names. An unknown name goes to *rejected and the default is used, as for every
// ETRT_* setting: it must not silence errors, and the typo is reported, naming the variable.
spdlog::level::level_enum level_from_env(std::string* rejected) {
  // secure_getenv: in a setuid or setgid process the caller does not choose what etrt logs (the rule every
  // ETRT_* setting follows).
  const char* text = secure_getenv("ETRT_LOG_LEVEL");
  if (text == nullptr || *text == '\0') return spdlog::level::warn;
  auto level = spdlog::level::from_str(text);
  // from_str maps unknown names to "off".
  if (level == spdlog::level::off && std::string(text) != "off") {
    *rejected = text;
    return spdlog::level::warn;
  }
  return level;
}

spdlog::logger& logger() {
  // Built on first use (no static initialiser) and kept for the process' life;
  // not registered in spdlog's global registry so it cannot clash with a host's.
  static spdlog::logger* instance = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto* created = new spdlog::logger("etrt", std::move(sink));
    created->set_pattern("[etrt %l] %v");
    std::string rejected;
    created->set_level(level_from_env(&rejected));
    if (!rejected.empty())
      created->warn("ignoring ETRT_LOG_LEVEL='{}': expected trace, debug, info, warn, error, critical or off; "
                    "using the default (warn)", rejected);
    return created;
  }();
  return *instance;
}

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::Trace: return spdlog::level::trace;
    case LogLevel::Debug: return spdlog::level::debug;
    case LogLevel::Info: return spdlog::level::info;
    case LogLevel::Warn: return spdlog::level::warn;
    case LogLevel::Error: return spdlog::level::err;
  }
  return spdlog::level::err;
}

}  // namespace

bool log_enabled(LogLevel level) { return logger().should_log(to_spdlog(level)); }

// A message quotes names from programs, manifests and plugins: each is one line of printable text
// (a newline or an escape sequence in a name must not forge a log line or drive the terminal).
void log_message(LogLevel level, std::string_view message) {
  const spdlog::level::level_enum spdlog_level = to_spdlog(level);
  if (!logger().should_log(spdlog_level)) return;
  logger().log(spdlog_level, "{}", base::printable_text(message));
}

}  // namespace etrt
