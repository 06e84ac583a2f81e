// The kernels_training plugin: its kernel table (from operators.def), init and ABI entry.
#include "training_kernels.h"

namespace etrt_training_kernels {

etrt::plugin::Host host;

namespace {

constexpr etrt::plugin::KernelDef kKernels[] = {
#define ETRT_KERNEL(name, fn, signature) etrt::plugin::kernel<fn>(name, signature),
#include "operators.def"
#undef ETRT_KERNEL
};

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  return etrt::plugin::register_kernels(host, kKernels);
}

}  // namespace
}  // namespace etrt_training_kernels

ETRT_PLUGIN("kernels_training", "0.1.0",
            "Backward operators of joint forward-backward training programs "
            "(convolution_backward, max_pool2d_with_indices_backward)",
            etrt_training_kernels::init)
