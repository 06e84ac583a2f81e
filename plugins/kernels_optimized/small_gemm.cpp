// The packing-free small-problem SGEMM (see small_gemm.h).
//
// Outer-product tiles (B.cs == 1): C rows are split into blocks of at most 6 (evenly: 8 rows -> 4 + 4, 16 ->
// 6 + 5 + 5), columns into 16-wide blocks with an 8- or masked remainder; per k one broadcast of A per row and
// one or two loads of B, all accumulators in registers (6 x 2 + 2 + 1 = 15 ymm at most).
// Dot-product tiles (A.cs == 1, B.rs == 1): 2 rows x 4 columns of C, 8 k at a time (masked tail), reduced
// with horizontal adds at the end.
#include "small_gemm.h"

#include <algorithm>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ETRT_SMALL_GEMM_X86 1
#define ETRT_AVX2 __attribute__((target("avx2,fma")))
#else
#define ETRT_SMALL_GEMM_X86 0
#endif

namespace etrt::kernels::gemm {
namespace {

constexpr int kMaxRows = 6;   // rows of an outer-product tile
constexpr int kCols = 16;     // columns of an outer-product tile
constexpr int kDotRows = 2;   // rows of a dot-product tile
constexpr int kDotCols = 4;   // columns of a dot-product tile

struct Problem {
  int64_t K;
  float alpha, beta;
  int64_t a_rs, a_cs, b_rs, b_cs;
  int64_t ldc;
};

// Calls tile(first_row, rows) over row blocks of at most `most` rows, as even as possible.
template <typename Tile>
inline void for_row_blocks(int64_t M, int most, Tile&& tile) {
  const int64_t blocks = (M + most - 1) / most;
  const int64_t base = M / blocks, extra = M % blocks;
  int64_t i = 0;
  for (int64_t q = 0; q < blocks; ++q) {
    const int rows = static_cast<int>(base + (q < extra ? 1 : 0));
    tile(i, rows);
    i += rows;
  }
}

// Calls f(std::integral_constant<int, rows>{}) for rows in 1..6 (tiles are templates on their row count).
template <typename F>
inline void with_rows(int rows, F&& f) {
  switch (rows) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    default: return f(std::integral_constant<int, 6>{});
  }
}

// ----------------------------------------------------------------- portable
// R rows x n (<= 16) columns, B rows contiguous; kFull: n == 16 (fixed trip count: vectorised).
template <int R, bool kFull>
void rows_tile_generic(const Problem& p, const float* a, const float* b, float* c, int64_t n) {
  float acc[R][kCols] = {};
  const int64_t w = kFull ? kCols : n;
  for (int64_t k = 0; k < p.K; ++k) {
    const float* bk = b + k * p.b_rs;
    for (int r = 0; r < R; ++r) {
      const float ar = a[r * p.a_rs + k * p.a_cs];
      for (int64_t j = 0; j < w; ++j) acc[r][j] += ar * bk[j];
    }
  }
  for (int r = 0; r < R; ++r) {
    float* row = c + r * p.ldc;
    for (int64_t j = 0; j < w; ++j) row[j] = p.beta == 0.0f ? p.alpha * acc[r][j] : p.alpha * acc[r][j] + p.beta * row[j];
  }
}

template <int R>
void rows_block_generic(const Problem& p, const float* a, const float* b, float* c, int64_t N) {
  int64_t j = 0;
  for (; j + kCols <= N; j += kCols) rows_tile_generic<R, true>(p, a, b + j, c + j, kCols);
  if (j < N) rows_tile_generic<R, false>(p, a, b + j, c + j, N - j);
}

void rows_generic(const Problem& p, int64_t M, int64_t N, const float* A, const float* B, float* C) {
  for_row_blocks(M, kMaxRows, [&](int64_t i, int rows) {
    const float* a = A + i * p.a_rs;
    float* c = C + i * p.ldc;
    with_rows(rows, [&](auto r) { rows_block_generic<decltype(r)::value>(p, a, B, c, N); });
  });
}

#if ETRT_SMALL_GEMM_X86
// Lanes [0, n) of a maskload/maskstore mask, n in 1..8.
ETRT_AVX2 inline __m256i lane_mask(int64_t n) {
  alignas(32) static constexpr int32_t kTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kTable + 8 - n));
}

// R rows x 8 * V columns of C; kMasked: the last vector holds only `last` (1..8) columns.
template <int R, int V, bool kMasked>
ETRT_AVX2 void rows_tile_avx2(const Problem& p, const float* a, const float* b, float* c, int64_t last) {
  const __m256i mask = lane_mask(kMasked ? last : 8);
  __m256 acc[R][V];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_ps();
  for (int64_t k = 0; k < p.K; ++k) {
    const float* bk = b + k * p.b_rs;
    const float* ak = a + k * p.a_cs;
    __m256 bv[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v)
      bv[v] = (kMasked && v == V - 1) ? _mm256_maskload_ps(bk + 8 * v, mask) : _mm256_loadu_ps(bk + 8 * v);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(ak + r * p.a_rs);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
  const __m256 va = _mm256_set1_ps(p.alpha), vb = _mm256_set1_ps(p.beta);
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) {
      float* cp = c + r * p.ldc + 8 * v;
      const bool masked = kMasked && v == V - 1;
      __m256 x = _mm256_mul_ps(acc[r][v], va);
      if (p.beta != 0.0f) x = _mm256_fmadd_ps(vb, masked ? _mm256_maskload_ps(cp, mask) : _mm256_loadu_ps(cp), x);
      if (masked) _mm256_maskstore_ps(cp, mask, x);
      else _mm256_storeu_ps(cp, x);
    }
  }
}

template <int R>
ETRT_AVX2 void rows_block_avx2(const Problem& p, const float* a, const float* b, float* c, int64_t N) {
  int64_t j = 0;
  for (; j + kCols <= N; j += kCols) rows_tile_avx2<R, 2, false>(p, a, b + j, c + j, 8);
  const int64_t rest = N - j;
  if (rest > 8) rows_tile_avx2<R, 2, true>(p, a, b + j, c + j, rest - 8);
  else if (rest == 8) rows_tile_avx2<R, 1, false>(p, a, b + j, c + j, 8);
  else if (rest > 0) rows_tile_avx2<R, 1, true>(p, a, b + j, c + j, rest);
}

void rows_avx2(const Problem& p, int64_t M, int64_t N, const float* A, const float* B, float* C) {
  for_row_blocks(M, kMaxRows, [&](int64_t i, int rows) {
    const float* a = A + i * p.a_rs;
    float* c = C + i * p.ldc;
    with_rows(rows, [&](auto r) { rows_block_avx2<decltype(r)::value>(p, a, B, c, N); });
  });
}

// [sum(v0), sum(v1), sum(v2), sum(v3)].
ETRT_AVX2 inline __m128 hsum4(__m256 v0, __m256 v1, __m256 v2, __m256 v3) {
  const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(v0, v1), _mm256_hadd_ps(v2, v3));
  return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

// acc[r][j] += A row r [k, k + 8) . B column j [k, k + 8); kMasked: only the lanes of `mask`.
template <int R, bool kMasked>
ETRT_AVX2 __attribute__((always_inline)) inline void dot_step(const Problem& p, const float* a, const float* const* bc,
                                                              int64_t k, __m256i mask, __m256 (&acc)[R][kDotCols]) {
  __m256 bv[kDotCols];
#pragma GCC unroll 4
  for (int j = 0; j < kDotCols; ++j) bv[j] = kMasked ? _mm256_maskload_ps(bc[j] + k, mask) : _mm256_loadu_ps(bc[j] + k);
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r) {
    const float* ar = a + r * p.a_rs + k;
    const __m256 av = kMasked ? _mm256_maskload_ps(ar, mask) : _mm256_loadu_ps(ar);
#pragma GCC unroll 4
    for (int j = 0; j < kDotCols; ++j) acc[r][j] = _mm256_fmadd_ps(av, bv[j], acc[r][j]);
  }
}

// R rows x `cols` (1..4) columns of C as dot products of contiguous rows of A and columns of B.
template <int R>
ETRT_AVX2 void dots_tile_avx2(const Problem& p, const float* a, const float* b, float* c, int64_t cols) {
  const float* bc[kDotCols];
  for (int j = 0; j < kDotCols; ++j) bc[j] = b + std::min<int64_t>(j, cols - 1) * p.b_cs;  // repeats: never stored
  __m256 acc[R][kDotCols];
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < kDotCols; ++j) acc[r][j] = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 8 <= p.K; k += 8) dot_step<R, false>(p, a, bc, k, _mm256_setzero_si256(), acc);
  if (k < p.K) dot_step<R, true>(p, a, bc, k, lane_mask(p.K - k), acc);
  const __m128 va = _mm_set1_ps(p.alpha), vb = _mm_set1_ps(p.beta);
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r) {
    __m128 x = _mm_mul_ps(hsum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]), va);
    float* cr = c + r * p.ldc;
    if (cols == kDotCols) {
      if (p.beta != 0.0f) x = _mm_fmadd_ps(vb, _mm_loadu_ps(cr), x);
      _mm_storeu_ps(cr, x);
    } else {
      alignas(16) float s[kDotCols];
      _mm_store_ps(s, x);
      for (int64_t j = 0; j < cols; ++j) cr[j] = p.beta == 0.0f ? s[j] : s[j] + p.beta * cr[j];
    }
  }
}

ETRT_AVX2 void dots_avx2(const Problem& p, int64_t M, int64_t N, const float* A, const float* B, float* C) {
  for_row_blocks(M, kDotRows, [&](int64_t i, int rows) {
    const float* a = A + i * p.a_rs;
    float* c = C + i * p.ldc;
    for (int64_t j = 0; j < N; j += kDotCols) {
      const int64_t cols = std::min<int64_t>(kDotCols, N - j);
      if (rows == 2) dots_tile_avx2<2>(p, a, B + j * p.b_cs, c + j, cols);
      else dots_tile_avx2<1>(p, a, B + j * p.b_cs, c + j, cols);
    }
  });
}
#endif

}  // namespace

bool small_gemm(int64_t M, int64_t N, int64_t K, float alpha, const Matrix& A, const Matrix& B, float beta, float* C,
                int64_t ldc, bool avx2) {
  if (M <= 0 || N <= 0 || K <= 0 || M * N > kSmallGemmWork || M * N * K > kSmallGemmWork) return false;
  const Problem p{K, alpha, beta, A.rs, A.cs, B.rs, B.cs, ldc};
#if ETRT_SMALL_GEMM_X86
  if (avx2) {
    if (B.cs == 1) {
      rows_avx2(p, M, N, A.data, B.data, C);
      return true;
    }
    if (A.cs == 1 && B.rs == 1) {
      dots_avx2(p, M, N, A.data, B.data, C);
      return true;
    }
    return false;
  }
#else
  (void)avx2;
#endif
  if (B.cs != 1) return false;
  rows_generic(p, M, N, A.data, B.data, C);
  return true;
}

}  // namespace etrt::kernels::gemm
