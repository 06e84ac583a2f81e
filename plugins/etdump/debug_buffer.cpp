#include "debug_buffer.h"

#include <cstring>

namespace etrt::etdump {

std::optional<int64_t> DebugBuffer::append(const void* data, size_t bytes) {
  size_t offset = (needed_ + kAlignment - 1) / kAlignment * kAlignment;
  if (bytes > SIZE_MAX - offset) {
    needed_ = SIZE_MAX;
    return std::nullopt;
  }
  needed_ = offset + bytes;
  if (needed_ > capacity_) return std::nullopt;
  bytes_.resize(offset + bytes, 0);
  if (bytes > 0) std::memcpy(bytes_.data() + offset, data, bytes);
  return static_cast<int64_t>(offset);
}

void DebugBuffer::clear() {
  needed_ = 0;
  bytes_.clear();
}

}  // namespace etrt::etdump
