// aten::convolution.out (float32, NCHW, 2-D; 1-D convolutions run as 2-D with H = 1).
//
// Three paths:
//   depthwise (one input channel per group): a direct convolution, each output
//     row accumulated in registers over all taps (AVX2 for strides 1 and 2);
//   1x1, stride 1, no padding: the input planes already are the GEMM's B
//     matrix [Cin/g, H*W], so it is one SGEMM per image and group;
//   everything else: im2col over chunks of output rows, then SGEMM
//     out[Cout/g, rows*OW] = weight[Cout/g, Cin/g*kh*kw] * col.
// The bias is written into the output first and the SGEMM accumulates (beta = 1).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "gemm.h"
#include "linalg_common.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ETRT_CONV_X86 1
#else
#define ETRT_CONV_X86 0
#endif

namespace etrt::kernels::linalg {
namespace {

// Floats of one im2col chunk at most (4 MiB); at least one output row.
constexpr int64_t kIm2colBudget = int64_t{1} << 20;

struct Conv {
  int64_t N, Cin, H, W, Cout, kh, kw, OH, OW;
  int64_t sh, sw, ph, pw, dh, dw, groups;
  int64_t cin_g, cout_g;
  const float* in;
  const float* weight;
  const float* bias;  // nullptr when absent
  int64_t bias_stride;
  float* out;
};

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Output columns ow whose input column ow*s - p + k*d lies in [0, W): [lo, hi).
inline void valid_range(int64_t W, int64_t OW, int64_t s, int64_t offset, int64_t* lo, int64_t* hi) {
  // iw = ow * s + offset; need 0 <= iw < W.
  int64_t l = offset >= 0 ? 0 : ceil_div(-offset, s);
  int64_t h = (W - 1 - offset) < 0 ? 0 : (W - 1 - offset) / s + 1;
  *lo = std::min(l, OW);
  *hi = std::max(*lo, std::min(h, OW));
}

// ------------------------------------------------------------- depthwise
// One output point with bounds checks (the portable path).
inline float dw_point(const Conv& c, const float* plane, const float* w, float init, int64_t oh, int64_t ow) {
  float acc = init;
  for (int64_t ky = 0; ky < c.kh; ++ky) {
    const int64_t ih = oh * c.sh - c.ph + ky * c.dh;
    if (ih < 0 || ih >= c.H) continue;
    const float* row = plane + ih * c.W;
    for (int64_t kx = 0; kx < c.kw; ++kx) {
      const int64_t iw = ow * c.sw - c.pw + kx * c.dw;
      if (iw >= 0 && iw < c.W) acc += w[ky * c.kw + kx] * row[iw];
    }
  }
  return acc;
}

void dw_plane_generic(const Conv& c, const float* plane, const float* w, float init, float* out) {
  for (int64_t oh = 0; oh < c.OH; ++oh)
    for (int64_t ow = 0; ow < c.OW; ++ow) out[oh * c.OW + ow] = dw_point(c, plane, w, init, oh, ow);
}

#if ETRT_CONV_X86
// The AVX2 path works on a zero-padded copy of each input plane, so every
// output is computed by the same branch-free vector code. Each padded row
// (W + 2*pw columns) is stored split by column phase modulo the horizontal
// stride s: phase q holds columns q, q + s, q + 2s, ... . An output column ow
// reads column ow*s + kx*dw = phase (kx*dw) % s, position ow + (kx*dw) / s,
// so 8 consecutive outputs always read 8 consecutive floats, whatever s is.
// kSlack zeros after each phase absorb the reads of a row's last vector.
constexpr int64_t kSlack = 16;
// Kernels with more taps than this take the portable path.
constexpr int64_t kMaxTaps = 64;

struct Padded {
  int64_t rows;       // H + 2*ph
  int64_t phase_len;  // ceil((W + 2*pw) / s) + kSlack
  int64_t stride;     // s * phase_len: floats per padded row
};

inline Padded padded_geometry(const Conv& c) {
  const int64_t wp = c.W + 2 * c.pw;
  const int64_t phase_len = (wp + c.sw - 1) / c.sw + kSlack;
  return {c.H + 2 * c.ph, phase_len, c.sw * phase_len};
}

// Offsets of the kh*kw taps within the padded plane, relative to the position
// of an output (row-major over ky, kx like the weights).
struct Taps {
  int64_t count;
  int64_t offset[kMaxTaps];
};

inline Taps make_taps(const Conv& c, const Padded& g) {
  Taps t{};
  t.count = c.kh * c.kw;
  for (int64_t ky = 0; ky < c.kh; ++ky)
    for (int64_t kx = 0; kx < c.kw; ++kx) {
      const int64_t col = kx * c.dw;
      t.offset[ky * c.kw + kx] = ky * c.dh * g.stride + (col % c.sw) * g.phase_len + col / c.sw;
    }
  return t;
}

// Copies a plane into the interior of a padded buffer whose borders are
// already zero (the interior positions are the same for every plane).
__attribute__((target("avx2,fma"))) void pad_plane(const Conv& c, const Padded& g, const float* plane, float* dst) {
  for (int64_t ih = 0; ih < c.H; ++ih) {
    const float* src = plane + ih * c.W;
    float* row = dst + (ih + c.ph) * g.stride;
    if (c.sw == 1) {
      std::memcpy(row + c.pw, src, static_cast<size_t>(c.W) * sizeof(float));
      continue;
    }
    int64_t j = 0;
    if (c.sw == 2) {
      // in[2k] -> column pw + 2k, in[2k + 1] -> column pw + 2k + 1: 8 of each per step.
      float* even = row + (c.pw % 2) * g.phase_len + c.pw / 2;
      float* odd = row + ((c.pw + 1) % 2) * g.phase_len + (c.pw + 1) / 2;
      for (; j + 16 <= c.W; j += 16) {
        const __m256 lo = _mm256_loadu_ps(src + j), hi = _mm256_loadu_ps(src + j + 8);
        const __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));  // l0 l2 h0 h2 | l4 l6 h4 h6
        const __m256 o = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
        const int order = _MM_SHUFFLE(3, 1, 2, 0);
        _mm256_storeu_ps(even + j / 2, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), order)));
        _mm256_storeu_ps(odd + j / 2, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), order)));
      }
    }
    if (c.sw == 2) {
      for (; j < c.W; ++j) {
        const int64_t col = c.pw + j;
        row[(col & 1) * g.phase_len + (col >> 1)] = src[j];
      }
    }
    for (int64_t col = c.pw + j, q = col % c.sw, pos = col / c.sw; j < c.W; ++j) {  // other strides
      row[q * g.phase_len + pos] = src[j];
      if (++q == c.sw) q = 0, ++pos;
    }
  }
}

// R output rows x V vectors of 8 outputs, vector v starting at column
// min(ow + 8v, last) (the last ones may overlap; they store the same values).
// R*V independent accumulators keep both FMA pipes busy across the taps.
template <int R, int V>
__attribute__((target("avx2,fma"))) inline void dw_block(const Padded& g, const float* pin, const float* w,
                                                         const Taps& taps, __m256 vinit, int64_t oh, int64_t sh,
                                                         int64_t ow, int64_t last, float* out, int64_t out_stride) {
  const float* src[R][V];
  int64_t col[V];
  __m256 acc[R][V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) col[v] = std::min(ow + 8 * v, last);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) src[r][v] = pin + (oh + r) * sh * g.stride + col[v], acc[r][v] = vinit;
  for (int64_t t = 0; t < taps.count; ++t) {
    const __m256 wv = _mm256_broadcast_ss(w + t);
    const int64_t off = taps.offset[t];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src[r][v] + off), acc[r][v]);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) _mm256_storeu_ps(out + (oh + r) * out_stride + col[v], acc[r][v]);
}

// Rows [oh, oh + R) of one output plane (OW >= 8): blocks of up to 4 vectors.
template <int R>
__attribute__((target("avx2,fma"))) inline void dw_rows(const Conv& c, const Padded& g, const float* pin,
                                                        const float* w, const Taps& taps, __m256 vinit, int64_t oh,
                                                        float* out) {
  const int64_t last = c.OW - 8;
  int64_t ow = 0;
  for (; ow + 32 <= c.OW; ow += 32) dw_block<R, 4>(g, pin, w, taps, vinit, oh, c.sh, ow, last, out, c.OW);
  switch ((c.OW - ow + 7) / 8) {  // the rest: 1-4 vectors, the last one ending at OW
    case 4: dw_block<R, 4>(g, pin, w, taps, vinit, oh, c.sh, ow, last, out, c.OW); break;
    case 3: dw_block<R, 3>(g, pin, w, taps, vinit, oh, c.sh, ow, last, out, c.OW); break;
    case 2: dw_block<R, 2>(g, pin, w, taps, vinit, oh, c.sh, ow, last, out, c.OW); break;
    case 1: dw_block<R, 1>(g, pin, w, taps, vinit, oh, c.sh, ow, last, out, c.OW); break;
    default: break;
  }
}

__attribute__((target("avx2,fma"))) void dw_plane_avx2(const Conv& c, const Padded& g, const float* pin,
                                                       const float* w, const Taps& taps, float init, float* out) {
  const __m256 vinit = _mm256_set1_ps(init);
  if (c.OW < 8) {  // narrow planes: one vector per row into a scratch tile
    alignas(32) float tile[8];
    for (int64_t oh = 0; oh < c.OH; ++oh) {
      dw_block<1, 1>(g, pin, w, taps, vinit, oh, c.sh, 0, 0, tile, 0);  // out_stride 0: row oh lands in tile
      std::memcpy(out + oh * c.OW, tile, static_cast<size_t>(c.OW) * sizeof(float));
    }
    return;
  }
  int64_t oh = 0;
  for (; oh + 2 <= c.OH; oh += 2) dw_rows<2>(c, g, pin, w, taps, vinit, oh, out);
  for (; oh < c.OH; ++oh) dw_rows<1>(c, g, pin, w, taps, vinit, oh, out);
}
#endif

bool depthwise(const Conv& c) {
#if ETRT_CONV_X86
  const bool avx2 = gemm::use_avx2() && c.kh * c.kw <= kMaxTaps;
#else
  [[maybe_unused]] const bool avx2 = false;
#endif
  const int64_t planes = c.N * c.Cout;
  const int64_t plane_work = c.OH * c.OW * c.kh * c.kw;
  const size_t grain = static_cast<size_t>(std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(plane_work, 1)));
  std::atomic<bool> ok{true};
  host.parallel_for(static_cast<size_t>(planes), grain, [&](size_t begin, size_t end) {
#if ETRT_CONV_X86
    float* pin = nullptr;
    Padded g{};
    Taps taps{};
    if (avx2) {
      g = padded_geometry(c);
      taps = make_taps(c, g);
      const size_t bytes = static_cast<size_t>(g.rows * g.stride) * sizeof(float);
      pin = static_cast<float*>(host.api()->alloc(bytes, 64));
      if (pin == nullptr) {
        ok.store(false);
        return;
      }
      std::memset(pin, 0, bytes);
    }
#endif
    for (size_t p = begin; p < end; ++p) {
      const int64_t n = static_cast<int64_t>(p) / c.Cout, co = static_cast<int64_t>(p) % c.Cout;
      const int64_t ci = co / c.cout_g;  // cin_g == 1: output channel co reads input channel co / cout_g
      const float* plane = c.in + (n * c.Cin + ci) * c.H * c.W;
      const float* w = c.weight + co * c.kh * c.kw;
      const float init = c.bias ? c.bias[co * c.bias_stride] : 0.0f;
      float* out = c.out + (n * c.Cout + co) * c.OH * c.OW;
#if ETRT_CONV_X86
      if (avx2) {
        // With a channel multiplier, consecutive output channels share one padded input plane.
        if (p == begin || co % c.cout_g == 0) pad_plane(c, g, plane, pin);
        dw_plane_avx2(c, g, pin, w, taps, init, out);
        continue;
      }
#endif
      dw_plane_generic(c, plane, w, init, out);
    }
#if ETRT_CONV_X86
    host.api()->free(pin);
#endif
  });
  return ok.load();
}

// ------------------------------------------------------------- GEMM paths
// col[k, (oh - oh0) * OW + ow] for k = (ci, ky, kx) over input channels of one group.
void im2col_rows(const Conv& c, const float* in_g, int64_t oh0, int64_t oh1, float* col, int64_t k_begin,
                 int64_t k_end) {
  const int64_t ncols = (oh1 - oh0) * c.OW;
  for (int64_t k = k_begin; k < k_end; ++k) {
    const int64_t ci = k / (c.kh * c.kw), ky = (k / c.kw) % c.kh, kx = k % c.kw;
    const float* plane = in_g + ci * c.H * c.W;
    const int64_t offset = kx * c.dw - c.pw;
    int64_t lo, hi;
    valid_range(c.W, c.OW, c.sw, offset, &lo, &hi);
    float* dst = col + k * ncols;
    for (int64_t oh = oh0; oh < oh1; ++oh, dst += c.OW) {
      const int64_t ih = oh * c.sh - c.ph + ky * c.dh;
      if (ih < 0 || ih >= c.H) {
        std::fill(dst, dst + c.OW, 0.0f);
        continue;
      }
      const float* src = plane + ih * c.W + offset;
      std::fill(dst, dst + lo, 0.0f);
      if (c.sw == 1) std::memcpy(dst + lo, src + lo, static_cast<size_t>(hi - lo) * sizeof(float));
      else for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * c.sw];
      std::fill(dst + hi, dst + c.OW, 0.0f);
    }
  }
}

// One (image, group): out_g[cout_g, OH*OW] (+)= weight_g * B. `scratch` holds
// the im2col chunk (nullptr for the 1x1 path). Returns false when out of memory.
bool conv_group(const Conv& c, int64_t n, int64_t g, bool parallel, float* scratch, int64_t rows_per_chunk) {
  const int64_t K = c.cin_g * c.kh * c.kw, plane = c.OH * c.OW;
  const float* in_g = c.in + (n * c.Cin + g * c.cin_g) * c.H * c.W;
  const gemm::Matrix a{c.weight + g * c.cout_g * K, K, 1};
  float* out_g = c.out + (n * c.Cout + g * c.cout_g) * plane;
  const float beta = c.bias != nullptr ? 1.0f : 0.0f;
  if (c.bias != nullptr) {
    for (int64_t j = 0; j < c.cout_g; ++j)
      std::fill(out_g + j * plane, out_g + (j + 1) * plane, c.bias[(g * c.cout_g + j) * c.bias_stride]);
  }
  if (scratch == nullptr) {  // 1x1, stride 1, no padding
    return gemm::sgemm(c.cout_g, plane, K, 1.0f, a, {in_g, c.H * c.W, 1}, beta, out_g, plane, parallel);
  }
  for (int64_t oh0 = 0; oh0 < c.OH; oh0 += rows_per_chunk) {
    const int64_t oh1 = std::min(c.OH, oh0 + rows_per_chunk), ncols = (oh1 - oh0) * c.OW;
    if (parallel && K * ncols >= (int64_t{1} << 16)) {
      host.parallel_for(static_cast<size_t>(K), 16, [&](size_t begin, size_t end) {
        im2col_rows(c, in_g, oh0, oh1, scratch, static_cast<int64_t>(begin), static_cast<int64_t>(end));
      });
    } else {
      im2col_rows(c, in_g, oh0, oh1, scratch, 0, K);
    }
    if (!gemm::sgemm(c.cout_g, ncols, K, 1.0f, a, {scratch, ncols, 1}, beta, out_g + oh0 * c.OW, plane, parallel))
      return false;
  }
  return true;
}

bool gemm_conv(const Conv& c) {
  const bool pointwise = c.kh == 1 && c.kw == 1 && c.sh == 1 && c.sw == 1 && c.ph == 0 && c.pw == 0;
  const int64_t K = c.cin_g * c.kh * c.kw;
  const int64_t rows_per_chunk = std::clamp<int64_t>(kIm2colBudget / std::max<int64_t>(K * c.OW, 1), 1, c.OH);
  const size_t scratch_bytes = pointwise ? 0 : static_cast<size_t>(K * rows_per_chunk * c.OW) * sizeof(float);
  const int64_t jobs = c.N * c.groups;
  const int64_t per_job = c.cout_g * c.OH * c.OW * std::max<int64_t>(K, 1);
  const int64_t threads = static_cast<int64_t>(host.api()->num_threads());
  // Many small (image, group) problems: one per task, each with its own scratch.
  // Otherwise one problem at a time, each split across the pool.
  const bool over_jobs = threads > 1 && jobs >= threads && jobs * per_job >= gemm::kParallelThreshold &&
                         (jobs % threads == 0 || jobs >= 4 * threads || per_job < 4 * gemm::kParallelThreshold);
  std::atomic<bool> ok{true};
  if (over_jobs) {
    host.parallel_for(static_cast<size_t>(jobs), 1, [&](size_t begin, size_t end) {
      float* scratch = nullptr;
      if (scratch_bytes > 0 && (scratch = static_cast<float*>(host.api()->alloc(scratch_bytes, 64))) == nullptr) {
        ok.store(false);
        return;
      }
      for (size_t j = begin; j < end && ok.load(std::memory_order_relaxed); ++j)
        if (!conv_group(c, static_cast<int64_t>(j) / c.groups, static_cast<int64_t>(j) % c.groups, false, scratch,
                        rows_per_chunk))
          ok.store(false);
      host.api()->free(scratch);
    });
    return ok.load();
  }
  float* scratch = nullptr;
  if (scratch_bytes > 0 && (scratch = static_cast<float*>(host.api()->alloc(scratch_bytes, 64))) == nullptr)
    return false;
  for (int64_t j = 0; j < jobs && ok.load(); ++j)
    if (!conv_group(c, j / c.groups, j % c.groups, true, scratch, rows_per_chunk)) ok.store(false);
  host.api()->free(scratch);
  return ok.load();
}

// stride / padding / dilation: one value per spatial dimension, or one for all.
et_error* spatial_list(const char* op, IntArrayRef values, const char* name, int64_t spatial, int64_t min_value,
                       int64_t out[2]) {
  std::span<const int64_t> list(values.begin(), values.end());
  if (list.size() != static_cast<size_t>(spatial) && list.size() != 1)
    return invalid(op, std::string(name) + " " + shape_of(list) + " must have 1 or " + std::to_string(spatial) +
                           " values for a " + std::to_string(spatial) + "-D convolution");
  for (int64_t x : list)
    if (x < min_value || x > kMaxWindowParameter)
      return invalid(op, std::string(name) + " " + shape_of(list) + " must be between " + std::to_string(min_value) +
                             " and " + std::to_string(kMaxWindowParameter));
  out[0] = list[0];
  out[1] = list[list.size() - 1];
  return nullptr;
}

}  // namespace

// convolution.out(input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups, *, out)
// -> args [input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, out, out]
et_error* convolution_out(Call call, const Tensor& input, const Tensor& weight, const Tensor* bias,
                          IntArrayRef stride_arg, IntArrayRef padding_arg, IntArrayRef dilation_arg, bool transposed,
                          IntArrayRef output_padding_arg, int64_t groups, Tensor& out_arg) {
  const char* op = call.op;
  const et_tensor *x = &input, *w = &weight;
  et_tensor* out = &out_arg;
  std::span<const int64_t> output_padding(output_padding_arg.begin(), output_padding_arg.end());
  if (transposed)
    return unsupported(op, "transposed convolution is not supported (input " + shape_string(*x) + ", weight " +
                               shape_string(*w) + ")");
  for (auto [t, name] : {std::pair{x, "input"}, std::pair{w, "weight"}}) {
    if (et_error* e = expect_dtype(op, *t, name)) return e;
    if (et_error* e = expect_row_major(op, *t, name)) return e;
    if (et_error* e = expect_data(op, *t, name)) return e;
  }
  if (x->rank != 3 && x->rank != 4)
    return unsupported(op, "input " + shape_string(*x) + " must be 3-D (N, C, L) or 4-D (N, C, H, W)");
  if (w->rank != x->rank)
    return invalid(op, "weight " + shape_string(*w) + " must have the rank of input " + shape_string(*x));
  const int64_t spatial = x->rank - 2;
  int64_t stride[2], padding[2], dilation[2];
  if (et_error* e = spatial_list(op, stride_arg, "stride", spatial, 1, stride)) return e;
  if (et_error* e = spatial_list(op, padding_arg, "padding", spatial, 0, padding)) return e;
  if (et_error* e = spatial_list(op, dilation_arg, "dilation", spatial, 1, dilation)) return e;
  if (groups < 1) return invalid(op, "groups must be >= 1, got " + std::to_string(groups));

  Conv c{};
  c.N = x->sizes[0], c.Cin = x->sizes[1], c.Cout = w->sizes[0], c.groups = groups;
  if (spatial == 2) {
    c.H = x->sizes[2], c.W = x->sizes[3], c.kh = w->sizes[2], c.kw = w->sizes[3];
    c.sh = stride[0], c.sw = stride[1], c.ph = padding[0], c.pw = padding[1], c.dh = dilation[0], c.dw = dilation[1];
  } else {  // 1-D: H = 1 and a 1-tall kernel
    c.H = 1, c.W = x->sizes[2], c.kh = 1, c.kw = w->sizes[2];
    c.sh = 1, c.sw = stride[0], c.ph = 0, c.pw = padding[0], c.dh = 1, c.dw = dilation[0];
  }
  if (c.Cin % groups != 0 || c.Cout % groups != 0)
    return invalid(op, "input channels " + std::to_string(c.Cin) + " and output channels " + std::to_string(c.Cout) +
                           " must both be divisible by groups " + std::to_string(groups));
  c.cin_g = c.Cin / groups, c.cout_g = c.Cout / groups;
  if (w->sizes[1] != c.cin_g)
    return invalid(op, "weight " + shape_string(*w) + " expects " + std::to_string(w->sizes[1] * groups) +
                           " input channels, input " + shape_string(*x) + " has " + std::to_string(c.Cin) +
                           " (groups " + std::to_string(groups) + ")");
  if (bias != nullptr) {
    if (et_error* e = expect_dtype(op, *bias, "bias")) return e;
    if (et_error* e = expect_data(op, *bias, "bias")) return e;
    if (bias->rank != 1 || bias->sizes[0] != c.Cout)
      return invalid(op, "bias " + shape_string(*bias) + " must have shape [" + std::to_string(c.Cout) + "]");
  }
  const int64_t eff_h = c.dh * (c.kh - 1) + 1, eff_w = c.dw * (c.kw - 1) + 1;
  if (c.kh < 1 || c.kw < 1 || c.H + 2 * c.ph < eff_h || c.W + 2 * c.pw < eff_w)
    return invalid(op, "kernel " + shape_string(*w) + " (dilated to " + std::to_string(eff_h) + "x" +
                           std::to_string(eff_w) + ") is larger than the padded input " + shape_string(*x));
  c.OH = (c.H + 2 * c.ph - eff_h) / c.sh + 1;
  c.OW = (c.W + 2 * c.pw - eff_w) / c.sw + 1;
  int64_t shape[4] = {c.N, c.Cout, c.OH, c.OW};
  if (spatial == 1) shape[2] = c.OW;
  if (et_error* e = resize(op, *out, {shape, static_cast<size_t>(x->rank)})) return e;
  if (et_error* e = expect_dtype(op, *out, "out")) return e;
  if (et_error* e = expect_row_major(op, *out, "out")) return e;
  if (et_error* e = expect_data(op, *out, "out")) return e;
  if (numel(*out) == 0) return nullptr;

  c.in = static_cast<const float*>(x->data);
  c.weight = static_cast<const float*>(w->data);
  c.bias = bias != nullptr ? static_cast<const float*>(bias->data) : nullptr;
  c.bias_stride = bias != nullptr ? bias->strides[0] : 0;
  c.out = static_cast<float*>(out->data);
  if (c.cin_g == 1 && c.Cin > 0) {
    if (!depthwise(c)) return fail(ET_ERR_OUT_OF_MEMORY, op, "cannot allocate the padded input planes");
    return nullptr;
  }
  if (!gemm_conv(c)) return fail(ET_ERR_OUT_OF_MEMORY, op, "cannot allocate the im2col and packing buffers");
  return nullptr;
}

}  // namespace etrt::kernels::linalg

namespace etrt::kernels {

std::span<const KernelDef> convolution_kernels() {
  using namespace linalg;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_CONVOLUTION
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
