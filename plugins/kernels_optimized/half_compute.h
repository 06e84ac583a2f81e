// float16 and bfloat16 for the float32 kernels: arithmetic in float32, rounded to half on store.
//
// Kernels that compute (elementwise math, reductions, softmax, norms, matmul, ...) are written for
// float32/float64. For an operator registered through register_with_half, a call whose tensors include
// float16 or bfloat16 ones runs the same kernel on float32 copies of them (exact: every half value is a
// float) and rounds the float32 outputs back to the half outputs (round-to-nearest-even, NaN kept), which is
// what PyTorch's CPU kernels do per operator (their opmath type for half is float). A ScalarType argument
// named `dtype` asking for a half type asks for float32 in the float call. Calls without half tensors go
// straight to the kernel (a scan of the arguments' tags and dtypes).
//
// Operators that only move elements (copies, dtype conversions) handle half natively (copy_view converts
// every dtype pair); operators listed in kNoHalfCompute (integer and bit operations) keep their own error,
// which names the operator and the dtype.
#pragma once

#include <span>

#include "etrt/kernel.hpp"

namespace etrt::kernels {

// Registers `defs` like etrt::plugin::register_kernels, computing half-precision calls in float32 for every
// operator that neither handles half itself nor is excluded from it.
et_error* register_with_half(const etrt::plugin::Host& host, std::span<const etrt::plugin::KernelDef> defs);

// Whether register_with_half computes `op` in float32 for half tensors (tests, messages).
bool half_computed_in_float(const char* op);

}  // namespace etrt::kernels
