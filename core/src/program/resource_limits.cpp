#include "resource_limits.h"

#include <cstdlib>

#include "../logging.h"
#include "etrt/plugin.hpp"

namespace etrt {
namespace {

constexpr uint64_t kDefaultPlannedMemory = uint64_t{32} << 30;
constexpr uint64_t kDefaultFileSize = uint64_t{16} << 30;

uint64_t limit_from_environment(const char* name, uint64_t fallback) {
  const char* text = secure_getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  uint64_t bytes = 0;
  if (plugin::parse_byte_size(text, &bytes)) return bytes;
  log_message(LogLevel::Warn, std::string(name) + "='" + text + "' is not a byte size (e.g. 512M, 8G); using the default");
  return fallback;
}

}  // namespace

uint64_t planned_memory_limit() {
  static const uint64_t limit = limit_from_environment("ETRT_MAX_PLANNED_MEMORY", kDefaultPlannedMemory);
  return limit;
}

uint64_t file_size_limit() {
  static const uint64_t limit = limit_from_environment("ETRT_MAX_FILE_SIZE", kDefaultFileSize);
  return limit;
}

std::string planned_memory_limit_text() {
  return plugin::byte_size_text(planned_memory_limit()) + " limit (raise it with ETRT_MAX_PLANNED_MEMORY)";
}

std::string file_size_limit_text() { return plugin::byte_size_text(file_size_limit()) + " limit (raise it with ETRT_MAX_FILE_SIZE)"; }

}  // namespace etrt
