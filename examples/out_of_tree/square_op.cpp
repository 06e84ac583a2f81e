// my_ops::square.out(Tensor self, *, Tensor(a!) out): out = self * self, float32.
#include "etrt/plugin.hpp"

namespace {

etrt::plugin::Host host;

et_error* square_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "my_ops::square.out";
  if (et_error* e = etrt::plugin::expect_args(host, op, nargs, 2)) return e;
  for (size_t i : {0, 1})
    if (et_error* e = etrt::plugin::expect_tensor(host, op, args, i)) return e;
  const et_tensor& in = *args[0]->tensor;
  et_tensor& out = *args[1]->tensor;
  if (in.dtype != ET_DTYPE_FLOAT32 || out.dtype != ET_DTYPE_FLOAT32)
    return host.error(ET_ERR_NOT_SUPPORTED, std::string(op) + ": float32 only");
  size_t n = etrt::plugin::numel(in);
  if (etrt::plugin::numel(out) != n) return host.error(ET_ERR_INVALID_ARGUMENT, std::string(op) + ": size mismatch");
  const float* x = static_cast<const float*>(in.data);
  float* y = static_cast<float*>(out.data);
  host.parallel_for(n, 4096, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) y[i] = x[i] * x[i];
  });
  return nullptr;
}

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  return host.register_kernel("my_ops::square.out", square_out);
}

constexpr et_plugin_info kInfo = {sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, "square_op", "1.0.0",
                                  "example custom operator built out of tree", init};

}  // namespace

extern "C" ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
