// Per-call scratch memory for kernels and delegates (et_host_api.scratch_alloc).
// A bump allocator: memory handed out during one instruction stays valid until
// the executor resets the arena after it. When an instruction needs more than
// the arena holds, the excess comes from extra blocks and the arena grows to
// the peak at the next reset, so a steady run allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "aligned_buffer.h"

namespace etrt {

class ScratchArena {
 public:
  // nullptr when alignment is not a power of two or memory runs out.
  void* allocate(size_t bytes, size_t alignment);
  // Called after every instruction: inline, and only a store or two when nothing overflowed.
  void reset() {
    if (!overflow_.empty()) [[unlikely]] grow_to_peak();
    used_ = 0;
    peak_ = 0;
  }
  size_t capacity() const { return block_.size(); }
  size_t overflow_blocks() const { return overflow_.size(); }

 private:
  void grow_to_peak();

  AlignedBuffer block_;
  size_t used_ = 0;
  size_t peak_ = 0;                     // bytes the current instruction asked for, padding included
  std::vector<AlignedBuffer> overflow_;  // what did not fit in block_, until the next reset
};

}  // namespace etrt
