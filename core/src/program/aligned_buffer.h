// An owned, 64-byte aligned byte buffer (program bytes, planned memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <sys/mman.h>

namespace etrt {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  AlignedBuffer() = default;
  // Zero-filled; data() is nullptr when allocation fails (check ok()).
  // Large buffers are anonymous mappings: zero pages arrive on first touch, so
  // memory a program declares but never uses costs address space, not RAM.
  static constexpr size_t kMapThreshold = size_t{1} << 20;

  explicit AlignedBuffer(size_t size) : size_(size) {
    if (size == 0) return;
    if (size >= kMapThreshold) {
      void* mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      data_ = mapped == MAP_FAILED ? nullptr : static_cast<uint8_t*>(mapped);
      mapped_ = data_ != nullptr;
    } else {
      size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
      data_ = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, rounded));
      if (data_ != nullptr) std::memset(data_, 0, rounded);
    }
    if (data_ == nullptr) size_ = 0;
  }
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
        mapped_(std::exchange(other.mapped_, false)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(mapped_, other.mapped_);
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() {
    if (mapped_) munmap(data_, size_);
    else std::free(data_);
  }

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
};

}  // namespace etrt
