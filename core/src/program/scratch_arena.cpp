#include "scratch_arena.h"

namespace etrt {

void* ScratchArena::allocate(size_t bytes, size_t alignment) {
  if (alignment == 0) alignment = 1;
  if ((alignment & (alignment - 1)) != 0 || alignment > AlignedBuffer::kAlignment * 64) return nullptr;
  if (bytes == 0) bytes = 1;
  size_t request = 0;  // enough for the bytes at any alignment in a fresh block
  if (__builtin_add_overflow(bytes, alignment, &request)) return nullptr;
  // In the block: bump the offset (the block's base is 64-byte aligned).
  auto base = reinterpret_cast<uintptr_t>(block_.data());
  size_t offset = base == 0 ? 0 : ((base + used_ + alignment - 1) & ~(uintptr_t{alignment} - 1)) - base;
  if (base != 0 && offset <= block_.size() && bytes <= block_.size() - offset) {
    used_ = offset + bytes;
    peak_ += request;
    return block_.data() + offset;
  }
  AlignedBuffer extra(request);
  if (extra.data() == nullptr) return nullptr;
  auto extra_base = reinterpret_cast<uintptr_t>(extra.data());
  uint8_t* aligned = extra.data() + (((extra_base + alignment - 1) & ~(uintptr_t{alignment} - 1)) - extra_base);
  overflow_.push_back(std::move(extra));
  peak_ += request;
  return aligned;
}

void ScratchArena::grow_to_peak() {
  overflow_.clear();
  size_t want = peak_ + peak_ / 4;
  AlignedBuffer grown(want);
  if (grown.data() != nullptr) block_ = std::move(grown);
}

}  // namespace etrt
