// Packed, cache-blocked SGEMM (see gemm.h for the structure).
//
// Blocking (AMD Zen 3 / Intel Skylake-class cores: 32 KiB L1d, >= 512 KiB L2):
//   MR x NR = 6 x 16   12 ymm accumulators + 2 B vectors + 1 broadcast = 15 of 16 registers
//   KC = 256           one A micro-panel (6 KiB) + one B micro-panel (16 KiB) stay in L1
//   MC = 144           the A block a thread sweeps (144 x 256 x 4 = 144 KiB) stays in L2
//   NC = 4080          the packed B block (<= 4 MiB) lives in L3
// Loop order: jc (NC) > pc (KC) > [pack A and B] > tiles of (rows x columns)
// in parallel > jr (NR panels of B) > ir (MR panels of A) > micro-kernel.
#include "gemm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels.h"
#include "small_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define ETRT_GEMM_X86 1
#else
#define ETRT_GEMM_X86 0
#endif
#if defined(__aarch64__)
#include <arm_neon.h>  // ASIMD is part of the aarch64 baseline: no CPU check needed
#define ETRT_GEMM_NEON 1
#else
#define ETRT_GEMM_NEON 0
#endif

namespace etrt::kernels::gemm {
namespace {

constexpr int64_t MR = 6;
constexpr int64_t NR = 16;
constexpr int64_t KC = 256;
constexpr int64_t MC = 144;
constexpr int64_t NC = 4080;
// Columns of one parallel tile at most (the tile count grows for more threads).
constexpr int64_t NT = 1024;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// c[i, j] (m x n valid) = tile[i, j] + beta * c[i, j]; beta == 0 never reads c.
inline void store_tile(const float* tile, float* c, int64_t ldc, int64_t m, int64_t n, float beta) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    const float* t = tile + i * NR;
    if (beta == 0.0f) {
      for (int64_t j = 0; j < n; ++j) row[j] = t[j];
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] = t[j] + beta * row[j];
    }
  }
}

// ------------------------------------------------------------ micro-kernels
// C[m x n] (m <= MR, n <= NR) = alpha * Apanel * Bpanel + beta * C, where
// Apanel holds kc columns of MR values and Bpanel kc rows of NR values.
using MicroKernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int64_t m, int64_t n,
                             float alpha, float beta);

// Portable: plain loops over a 6 x 16 accumulator the compiler vectorises
// with whatever the baseline ISA offers (SSE2 on x86-64).
void kernel_generic(int64_t kc, const float* __restrict a, const float* __restrict b, float* c, int64_t ldc,
                    int64_t m, int64_t n, float alpha, float beta) {
  alignas(64) float acc[MR * NR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const float* bk = b + k * NR;
    const float* ak = a + k * MR;
    for (int64_t i = 0; i < MR; ++i) {
      const float ai = ak[i];
      float* row = acc + i * NR;
      for (int64_t j = 0; j < NR; ++j) row[j] += ai * bk[j];
    }
  }
  for (float& x : acc) x *= alpha;
  store_tile(acc, c, ldc, m, n, beta);
}

#if ETRT_GEMM_X86
__attribute__((target("avx2,fma"))) inline void store_row_avx2(float* p, __m256 x0, __m256 x1, __m256 va, float beta) {
  x0 = _mm256_mul_ps(x0, va);
  x1 = _mm256_mul_ps(x1, va);
  if (beta == 1.0f) {
    x0 = _mm256_add_ps(x0, _mm256_loadu_ps(p));
    x1 = _mm256_add_ps(x1, _mm256_loadu_ps(p + 8));
  } else if (beta != 0.0f) {
    const __m256 vb = _mm256_set1_ps(beta);
    x0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(p), x0);
    x1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(p + 8), x1);
  }
  _mm256_storeu_ps(p, x0);
  _mm256_storeu_ps(p + 8, x1);
}

// AVX2 + FMA, 6 x 16: per k, two aligned loads of B, six broadcasts of A and
// twelve independent FMAs (enough to cover the 4-cycle FMA latency on both ports).
__attribute__((target("avx2,fma"))) void kernel_avx2(int64_t kc, const float* __restrict a, const float* __restrict b,
                                                     float* c, int64_t ldc, int64_t m, int64_t n, float alpha,
                                                     float beta) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  if (m == MR && n == NR && beta != 0.0f) {
    for (int64_t i = 0; i < MR; ++i) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
  }
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_load_ps(b);
    const __m256 b1 = _mm256_load_ps(b + 8);
    _mm_prefetch(reinterpret_cast<const char*>(b + 384), _MM_HINT_T0);
    __m256 av = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(av, b0, c00);
    c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(av, b0, c10);
    c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(av, b0, c20);
    c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(av, b0, c30);
    c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(av, b0, c40);
    c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(av, b0, c50);
    c51 = _mm256_fmadd_ps(av, b1, c51);
    a += MR;
    b += NR;
  }
  const __m256 va = _mm256_set1_ps(alpha);
  if (m == MR && n == NR) {
    store_row_avx2(c + 0 * ldc, c00, c01, va, beta);
    store_row_avx2(c + 1 * ldc, c10, c11, va, beta);
    store_row_avx2(c + 2 * ldc, c20, c21, va, beta);
    store_row_avx2(c + 3 * ldc, c30, c31, va, beta);
    store_row_avx2(c + 4 * ldc, c40, c41, va, beta);
    store_row_avx2(c + 5 * ldc, c50, c51, va, beta);
    return;
  }
  alignas(64) float tile[MR * NR];
  const __m256 rows[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  for (int64_t i = 0; i < MR; ++i) {
    _mm256_store_ps(tile + i * NR, _mm256_mul_ps(rows[i][0], va));
    _mm256_store_ps(tile + i * NR + 8, _mm256_mul_ps(rows[i][1], va));
  }
  store_tile(tile, c, ldc, m, n, beta);
}
#endif

#if ETRT_GEMM_NEON
// One row of the tile: r0..r3 += a[Lane] * b0..b3 (the lane must be a constant).
#define ETRT_NEON_ROW(r, lane_op, a, lane)  \
  r##0 = lane_op(r##0, b0, a, lane);        \
  r##1 = lane_op(r##1, b1, a, lane);        \
  r##2 = lane_op(r##2, b2, a, lane);        \
  r##3 = lane_op(r##3, b3, a, lane)

// p[0..15] = alpha * x0..x3 + beta * p[0..15]; beta == 0 never reads p.
inline void store_row_neon(float* p, float32x4_t x0, float32x4_t x1, float32x4_t x2, float32x4_t x3, float alpha,
                           float beta) {
  float32x4_t x[4] = {vmulq_n_f32(x0, alpha), vmulq_n_f32(x1, alpha), vmulq_n_f32(x2, alpha), vmulq_n_f32(x3, alpha)};
  for (int q = 0; q < 4; ++q) {
    if (beta == 1.0f) {
      x[q] = vaddq_f32(x[q], vld1q_f32(p + 4 * q));
    } else if (beta != 0.0f) {
      x[q] = vfmaq_n_f32(x[q], vld1q_f32(p + 4 * q), beta);
    }
    vst1q_f32(p + 4 * q, x[q]);
  }
}

// NEON (ASIMD), 6 x 16: 24 accumulators in 24 of the 32 vector registers (named, so
// they stay in registers), per k four loads of B, the six A values in two registers
// used by lane, and 24 independent FMAs.
void kernel_neon(int64_t kc, const float* __restrict a, const float* __restrict b, float* c, int64_t ldc,
                 int64_t m, int64_t n, float alpha, float beta) {
  const float32x4_t z = vdupq_n_f32(0.0f);
  float32x4_t c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z;
  float32x4_t c20 = z, c21 = z, c22 = z, c23 = z, c30 = z, c31 = z, c32 = z, c33 = z;
  float32x4_t c40 = z, c41 = z, c42 = z, c43 = z, c50 = z, c51 = z, c52 = z, c53 = z;
  for (int64_t k = 0; k < kc; ++k) {
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8), b3 = vld1q_f32(b + 12);
    const float32x4_t a0123 = vld1q_f32(a);
    const float32x2_t a45 = vld1_f32(a + 4);
    ETRT_NEON_ROW(c0, vfmaq_laneq_f32, a0123, 0);
    ETRT_NEON_ROW(c1, vfmaq_laneq_f32, a0123, 1);
    ETRT_NEON_ROW(c2, vfmaq_laneq_f32, a0123, 2);
    ETRT_NEON_ROW(c3, vfmaq_laneq_f32, a0123, 3);
    ETRT_NEON_ROW(c4, vfmaq_lane_f32, a45, 0);
    ETRT_NEON_ROW(c5, vfmaq_lane_f32, a45, 1);
    a += MR;
    b += NR;
  }
  alignas(64) float tile[MR * NR];
  const bool full = m == MR && n == NR;
  float* rows = full ? c : tile;           // a partial tile goes through store_tile
  const int64_t stride = full ? ldc : NR;
  const float row_beta = full ? beta : 0.0f;
  store_row_neon(rows + 0 * stride, c00, c01, c02, c03, alpha, row_beta);
  store_row_neon(rows + 1 * stride, c10, c11, c12, c13, alpha, row_beta);
  store_row_neon(rows + 2 * stride, c20, c21, c22, c23, alpha, row_beta);
  store_row_neon(rows + 3 * stride, c30, c31, c32, c33, alpha, row_beta);
  store_row_neon(rows + 4 * stride, c40, c41, c42, c43, alpha, row_beta);
  store_row_neon(rows + 5 * stride, c50, c51, c52, c53, alpha, row_beta);
  if (!full) store_tile(tile, c, ldc, m, n, beta);
}
#undef ETRT_NEON_ROW
#endif

// ------------------------------------------------------------------ packing
// A rows [m0, m0 + m) x columns [k0, k0 + kc) -> dst[k * MR + i], rows >= m zero.
void pack_a(const Matrix& A, int64_t m0, int64_t m, int64_t k0, int64_t kc, float* __restrict dst) {
  const float* base = A.data + m0 * A.rs + k0 * A.cs;
  if (A.rs == 1 && m == MR) {  // column-major A: each k is MR consecutive floats
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = base + k * A.cs;
      for (int64_t i = 0; i < MR; ++i) dst[k * MR + i] = src[i];
    }
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    const float* src = base + i * A.rs;
    if (A.cs == 1) {
      for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = src[k];
    } else {
      for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = src[k * A.cs];
    }
  }
  for (int64_t i = m; i < MR; ++i)
    for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = 0.0f;
}

// B rows [k0, k0 + kc) x columns [n0, n0 + n) -> dst[k * NR + j], columns >= n zero.
void pack_b(const Matrix& B, int64_t n0, int64_t n, int64_t k0, int64_t kc, float* __restrict dst) {
  const float* base = B.data + k0 * B.rs + n0 * B.cs;
  if (B.cs == 1) {  // rows of B are contiguous
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = base + k * B.rs;
      float* d = dst + k * NR;
      if (n == NR) {
        std::memcpy(d, src, NR * sizeof(float));
      } else {
        for (int64_t j = 0; j < n; ++j) d[j] = src[j];
        for (int64_t j = n; j < NR; ++j) d[j] = 0.0f;
      }
    }
    return;
  }
  for (int64_t j = 0; j < n; ++j) {  // e.g. B = W^T of a linear layer: columns contiguous
    const float* src = base + j * B.cs;
    if (B.rs == 1) {
      for (int64_t k = 0; k < kc; ++k) dst[k * NR + j] = src[k];
    } else {
      for (int64_t k = 0; k < kc; ++k) dst[k * NR + j] = src[k * B.rs];
    }
  }
  for (int64_t j = n; j < NR; ++j)
    for (int64_t k = 0; k < kc; ++k) dst[k * NR + j] = 0.0f;
}

// ------------------------------------------------------- ISA selection
// Constant-initialised (no static initialiser): -1 unknown, then one of Isa.
enum Isa : int { kIsaGeneric = 0, kIsaAvx2Fma = 1, kIsaNeon = 2 };
std::atomic<int> g_isa{-1};

bool cpu_supports_avx2_fma() {
#if ETRT_GEMM_X86
  // cpuid directly rather than __builtin_cpu_supports, whose libgcc support
  // object brings a constructor into the plugin.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  if (!(ecx & bit_FMA) || !(ecx & bit_AVX) || !(ecx & bit_OSXSAVE)) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 0x6u) != 0x6u) return false;  // the OS saves XMM and YMM state
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  return (ebx & bit_AVX2) != 0;
#else
  return false;
#endif
}

int selected_isa();

const char* isa_name(int isa) {
  return isa == kIsaAvx2Fma ? "avx2+fma" : isa == kIsaNeon ? "neon" : "generic";
}

MicroKernel micro_kernel() {
#if ETRT_GEMM_X86
  if (use_avx2()) return kernel_avx2;
#endif
#if ETRT_GEMM_NEON
  if (selected_isa() == kIsaNeon) return kernel_neon;
#endif
  return kernel_generic;
}

// ------------------------------------------------------- thin problems
// M <= 2 (or N <= 2, transposed into that form): packing would cost as much as
// the arithmetic, so rows are computed directly as AXPYs over contiguous rows
// of B or as dot products against contiguous columns of B.

void axpy_generic(int64_t n, float w, const float* __restrict x, float* __restrict y) {
  for (int64_t i = 0; i < n; ++i) y[i] += w * x[i];
}

// Four dot products sharing x: out[c] = sum_k x[k] * y_c[k].
void dot4_generic(int64_t k, const float* x, const float* const y[4], float out[4]) {
  for (int c = 0; c < 4; ++c) {
    float part[8] = {};
    int64_t i = 0;
    for (; i + 8 <= k; i += 8)
      for (int l = 0; l < 8; ++l) part[l] += x[i + l] * y[c][i + l];
    float s = 0.0f;
    for (int l = 0; l < 8; ++l) s += part[l];
    for (; i < k; ++i) s += x[i] * y[c][i];
    out[c] = s;
  }
}

#if ETRT_GEMM_X86
__attribute__((target("avx2,fma"))) void axpy_avx2(int64_t n, float w, const float* __restrict x,
                                                   float* __restrict y) {
  const __m256 vw = _mm256_set1_ps(w);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(vw, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    _mm256_storeu_ps(y + i + 8, _mm256_fmadd_ps(vw, _mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8)));
  }
  for (; i < n; ++i) y[i] = std::fma(w, x[i], y[i]);
}

__attribute__((target("avx2,fma"))) inline float hsum_avx2(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) void dot4_avx2(int64_t k, const float* x, const float* const y[4],
                                                   float out[4]) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= k; i += 8) {
    const __m256 vx = _mm256_loadu_ps(x + i);
    s0 = _mm256_fmadd_ps(vx, _mm256_loadu_ps(y[0] + i), s0);
    s1 = _mm256_fmadd_ps(vx, _mm256_loadu_ps(y[1] + i), s1);
    s2 = _mm256_fmadd_ps(vx, _mm256_loadu_ps(y[2] + i), s2);
    s3 = _mm256_fmadd_ps(vx, _mm256_loadu_ps(y[3] + i), s3);
  }
  out[0] = hsum_avx2(s0), out[1] = hsum_avx2(s1), out[2] = hsum_avx2(s2), out[3] = hsum_avx2(s3);
  for (; i < k; ++i)
    for (int c = 0; c < 4; ++c) out[c] += x[i] * y[c][i];
}
#endif

struct Thin {
  int64_t M, N, K;
  float alpha, beta;
  Matrix A, B;
  float* C;
  int64_t c_rs, c_cs;
};

// Rows [m0, m1) x columns [n0, n1) of a thin problem.
void thin_block(const Thin& p, int64_t m0, int64_t m1, int64_t n0, int64_t n1, bool avx2) {
  auto axpy = axpy_generic;
  auto dot4 = dot4_generic;
#if ETRT_GEMM_X86
  if (avx2) axpy = axpy_avx2, dot4 = dot4_avx2;
#endif
  for (int64_t m = m0; m < m1; ++m) {
    float* c = p.C + m * p.c_rs;
    if (p.B.cs == 1 && p.c_cs == 1) {
      float* row = c + n0;
      const int64_t n = n1 - n0;
      if (p.beta == 0.0f) std::fill(row, row + n, 0.0f);
      else if (p.beta != 1.0f) for (int64_t j = 0; j < n; ++j) row[j] *= p.beta;
      for (int64_t k = 0; k < p.K; ++k) {
        const float w = p.alpha * p.A.data[m * p.A.rs + k * p.A.cs];
        axpy(n, w, p.B.data + k * p.B.rs + n0, row);
      }
      continue;
    }
    const float* a = p.A.data + m * p.A.rs;
    for (int64_t n = n0; n < n1; n += 4) {
      float s[4] = {};
      const int64_t cnt = std::min<int64_t>(4, n1 - n);
      if (p.A.cs == 1 && p.B.rs == 1) {
        const float* cols[4];
        for (int64_t j = 0; j < 4; ++j) cols[j] = p.B.data + (n + std::min(j, cnt - 1)) * p.B.cs;
        dot4(p.K, a, cols, s);
      } else {
        for (int64_t j = 0; j < cnt; ++j) {
          const float* col = p.B.data + (n + j) * p.B.cs;
          double acc = 0.0;
          for (int64_t k = 0; k < p.K; ++k) acc += static_cast<double>(a[k * p.A.cs]) * col[k * p.B.rs];
          s[j] = static_cast<float>(acc);
        }
      }
      for (int64_t j = 0; j < cnt; ++j) {
        float& out = c[(n + j) * p.c_cs];
        out = p.beta == 0.0f ? p.alpha * s[j] : p.alpha * s[j] + p.beta * out;
      }
    }
  }
}

void thin_gemm(const Thin& p, bool parallel) {
  const bool avx2 = use_avx2();
  // Column chunks: long for AXPY rows (the row chunk stays in L1), short for dot products.
  const int64_t chunk = (p.B.cs == 1 && p.c_cs == 1) ? 1024 : 16;
  const int64_t chunks = ceil_div(p.N, chunk);
  const int64_t tasks = p.M * chunks;
  auto body = [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const int64_t m = static_cast<int64_t>(t) / chunks, q = static_cast<int64_t>(t) % chunks;
      thin_block(p, m, m + 1, q * chunk, std::min(p.N, (q + 1) * chunk), avx2);
    }
  };
  if (parallel && tasks > 1) host.parallel_for(static_cast<size_t>(tasks), 1, body);
  else body(0, static_cast<size_t>(tasks));
}

// ------------------------------------------------------- packed driver
bool packed_gemm(int64_t M, int64_t N, int64_t K, float alpha, const Matrix& A, const Matrix& B, float beta,
                 float* C, int64_t ldc, size_t threads) {
  const MicroKernel kernel = micro_kernel();
  const int64_t kc_max = std::min(K, KC);
  const int64_t m_panels = ceil_div(M, MR);
  const int64_t nc_max = std::min(round_up(N, NR), NC);
  const size_t a_floats = static_cast<size_t>(round_up(m_panels * MR * kc_max, 16));
  const size_t b_floats = static_cast<size_t>(nc_max * kc_max);
  auto* buffer = static_cast<float*>(host.api()->alloc((a_floats + b_floats) * sizeof(float), 64));
  if (buffer == nullptr) return false;
  float* packed_a = buffer;
  float* packed_b = buffer + a_floats;
  const bool parallel = threads > 1;

  for (int64_t jc = 0; jc < N; jc += NC) {
    const int64_t nc = std::min(NC, N - jc);
    const int64_t n_panels = ceil_div(nc, NR);
    // Tiles of the C block: rows in MR panels, columns in NR panels, balanced.
    int64_t tm = ceil_div(m_panels, MC / MR), tn = ceil_div(n_panels, NT / NR);
    if (parallel) {
      const int64_t want = static_cast<int64_t>(threads) * 4;
      while (tm * tn < want) {
        const int64_t mp = ceil_div(m_panels, tm), np = ceil_div(n_panels, tn);
        if (np >= 4 && np * NR >= mp * MR) ++tn;
        else if (mp >= 2) ++tm;
        else if (np >= 2) ++tn;
        else break;
      }
    }
    for (int64_t pc = 0; pc < K; pc += KC) {
      const int64_t kc = std::min(KC, K - pc);
      const float beta_block = pc == 0 ? beta : 1.0f;
      auto pack = [&](size_t begin, size_t end) {
        for (size_t idx = begin; idx < end; ++idx) {
          const int64_t p = static_cast<int64_t>(idx);
          if (p < m_panels) {
            pack_a(A, p * MR, std::min(MR, M - p * MR), pc, kc, packed_a + p * MR * kc);
          } else {
            const int64_t q = p - m_panels;
            pack_b(B, jc + q * NR, std::min(NR, nc - q * NR), pc, kc, packed_b + q * NR * kc);
          }
        }
      };
      const size_t pack_items = static_cast<size_t>(m_panels + n_panels);
      if (parallel) host.parallel_for(pack_items, 8, pack);
      else pack(0, pack_items);

      auto compute = [&](size_t begin, size_t end) {
        for (size_t t = begin; t < end; ++t) {
          const int64_t im = static_cast<int64_t>(t) / tn, in = static_cast<int64_t>(t) % tn;
          const int64_t p0 = im * m_panels / tm, p1 = (im + 1) * m_panels / tm;
          const int64_t q0 = in * n_panels / tn, q1 = (in + 1) * n_panels / tn;
          for (int64_t q = q0; q < q1; ++q) {
            const int64_t n0 = q * NR, n = std::min(NR, nc - n0);
            const float* bp = packed_b + q * NR * kc;
            float* c_col = C + jc + n0;
            for (int64_t p = p0; p < p1; ++p) {
              const int64_t m0 = p * MR;
              kernel(kc, packed_a + m0 * kc, bp, c_col + m0 * ldc, ldc, std::min(MR, M - m0), n, alpha, beta_block);
            }
          }
        }
      };
      const size_t tiles = static_cast<size_t>(tm * tn);
      if (parallel && tiles > 1) host.parallel_for(tiles, 1, compute);
      else compute(0, tiles);
    }
  }
  host.api()->free(buffer);
  return true;
}

int selected_isa() {
  int isa = g_isa.load(std::memory_order_relaxed);
  if (isa < 0) {
    const char* forced = et_host_setting(host.api(), host.self(), "ETRT_GEMM_ISA");
    const bool generic = forced != nullptr && std::strcmp(forced, "generic") == 0;
    isa = generic ? kIsaGeneric : ETRT_GEMM_NEON ? kIsaNeon : cpu_supports_avx2_fma() ? kIsaAvx2Fma : kIsaGeneric;
    g_isa.store(isa, std::memory_order_relaxed);
    // Which code a process runs is otherwise invisible (tests read this line).
    std::string line = std::string("SGEMM micro-kernel ") + isa_name(isa);
    host.api()->log(host.self(), ET_LOG_DEBUG, line.c_str());
  }
  return isa;
}

}  // namespace

bool use_avx2() { return selected_isa() == kIsaAvx2Fma; }

const char* isa() { return isa_name(selected_isa()); }

bool sgemm(int64_t M, int64_t N, int64_t K, float alpha, Matrix A, Matrix B, float beta, float* C, int64_t ldc,
           bool parallel) {
  if (M <= 0 || N <= 0) return true;
  if (K <= 0) {
    for (int64_t i = 0; i < M; ++i) {
      float* row = C + i * ldc;
      if (beta == 0.0f) std::fill(row, row + N, 0.0f);
      else for (int64_t j = 0; j < N; ++j) row[j] *= beta;
    }
    return true;
  }
  const size_t threads =
      (parallel && M * N * K >= kParallelThreshold) ? std::max<size_t>(host.api()->num_threads(), 1) : 1;
  if (M <= 2) {
    thin_gemm({M, N, K, alpha, beta, A, B, C, ldc, 1}, threads > 1);
    return true;
  }
  if (N <= 2) {  // C^T = B^T A^T: the same thin problem with the roles swapped
    thin_gemm({N, M, K, alpha, beta, {B.data, B.cs, B.rs}, {A.data, A.cs, A.rs}, C, 1, ldc}, threads > 1);
    return true;
  }
  if (threads == 1 && small_gemm(M, N, K, alpha, A, B, beta, C, ldc, use_avx2())) return true;
  return packed_gemm(M, N, K, alpha, A, B, beta, C, ldc, threads);
}

}  // namespace etrt::kernels::gemm
