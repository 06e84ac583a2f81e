// Kernel table of the pointwise family (elementwise, activations, reductions, shape ops).
#include "kernels.h"

namespace etrt::kernels {

std::span<const KernelEntry> pointwise_kernels() { return {}; }

}  // namespace etrt::kernels
