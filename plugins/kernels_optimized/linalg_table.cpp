// Kernel table of the linear algebra family (matmul, convolution, pooling, normalisation).
// Keep in step with operators/linalg.txt (a test checks that both list the same operators).
#include "kernels.h"
#include "linalg_common.h"

namespace etrt::kernels {
namespace {

constexpr KernelEntry kKernels[] = {
    {"aten::mm.out", linalg::mm_out},
    {"aten::addmm.out", linalg::addmm_out},
    {"aten::bmm.out", linalg::bmm_out},
    {"aten::linear.out", linalg::linear_out},
    {"aten::convolution.out", linalg::convolution_out},
    {"aten::_native_batch_norm_legit_no_training.out", linalg::batch_norm_no_training_out},
    {"aten::native_layer_norm.out", linalg::layer_norm_out},
    {"aten::max_pool2d_with_indices.out", linalg::max_pool2d_with_indices_out},
    {"aten::avg_pool2d.out", linalg::avg_pool2d_out},
    {"aten::_adaptive_avg_pool2d.out", linalg::adaptive_avg_pool2d_out},
};

}  // namespace

std::span<const KernelEntry> linalg_kernels() { return kKernels; }

}  // namespace etrt::kernels
