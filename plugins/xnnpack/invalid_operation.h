// Watches the calling thread's floating-point "invalid operation" flag over a delegate run. Debian's 2022
// XNNPACK bounds every result with max(x, low) and min(x, high), which turn a NaN into the lower bound (-inf
// without a fused range, 0 after a ReLU) whatever the bounds are; but a NaN is only ever born from numbers by an
// invalid operation (inf - inf, 0 * inf, 0 / 0, the root of a negative), and a min/max that meets a NaN signals
// one too. The pthreadpool shim raises on the calling thread what its workers raised (pthreadpool_shim.c), so
// one look at this thread's flag after the run tells whether a NaN may have been made and clamped away.
#pragma once

#include <cfenv>

namespace etrt::xnn {

class InvalidOperationWatch {
 public:
  InvalidOperationWatch() {
    std::fegetexceptflag(&caller_, FE_INVALID);
    std::feclearexcept(FE_INVALID);
  }
  ~InvalidOperationWatch() {
    if (!raised()) std::fesetexceptflag(&caller_, FE_INVALID);  // the caller's flag as it was; a raised one stays
  }
  InvalidOperationWatch(const InvalidOperationWatch&) = delete;
  InvalidOperationWatch& operator=(const InvalidOperationWatch&) = delete;

  bool raised() const { return std::fetestexcept(FE_INVALID) != 0; }

 private:
  std::fexcept_t caller_{};
};

}  // namespace etrt::xnn
