// The kernel of my_ops::scaled_swish.out (my_ops.py):
//
//   scaled_swish.out(Tensor x, float beta, *, Tensor(a!) out) -> Tensor(a!)
//   out = x * sigmoid(beta * x)
//
// An exported program calls it with 4 values: the schema's arguments (x, beta,
// out), then the returned value, which for an out variant is `out` again. The
// typed kernel layer (etrt/kernel.hpp) checks that count and each kind, and
// hands the function its arguments unboxed: `float beta` arrives as a double.
#include <cmath>
#include <string>

#include "etrt/kernel.hpp"

namespace {

using etrt::plugin::Call;
using etrt::plugin::Tensor;

etrt::plugin::Host host;

template <typename T>
void scaled_swish(const T* x, T* y, size_t n, double beta) {
  const T b = static_cast<T>(beta);
  // ~20 ns per element: a few thousand elements are worth a task of the pool.
  host.parallel_for(n, 4096, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) y[i] = x[i] / (T(1) + std::exp(-b * x[i]));
  });
}

et_error* scaled_swish_out(Call call, const Tensor& x, double beta, Tensor& out) {
  if (x.dtype != out.dtype || (x.dtype != ET_DTYPE_FLOAT32 && x.dtype != ET_DTYPE_FLOAT64))
    return host.error(ET_ERR_NOT_SUPPORTED, std::string(call.op) + ": float32 or float64 only, got x " +
                                                etrt::plugin::dtype_name(x.dtype) + " and out " +
                                                etrt::plugin::dtype_name(out.dtype));
  if (!etrt::plugin::is_contiguous(x))
    return host.error(ET_ERR_NOT_SUPPORTED, std::string(call.op) + ": x must be contiguous");
  // The output takes the input's shape (a dynamic-shape program may change it
  // between runs); the host checks the output's capacity.
  ETRT_TRY(host.api()->tensor_resize(&out, x.sizes, static_cast<size_t>(x.rank)));
  size_t n = etrt::plugin::numel(x);
  if (x.dtype == ET_DTYPE_FLOAT32)
    scaled_swish(static_cast<const float*>(x.data), static_cast<float*>(out.data), n, beta);
  else
    scaled_swish(static_cast<const double*>(x.data), static_cast<double*>(out.data), n, beta);
  return nullptr;
}

constexpr etrt::plugin::KernelDef kKernels[] = {
#define ETRT_KERNEL(name, fn, signature) etrt::plugin::kernel<fn>(name, signature),
#include "scaled_swish.def"
#undef ETRT_KERNEL
};

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  return etrt::plugin::register_kernels(host, kKernels);
}

}  // namespace

// The entry point: the plugin's name, version and description, and init. It speaks
// ET_ABI_TARGET_MINOR (default: the header's minor); built with an older one, the
// plugin runs on older and newer hosts.
ETRT_PLUGIN("scaled_swish", SCALED_SWISH_VERSION, "my_ops::scaled_swish.out (examples/custom_op)", init)
