// A plugin written against SDK 1.4 (and 1.5, whose C++ helpers are the same):
// prepared typed kernels (prepared<F, P>, Prepare, PreparedState, Call::state),
// half.hpp's float16 conversions and descriptor_of, unchanged: it must compile
// against today's headers and load (tests/sdk/sdk_compat_test.cpp).
//
//   sdk_1_4::axpy.out(Tensor x, Tensor y, float a, *, Tensor(a!) out) -> Tensor(a!)
//   out = a * x + y, float32 or float16 (computed in float32); prepared: the element count
#include <memory>
#include <string>

#include "etrt/half.hpp"
#include "etrt/kernel.hpp"

namespace {

using etrt::plugin::Call;
using etrt::plugin::Half;
using etrt::plugin::Prepare;
using etrt::plugin::Tensor;

etrt::plugin::Host host;

// What prepare learnt of an instruction: its element count and dtype.
struct AxpyPlan : etrt::plugin::PreparedState {
  size_t count = 0;
  int32_t dtype = 0;
};

et_error* check(const char* op, const Tensor& x, const Tensor& y, const Tensor& out) {
  bool same_dtype = x.dtype == y.dtype && y.dtype == out.dtype;
  bool supported = x.dtype == ET_DTYPE_FLOAT32 || x.dtype == ET_DTYPE_FLOAT16;
  size_t n = etrt::plugin::numel(x);
  if (!same_dtype || !supported || etrt::plugin::numel(y) != n || etrt::plugin::numel(out) != n)
    return host.error(ET_ERR_INVALID_ARGUMENT, std::string(op) + ": x " + etrt::plugin::dtype_name(x.dtype) +
                                                   etrt::plugin::shape_string(x) + ", y " +
                                                   etrt::plugin::shape_string(y) + ", out " +
                                                   etrt::plugin::shape_string(out));
  return nullptr;
}

void run(size_t n, int32_t dtype, const Tensor& x, const Tensor& y, double a, Tensor& out) {
  const float alpha = static_cast<float>(a);
  if (dtype == ET_DTYPE_FLOAT32) {
    const float* xs = static_cast<const float*>(x.data);
    const float* ys = static_cast<const float*>(y.data);
    float* os = static_cast<float*>(out.data);
    for (size_t i = 0; i < n; ++i) os[i] = alpha * xs[i] + ys[i];
    return;
  }
  const Half* xs = static_cast<const Half*>(x.data);
  const Half* ys = static_cast<const Half*>(y.data);
  Half* os = static_cast<Half*>(out.data);
  for (size_t i = 0; i < n; ++i)
    os[i] = etrt::plugin::half_from_float(alpha * etrt::plugin::to_float(xs[i]) + etrt::plugin::to_float(ys[i]));
}

et_error* axpy_prepare(Prepare& prepare, const Tensor& x, const Tensor& y, double a, Tensor& out) {
  ETRT_TRY(check(prepare.op, x, y, out));
  auto plan = std::make_unique<AxpyPlan>();
  plan->count = etrt::plugin::numel(x);
  plan->dtype = x.dtype;
  prepare.state = std::move(plan);
  return nullptr;
}

et_error* axpy_out(Call call, const Tensor& x, const Tensor& y, double a, Tensor& out) {
  const auto* plan = static_cast<const AxpyPlan*>(call.state);
  // The plan holds while the shapes and dtype it was made for do.
  if (plan != nullptr && plan->dtype == x.dtype && plan->count == etrt::plugin::numel(x) &&
      check(call.op, x, y, out) == nullptr) {
    run(plan->count, plan->dtype, x, y, a, out);
    return nullptr;
  }
  ETRT_TRY(check(call.op, x, y, out));
  run(etrt::plugin::numel(x), x.dtype, x, y, a, out);
  return nullptr;
}

constexpr etrt::plugin::KernelDef kKernels[] = {
    etrt::plugin::kernel<etrt::plugin::prepared<axpy_out, axpy_prepare>>(SDK_PLUGIN_NAME "::axpy.out",
                                                                         "x, y, a, out"),
};

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  if (etrt::plugin::descriptor_of(kKernels[0]).prepare == nullptr)
    return host.error(ET_ERR_INTERNAL, "sdk_1_4: the kernel lost its prepare function");
  return etrt::plugin::register_kernels(host, kKernels);
}

constexpr et_plugin_info kInfo = {sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_TARGET_MINOR, SDK_PLUGIN_NAME,
                                  "1.4.0", "a plugin written against SDK 1.4", init};

}  // namespace

extern "C" ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
