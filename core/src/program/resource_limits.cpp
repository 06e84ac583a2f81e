#include "resource_limits.h"

#include <cmath>
#include <cstdlib>

#include "../logging.h"

namespace etrt {
namespace {

constexpr uint64_t kDefaultPlannedMemory = uint64_t{32} << 30;
constexpr uint64_t kDefaultFileSize = uint64_t{16} << 30;

uint64_t limit_from_environment(const char* name, uint64_t fallback) {
  const char* text = secure_getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  uint64_t bytes = 0;
  if (parse_byte_size(text, &bytes)) return bytes;
  log_message(LogLevel::Warn, std::string(name) + "='" + text + "' is not a byte size (e.g. 512M, 8G); using the default");
  return fallback;
}

std::string bytes_text(uint64_t bytes) {
  static const char* const kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024 && unit < 4 && std::fmod(value, 1024) == 0) {
    value /= 1024;
    ++unit;
  }
  return std::to_string(static_cast<uint64_t>(value)) + " " + kUnits[unit];
}

}  // namespace

bool parse_byte_size(const char* text, uint64_t* bytes) {
  if (text == nullptr) return false;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || !(value >= 0) || std::isinf(value)) return false;
  double scale = 1;
  switch (*end) {
    case 'K': case 'k': scale = 1024.0; ++end; break;
    case 'M': case 'm': scale = 1024.0 * 1024; ++end; break;
    case 'G': case 'g': scale = 1024.0 * 1024 * 1024; ++end; break;
    case 'T': case 't': scale = 1024.0 * 1024 * 1024 * 1024; ++end; break;
    default: break;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0' || value * scale >= 18446744073709551615.0) return false;
  *bytes = static_cast<uint64_t>(value * scale);
  return true;
}

uint64_t planned_memory_limit() {
  static const uint64_t limit = limit_from_environment("ETRT_MAX_PLANNED_MEMORY", kDefaultPlannedMemory);
  return limit;
}

uint64_t file_size_limit() {
  static const uint64_t limit = limit_from_environment("ETRT_MAX_FILE_SIZE", kDefaultFileSize);
  return limit;
}

std::string planned_memory_limit_text() {
  return bytes_text(planned_memory_limit()) + " limit (raise it with ETRT_MAX_PLANNED_MEMORY)";
}

std::string file_size_limit_text() { return bytes_text(file_size_limit()) + " limit (raise it with ETRT_MAX_FILE_SIZE)"; }

}  // namespace etrt
