// A plugin written against SDK 1.1 (plugin.hpp as it stood at ABI 1.1 and 1.2:
// boxed kernels with the argument checks expect_args / expect_tensor, Host,
// the tensor helpers), unchanged: it must compile against today's headers
// (deprecation warnings allowed) and load (tests/sdk/sdk_compat_test.cpp).
//
//   sdk_1_1::scale.out(Tensor x, float factor, *, Tensor(a!) out) -> Tensor(a!)
//   out = x * factor (float32), split across the host's pool
#include <string>

#include "etrt/plugin.hpp"

namespace {

using etrt::plugin::dtype_name;
using etrt::plugin::element_size;
using etrt::plugin::expect_args;
using etrt::plugin::expect_tensor;
using etrt::plugin::is_contiguous;
using etrt::plugin::numel;
using etrt::plugin::shape_string;

etrt::plugin::Host host;

// The operator is named after the plugin: the test loads this source built at several minors side by side.
const char* const kOp = SDK_PLUGIN_NAME "::scale.out";

et_error* scale_out(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  if (et_error* error = expect_args(host, kOp, nargs, 4)) return error;
  if (et_error* error = expect_tensor(host, kOp, args, 0)) return error;
  if (et_error* error = expect_tensor(host, kOp, args, 2)) return error;
  const et_tensor& x = *args[0]->tensor;
  et_tensor& out = *args[2]->tensor;
  double factor = args[1]->tag == ET_VALUE_DOUBLE ? args[1]->as_double : static_cast<double>(args[1]->as_int);
  if (x.dtype != ET_DTYPE_FLOAT32 || out.dtype != ET_DTYPE_FLOAT32 || element_size(x.dtype) != sizeof(float))
    return host.error(ET_ERR_NOT_SUPPORTED, std::string(kOp) + ": float32 only, got " + dtype_name(x.dtype));
  if (!is_contiguous(x) || !is_contiguous(out))
    return host.error(ET_ERR_NOT_SUPPORTED, std::string(kOp) + ": contiguous tensors only");
  if (numel(x) != numel(out))
    return host.error(ET_ERR_INVALID_ARGUMENT,
                      std::string(kOp) + ": x " + shape_string(x) + " and out " + shape_string(out) + " differ");
  const float* in = static_cast<const float*>(x.data);
  float* result = static_cast<float*>(out.data);
  const float f = static_cast<float>(factor);
  host.parallel_for(numel(x), 1024, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) result[i] = in[i] * f;
  });
  return nullptr;
}

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  host.log(ET_LOG_DEBUG, "sdk_1_1 plugin registering its kernel");
  return host.register_kernel(kOp, scale_out);
}

constexpr et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_TARGET_MINOR, SDK_PLUGIN_NAME, "1.1.0",
    "a plugin written against SDK 1.1", init,
};

}  // namespace

extern "C" ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
