// A plugin written against SDK 1.3 (the typed kernel layer as it first stood:
// kernel.hpp and kernel_types.hpp at ABI 1.3, private_library.hpp), unchanged:
// it must compile against today's headers and load (tests/sdk/sdk_compat_test.cpp).
//
//   sdk_1_3::weighted_sum.out(Tensor[] xs, float[] weights, Scalar bias, int? limit, *, Tensor(a!) out)
//   out = bias + sum_i weights[i] * xs[i] over the first `limit` inputs (all when None), float32,
//   shaped as xs[0]
#include <optional>
#include <string>

#include "etrt/kernel.hpp"
#include "etrt/private_library.hpp"

namespace {

using etrt::plugin::Call;
using etrt::plugin::DoubleArrayRef;
using etrt::plugin::IntArrayRef;
using etrt::plugin::Scalar;
using etrt::plugin::Tensor;
using etrt::plugin::TensorList;

etrt::plugin::Host host;

et_error* weighted_sum_out(Call call, TensorList xs, DoubleArrayRef weights, Scalar bias,
                           std::optional<int64_t> limit, Tensor& out) {
  size_t count = limit ? static_cast<size_t>(*limit) : xs.size();
  if (xs.empty() || count > xs.size() || weights.size() != xs.size())
    return host.error(ET_ERR_INVALID_ARGUMENT, std::string(call.op) + ": " + std::to_string(xs.size()) +
                                                   " inputs, " + std::to_string(weights.size()) + " weights, limit " +
                                                   std::to_string(count));
  // out takes the first input's shape.
  IntArrayRef shape{xs[0].sizes, static_cast<size_t>(xs[0].rank)};
  for (const Tensor* x : xs) {
    if (x->dtype != ET_DTYPE_FLOAT32 || !etrt::plugin::is_dense_in_dim_order(*x) ||
        etrt::plugin::numel(*x) != etrt::plugin::numel(xs[0]))
      return host.error(ET_ERR_INVALID_ARGUMENT, std::string(call.op) + ": input " +
                                                     etrt::plugin::shape_string(x->sizes, x->rank) + " " +
                                                     etrt::plugin::dim_order_string(*x) + " does not match " +
                                                     etrt::plugin::shape_string(shape.data(), shape.size()));
  }
  ETRT_TRY(host.api()->tensor_resize(&out, shape.data(), shape.size()));
  float* result = static_cast<float*>(out.data);
  const size_t n = etrt::plugin::numel(out);
  for (size_t i = 0; i < n; ++i) result[i] = static_cast<float>(bias.to_double());
  for (size_t k = 0; k < count; ++k) {
    const float* x = static_cast<const float*>(xs[k].data);
    for (size_t i = 0; i < n; ++i) result[i] += static_cast<float>(weights[k]) * x[i];
  }
  return nullptr;
}

constexpr etrt::plugin::KernelDef kKernels[] = {
    etrt::plugin::kernel<weighted_sum_out>(SDK_PLUGIN_NAME "::weighted_sum.out", "xs, weights, bias, limit, out"),
};

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  std::string where = etrt::plugin::own_library_path(reinterpret_cast<const void*>(&init));
  host.log(ET_LOG_DEBUG, "sdk_1_3 plugin loaded from " + where);
  return etrt::plugin::register_kernels(host, kKernels);
}

constexpr et_plugin_info kInfo = {sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_TARGET_MINOR, SDK_PLUGIN_NAME,
                                  "1.3.0", "a plugin written against SDK 1.3", init};

}  // namespace

extern "C" ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
