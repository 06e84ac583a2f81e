// The kernels of the kernels_training plugin (operators.def lists them) and the
// argument checks they share.
#pragma once

#include <cstdint>
#include <string>

#include "etrt/kernel.hpp"

namespace etrt_training_kernels {

using etrt::plugin::Call;
using etrt::plugin::IntArrayRef;
using etrt::plugin::Tensor;

// bool[] (convolution_backward's output_mask): a view of the program's list, one byte per item.
struct BoolArrayRef {
  const uint8_t* items = nullptr;
  size_t count = 0;
  size_t size() const { return count; }
  bool operator[](size_t i) const { return items[i] != 0; }
};

// The host table, bound at init (plugin_entry.cpp).
extern etrt::plugin::Host host;

// aten::convolution_backward.out: the gradients of a 1-D or 2-D convolution with respect to its input
// (out0), weight (out1) and bias (out2), each computed when output_mask says so.
et_error* convolution_backward_out(Call call, const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                   std::optional<IntArrayRef> bias_sizes, IntArrayRef stride, IntArrayRef padding,
                                   IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups,
                                   BoolArrayRef output_mask, Tensor* out0, Tensor* out1, Tensor* out2);

// aten::max_pool2d_with_indices_backward.grad_input: routes each output gradient to the input element
// max_pool2d_with_indices chose (indices), summing where windows overlap.
et_error* max_pool2d_with_indices_backward_out(Call call, const Tensor& grad_output, const Tensor& self,
                                               IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                                               IntArrayRef dilation, bool ceil_mode, const Tensor& indices,
                                               Tensor& grad_input);

// ---- shared checks (checks.cpp); each names the operator and the argument.
et_error* invalid(const Call& call, const std::string& what);
et_error* unsupported(const Call& call, const std::string& what);
// A tensor the kernel reads or writes with dense row-major strides.
et_error* expect_row_major(const Call& call, const Tensor& t, const char* name);
et_error* expect_dtype(const Call& call, const Tensor& t, const char* name, int32_t dtype);
// Gives `out` exactly `sizes` (resizing a dynamic tensor within its capacity) and checks its data.
et_error* shape_output(const Call& call, Tensor& out, const int64_t* sizes, int32_t rank, const char* name);
// An int list of `dims` items, or of one item meaning all of them (empty gives `fallback`).
et_error* expand_list(const Call& call, IntArrayRef list, const char* name, int dims, const int64_t* fallback,
                      int64_t* out);

}  // namespace etrt_training_kernels

// Unboxes bool[] for the typed kernel layer.
template <>
struct etrt::plugin::detail::Unbox<etrt_training_kernels::BoolArrayRef>
    : etrt::plugin::detail::UnboxAsIs<etrt_training_kernels::BoolArrayRef> {
  static constexpr const char* kExpected = "a bool list";
  static bool read(const et_value& v, etrt_training_kernels::BoolArrayRef& s) {
    s = {static_cast<const uint8_t*>(v.items), v.count};
    return v.tag == ET_VALUE_BOOL_LIST && (v.items != nullptr || v.count == 0);
  }
};
