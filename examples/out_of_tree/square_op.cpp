// my_ops::square.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!): out = self * self, float32.
// A typed kernel (etrt/kernel.hpp): the SDK checks the argument count (a
// program passes [self, out, out]: the schema's arguments, then the returned
// out) and the kinds, and turns exceptions into errors.
#include "etrt/kernel.hpp"

namespace {

using etrt::plugin::Call;
using etrt::plugin::Tensor;

etrt::plugin::Host host;

et_error* square_out(Call call, const Tensor& self, Tensor& out) {
  if (self.dtype != ET_DTYPE_FLOAT32 || out.dtype != ET_DTYPE_FLOAT32)
    return host.error(ET_ERR_NOT_SUPPORTED, std::string(call.op) + ": float32 only");
  size_t n = etrt::plugin::numel(self);
  if (etrt::plugin::numel(out) != n)
    return host.error(ET_ERR_INVALID_ARGUMENT, std::string(call.op) + ": out has " +
                                                   etrt::plugin::shape_string(out) + ", self has " +
                                                   etrt::plugin::shape_string(self));
  const float* x = static_cast<const float*>(self.data);
  float* y = static_cast<float*>(out.data);
  host.parallel_for(n, 4096, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) y[i] = x[i] * x[i];
  });
  return nullptr;
}

constexpr etrt::plugin::KernelDef kKernels[] = {
#define ETRT_KERNEL(name, fn, signature) etrt::plugin::kernel<fn>(name, signature),
#include "square_op.def"
#undef ETRT_KERNEL
};

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  return etrt::plugin::register_kernels(host, kKernels);
}

}  // namespace

ETRT_PLUGIN("square_op", "1.0.0", "example custom operator built out of tree", init)
