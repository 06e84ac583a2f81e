// aten::relu.out for float32, the plugin of the dummy pip package of
// tests/python/test_entry_points.py: it is found through its distribution's
// `etrt.plugins` entry point and loaded only when a program needs relu.
#include <string>

#include "etrt/kernel.hpp"

namespace {

using etrt::plugin::Call;
using etrt::plugin::Tensor;

etrt::plugin::Host host;

et_error* relu_out(Call call, const Tensor& self, Tensor& out) {
  if (self.dtype != ET_DTYPE_FLOAT32 || out.dtype != ET_DTYPE_FLOAT32 || !etrt::plugin::is_contiguous(self))
    return host.error(ET_ERR_NOT_SUPPORTED, std::string(call.op) + ": contiguous float32 only");
  ETRT_TRY(host.api()->tensor_resize(&out, self.sizes, static_cast<size_t>(self.rank)));
  const float* in = static_cast<const float*>(self.data);
  float* result = static_cast<float*>(out.data);
  for (size_t i = 0, n = etrt::plugin::numel(self); i < n; ++i) result[i] = in[i] > 0 ? in[i] : 0.0f;
  return nullptr;
}

constexpr etrt::plugin::KernelDef kKernels[] = {etrt::plugin::kernel<relu_out>("aten::relu.out", "self, out")};

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  return etrt::plugin::register_kernels(host, kKernels);
}

constexpr et_plugin_info kInfo = {sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_TARGET_MINOR, "test_package_relu",
                                  "1.0.0", "aten::relu.out of a pip-installed package", init};

}  // namespace

extern "C" ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
