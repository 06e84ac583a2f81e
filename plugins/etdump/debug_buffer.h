// The debug buffer: raw bytes of the tensors a run captured, each blob at a
// 64-byte aligned offset (the offset ETDump's Tensor.offset points at). It has
// a fixed capacity chosen by the user; when a run needs more, the blob is not
// stored and the buffer remembers how much would have been needed, so the
// error can say so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace etrt::etdump {

class DebugBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  explicit DebugBuffer(size_t capacity) : capacity_(capacity) {}

  // Offset of the stored copy, or nothing when it does not fit.
  std::optional<int64_t> append(const void* data, size_t bytes);

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  size_t capacity() const { return capacity_; }
  // What every append so far would have needed; > capacity() means some were dropped.
  size_t needed() const { return needed_; }
  bool overflowed() const { return needed_ > capacity_; }
  void clear();

 private:
  size_t capacity_;
  size_t needed_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace etrt::etdump
