// Single-precision matrix multiplication used by every kernel of the linear
// algebra family (mm, addmm, bmm, linear, convolution).
//
// A cache-blocked, packed SGEMM in the GotoBLAS/BLIS structure: B is packed
// in KC x NC blocks of NR-wide column panels, A in KC-deep panels of MR rows,
// and a register-tiled MR x NR micro-kernel accumulates in registers. The
// micro-kernel is chosen once per process from the CPU: AVX2+FMA (6 x 16,
// 12 ymm accumulators), NEON on aarch64 (6 x 16, 24 q-register accumulators)
// or a portable one the compiler auto-vectorises for the baseline ISA. Work is split over the host's thread pool by M/N tiles.
#pragma once

#include <cstddef>
#include <cstdint>

namespace etrt::kernels::gemm {

// A read-only matrix view: element (i, j) is data[i * rs + j * cs]. Any
// strides work (a transposed operand is just rs = 1).
struct Matrix {
  const float* data;
  int64_t rs;
  int64_t cs;
};

// C = alpha * A[M, K] * B[K, N] + beta * C, C row-major with row stride ldc.
// beta == 0 means C is not read (it may hold garbage or NaN). K == 0 gives
// C = beta * C. Splits across the host pool when `parallel` and the problem
// is large enough (nested inside a parallel_for it runs inline). Returns false
// only when the packing buffers cannot be allocated.
bool sgemm(int64_t M, int64_t N, int64_t K, float alpha, Matrix A, Matrix B, float beta, float* C, int64_t ldc,
           bool parallel = true);

// Multiply-accumulates at or above which sgemm uses the thread pool.
constexpr int64_t kParallelThreshold = int64_t{1} << 17;

// "avx2+fma", "neon" or "generic": which micro-kernel this process uses (logged
// at debug level when first chosen). Setting the environment variable
// ETRT_GEMM_ISA=generic before the first call forces the portable one (tests use
// it to cover that path on AVX2 and aarch64 machines).
const char* isa();

// True when this process uses the AVX2+FMA code paths (the CPU and OS support
// them and ETRT_GEMM_ISA does not force the portable ones). Other kernels of
// the family dispatch on it too.
bool use_avx2();

}  // namespace etrt::kernels::gemm
