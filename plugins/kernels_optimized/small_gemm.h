// The packing-free SGEMM path for small problems (the [16, 32] x [32, 96] projections and 8 x 8 x 8
// attention products of a small transformer): packing A and B into panels costs as much as the arithmetic
// there, and the packed micro-kernel's edge tiles go through a scratch tile. Here register tiles read A and
// B where they are.
#pragma once

#include "gemm.h"

namespace etrt::kernels::gemm {

// At most this many multiply-accumulates (M * N * K) take the packing-free path. Equal to the parallel
// threshold, so it always runs on the calling thread.
constexpr int64_t kSmallGemmWork = kParallelThreshold;

// C[M, N] = alpha * A * B + beta * C (beta == 0: C is not read) without packing or scratch memory, when the
// problem is at most kSmallGemmWork and its layout suits: rows of B contiguous (B.cs == 1; register tiles of
// up to 6 rows x 16 columns of C, outer products), or rows of A and columns of B contiguous (A.cs == 1 and
// B.rs == 1, e.g. x @ W^T or q @ k^T; tiles of dot products). `avx2` selects the AVX2+FMA tiles; otherwise a
// portable tile the compiler vectorises takes the first layout only. Returns false, C untouched, when the
// problem does not qualify (the caller packs).
bool small_gemm(int64_t M, int64_t N, int64_t K, float alpha, const Matrix& A, const Matrix& B, float beta, float* C,
                int64_t ldc, bool avx2);

}  // namespace etrt::kernels::gemm
