// Kernel table of the linear algebra family (matmul, convolution, pooling, normalisation).
#include "kernels.h"

namespace etrt::kernels {

std::span<const KernelEntry> linalg_kernels() { return {}; }

}  // namespace etrt::kernels
