// Kernels of the pointwise family defined outside binary_elementwise.cpp;
// pointwise_table.cpp lists them by operator name.
#pragma once

#include "etrt/plugin_api.h"

namespace etrt::kernels::pw {

#define PW_KERNEL(name) et_error* name(void*, et_exec_context*, et_value* const* args, size_t nargs)

// unary_elementwise.cpp
PW_KERNEL(relu_out); PW_KERNEL(hardtanh_out); PW_KERNEL(clamp_out); PW_KERNEL(gelu_out); PW_KERNEL(sigmoid_out);
PW_KERNEL(tanh_out); PW_KERNEL(exp_out); PW_KERNEL(expm1_out); PW_KERNEL(log_out); PW_KERNEL(log1p_out);
PW_KERNEL(sqrt_out); PW_KERNEL(rsqrt_out); PW_KERNEL(reciprocal_out); PW_KERNEL(sin_out); PW_KERNEL(cos_out);
PW_KERNEL(erf_out); PW_KERNEL(neg_out); PW_KERNEL(abs_out); PW_KERNEL(floor_out); PW_KERNEL(ceil_out);
PW_KERNEL(round_out); PW_KERNEL(trunc_out); PW_KERNEL(logical_not_out); PW_KERNEL(bitwise_not_out);
PW_KERNEL(silu_out); PW_KERNEL(hardswish_out); PW_KERNEL(hardsigmoid_out); PW_KERNEL(leaky_relu_out);
// softmax.cpp
PW_KERNEL(softmax_out); PW_KERNEL(log_softmax_out);
// reductions.cpp
PW_KERNEL(sum_out); PW_KERNEL(mean_out); PW_KERNEL(amax_out); PW_KERNEL(amin_out); PW_KERNEL(argmax_out);
PW_KERNEL(argmin_out); PW_KERNEL(var_out); PW_KERNEL(std_out);
// shape_ops.cpp
PW_KERNEL(to_copy_out); PW_KERNEL(to_dim_order_copy_out); PW_KERNEL(clone_out); PW_KERNEL(clone_dim_order_out);
PW_KERNEL(alias_copy_out); PW_KERNEL(copy_inplace); PW_KERNEL(copy_out); PW_KERNEL(view_copy_out);
PW_KERNEL(unsqueeze_copy_out); PW_KERNEL(squeeze_copy_dims_out); PW_KERNEL(squeeze_copy_dim_out);
PW_KERNEL(squeeze_copy_out); PW_KERNEL(permute_copy_out); PW_KERNEL(transpose_copy_out); PW_KERNEL(t_copy_out);
PW_KERNEL(expand_copy_out); PW_KERNEL(slice_copy_out); PW_KERNEL(select_copy_out); PW_KERNEL(cat_out);
PW_KERNEL(stack_out); PW_KERNEL(split_with_sizes_copy_out); PW_KERNEL(split_copy_out);
PW_KERNEL(constant_pad_nd_out); PW_KERNEL(repeat_out);
// indexing.cpp
PW_KERNEL(embedding_out); PW_KERNEL(index_select_out); PW_KERNEL(index_tensor_out); PW_KERNEL(full_out);
PW_KERNEL(zeros_out); PW_KERNEL(ones_out); PW_KERNEL(full_like_out); PW_KERNEL(zeros_like_out);
PW_KERNEL(ones_like_out); PW_KERNEL(fill_scalar_out); PW_KERNEL(scalar_tensor_out); PW_KERNEL(arange_out);
PW_KERNEL(arange_start_out); PW_KERNEL(triu_out); PW_KERNEL(tril_out);

#undef PW_KERNEL

}  // namespace etrt::kernels::pw
