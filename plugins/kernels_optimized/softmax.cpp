// _softmax.out and _log_softmax.out over any dim, numerically stable (the
// row maximum is subtracted before exp). The softmax dim splits the tensor
// into [outer, D, inner]: with inner == 1 rows are processed independently in
// parallel; otherwise blocks of columns are processed with vectorised loops
// across the inner dim. float32 exponentials use the AVX2 vector math
// (plugins/common/vector_math.h) when the CPU has AVX2 and FMA.

#include "pointwise_common.h"
#include "prepared_plan.h"
#include "vector_math.h"

namespace etrt::kernels::pw {
namespace {

constexpr int kLanes = 8;

// Written as independent lanes (unrolled) so GCC vectorises the max without
// -ffast-math; NaN is skipped here and propagates through exp later.
template <typename T>
inline T row_max(const T* __restrict x, int64_t n) {
  T lanes[kLanes];
  for (int j = 0; j < kLanes; ++j) lanes[j] = -std::numeric_limits<T>::infinity();
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
#pragma GCC unroll 8
    for (int j = 0; j < kLanes; ++j) {
      const T v = x[k + j];
      lanes[j] = v > lanes[j] ? v : lanes[j];
    }
  }
  T m = lanes[0];
  for (int j = 1; j < kLanes; ++j) m = lanes[j] > m ? lanes[j] : m;
  for (; k < n; ++k) m = x[k] > m ? x[k] : m;
  return m;
}

// y = exp(x - m), x == y allowed.
template <typename T>
inline void exp_shifted(const T* x, T* y, int64_t n, T m) {
  if constexpr (std::is_same_v<T, float>) {
    if (vm::has_avx2_fma()) {
      for (int64_t k = 0; k < n; ++k) y[k] = x[k] - m;
      vm::vexp(y, y, static_cast<size_t>(n));
      return;
    }
  }
  for (int64_t k = 0; k < n; ++k) y[k] = exp_fast(x[k] - m);
}

// y = exp(x - m) (vectorised), then the sum of y in double lanes.
template <typename T>
inline double exp_sum(const T* __restrict x, T* __restrict y, int64_t n, T m) {
  exp_shifted(x, y, n, m);
  double lanes[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int j = 0; j < kLanes; ++j) lanes[j] += static_cast<double>(y[k + j]);
  double s = 0;
  for (int j = 0; j < kLanes; ++j) s += lanes[j];
  for (; k < n; ++k) s += static_cast<double>(y[k]);
  return s;
}

// The same sum without storing (when the output aliases the input).
template <typename T>
inline double exp_sum_only(const T* x, int64_t n, T m) {
  constexpr int64_t kBlock = 256;
  T block[kBlock];
  double s = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t w = std::min(kBlock, n - b);
    exp_shifted(x + b, block, w, m);
    for (int64_t k = 0; k < w; ++k) s += static_cast<double>(block[k]);
  }
  return s;
}

// Not inlined: compiled on their own these loops vectorise (inlined into the
// kernel's body on the single-task path they stayed scalar; see loop_range).
template <typename T, bool kLog>
[[gnu::noinline]] void softmax_row(const T* x, T* y, int64_t n) {
  const T m = row_max(x, n);
  if constexpr (kLog) {
    // y is scratch for the exponentials unless it aliases x.
    const double s = x == y ? exp_sum_only(x, n, m) : exp_sum(x, y, n, m);
    const T shift = static_cast<T>(static_cast<double>(m) + std::log(s));
    for (int64_t k = 0; k < n; ++k) y[k] = x[k] - shift;
  } else {
    const double s = x == y ? exp_sum_only(x, n, m) : exp_sum(x, y, n, m);
    const T inv = static_cast<T>(1.0 / s);
    if (x == y) exp_shifted(x, y, n, m);
    for (int64_t k = 0; k < n; ++k) y[k] *= inv;
  }
}

#if ETRT_VM_X86
// The maximum of m's 8 lanes, in every lane.
ETRT_VM_TARGET __m256 max_in_every_lane(__m256 m) {
  m = _mm256_max_ps(m, _mm256_permute2f128_ps(m, m, 1));
  m = _mm256_max_ps(m, _mm256_permute_ps(m, 0x4e));
  return _mm256_max_ps(m, _mm256_permute_ps(m, 0xb1));
}

// sum + the 8 floats of e, widened to double.
ETRT_VM_TARGET __m256d add_widened(__m256d sum, __m256 e) {
  return _mm256_add_pd(
      sum, _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(e)), _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1))));
}

// The sum of the 4 double lanes.
ETRT_VM_TARGET double lane_total(__m256d sum) {
  const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(sum), _mm256_extractf128_pd(sum, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
}

// Rows of at most 8 floats, one vector each: the passes of softmax_rows_avx2 without their loops (on 64 rows
// of 8 the loop set-up alone was ~50 instructions a row). Same semantics.
template <bool kLog>
__attribute__((target("avx2,fma"))) void softmax_short_rows(const float* x, float* y, int64_t rows, int64_t D) {
  namespace v = vm::avx2;
  const __m256i mask = v::tail_mask(static_cast<size_t>(D));
  const __m256 ninf = v::splat(-std::numeric_limits<float>::infinity());
  for (int64_t r = 0; r < rows; ++r) {
    const __m256 xv = v::select(_mm256_castsi256_ps(mask), _mm256_maskload_ps(x + r * D, mask), ninf);
    __m256 m = v::select(v::is_nan(xv), ninf, xv);
    m = max_in_every_lane(m);
    const __m256 e = v::exp(_mm256_sub_ps(xv, m));
    const double s = lane_total(add_widened(_mm256_setzero_pd(), e));
    __m256 out;
    if constexpr (kLog) {
      const float shift = static_cast<float>(static_cast<double>(_mm256_cvtss_f32(m)) + std::log(s));
      out = _mm256_sub_ps(xv, v::splat(shift));
    } else {
      out = _mm256_mul_ps(e, v::splat(static_cast<float>(1.0 / s)));
    }
    _mm256_maskstore_ps(y + r * D, mask, out);
  }
}

// float32 rows on AVX2 lanes, all rows in one call: the row maximum (NaN skipped), exp(x - max) with its sum in
// double lanes, then the scaling, each pass over 8 lanes with a masked tail. Short rows (attention over 8 tokens:
// 64 rows of 8) spent ~220 instructions a row in softmax_row, mostly per-row set-up and scalar passes.
template <bool kLog>
__attribute__((target("avx2,fma"))) void softmax_rows_avx2(const float* x, float* y, int64_t rows, int64_t D) {
  namespace v = vm::avx2;
  const __m256 ninf = v::splat(-std::numeric_limits<float>::infinity());
  const int64_t full = D & ~int64_t{7};
  const bool has_tail = full < D;
  const __m256i tail = v::tail_mask(static_cast<size_t>(D - full));
  const __m256 tail_ps = _mm256_castsi256_ps(tail);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * D;
    float* yr = y + r * D;
    __m256 m = ninf;
    for (int64_t k = 0; k < full; k += 8) {
      const __m256 xv = _mm256_loadu_ps(xr + k);
      m = _mm256_max_ps(v::select(v::is_nan(xv), ninf, xv), m);
    }
    __m256 xt = ninf;  // the tail, padded with -inf (exp gives 0 unless the maximum is -inf, when the row is NaN)
    if (has_tail) {
      xt = v::select(tail_ps, _mm256_maskload_ps(xr + full, tail), ninf);
      m = _mm256_max_ps(v::select(v::is_nan(xt), ninf, xt), m);
    }
    m = max_in_every_lane(m);
    __m256d sum = _mm256_setzero_pd();
    for (int64_t k = 0; k < full; k += 8) {
      const __m256 e = v::exp(_mm256_sub_ps(_mm256_loadu_ps(xr + k), m));
      if constexpr (!kLog) _mm256_storeu_ps(yr + k, e);
      sum = add_widened(sum, e);
    }
    if (has_tail) {
      const __m256 e = v::exp(_mm256_sub_ps(xt, m));
      if constexpr (!kLog) _mm256_maskstore_ps(yr + full, tail, e);
      sum = add_widened(sum, e);
    }
    const double s = lane_total(sum);
    if constexpr (kLog) {
      const __m256 shift = v::splat(static_cast<float>(static_cast<double>(_mm256_cvtss_f32(m)) + std::log(s)));
      for (int64_t k = 0; k < full; k += 8) _mm256_storeu_ps(yr + k, _mm256_sub_ps(_mm256_loadu_ps(xr + k), shift));
      if (has_tail) _mm256_maskstore_ps(yr + full, tail, _mm256_sub_ps(xt, shift));
    } else {
      const __m256 inv = v::splat(static_cast<float>(1.0 / s));
      for (int64_t k = 0; k < full; k += 8) _mm256_storeu_ps(yr + k, _mm256_mul_ps(_mm256_loadu_ps(yr + k), inv));
      if (has_tail) _mm256_maskstore_ps(yr + full, tail, _mm256_mul_ps(_mm256_maskload_ps(yr + full, tail), inv));
    }
  }
}
#endif

// Columns [j0, j1) of one [D, inner] block.
template <typename T, bool kLog>
[[gnu::noinline]] void softmax_columns(const T* x, T* y, int64_t D, int64_t inner, int64_t j0, int64_t j1) {
  constexpr int64_t kBlock = 256;
  T m[kBlock], s[kBlock], e[kBlock];
  for (int64_t b0 = j0; b0 < j1; b0 += kBlock) {
    const int64_t w = std::min(kBlock, j1 - b0);
    for (int64_t j = 0; j < w; ++j) m[j] = -std::numeric_limits<T>::infinity(), s[j] = 0;
    for (int64_t d = 0; d < D; ++d) {
      const T* xr = x + d * inner + b0;
      for (int64_t j = 0; j < w; ++j) m[j] = xr[j] > m[j] ? xr[j] : m[j];
    }
    for (int64_t d = 0; d < D; ++d) {
      const T* xr = x + d * inner + b0;
      T* yr = y + d * inner + b0;
      for (int64_t j = 0; j < w; ++j) e[j] = xr[j] - m[j];
      exp_shifted(e, e, w, T(0));
      for (int64_t j = 0; j < w; ++j) {
        if constexpr (!kLog) yr[j] = e[j];
        s[j] += e[j];
      }
    }
    if constexpr (kLog) {
      for (int64_t j = 0; j < w; ++j) m[j] += std::log(s[j]);
      for (int64_t d = 0; d < D; ++d) {
        const T* xr = x + d * inner + b0;
        T* yr = y + d * inner + b0;
        for (int64_t j = 0; j < w; ++j) yr[j] = xr[j] - m[j];
      }
    } else {
      for (int64_t j = 0; j < w; ++j) s[j] = T(1) / s[j];
      for (int64_t d = 0; d < D; ++d) {
        T* yr = y + d * inner + b0;
        for (int64_t j = 0; j < w; ++j) yr[j] *= s[j];
      }
    }
  }
}

template <typename T, bool kLog>
void softmax(const T* x, T* y, int64_t outer, int64_t D, int64_t inner) {
  if (inner == 1) {
#if ETRT_VM_X86
    if constexpr (std::is_same_v<T, float>) {
      if (vm::has_avx2_fma()) {
        const size_t row_grain = std::max<size_t>(1, kGrain / static_cast<size_t>(D));
        parallel(static_cast<size_t>(outer), row_grain, [&](size_t b, size_t e) {
          if (D <= 8) softmax_short_rows<kLog>(x + b * D, y + b * D, static_cast<int64_t>(e - b), D);
          else softmax_rows_avx2<kLog>(x + b * D, y + b * D, static_cast<int64_t>(e - b), D);
        });
        return;
      }
    }
#endif
    size_t grain = std::max<size_t>(1, kGrain / static_cast<size_t>(std::max<int64_t>(D, 1)));
    auto rows = [&](size_t b, size_t e) {
      for (size_t r = b; r < e; ++r) softmax_row<T, kLog>(x + r * D, y + r * D, D);
    };
    parallel(static_cast<size_t>(outer), grain, rows);
    return;
  }
  constexpr int64_t kCols = 256;
  const int64_t col_blocks = (inner + kCols - 1) / kCols;
  const size_t units = static_cast<size_t>(outer * col_blocks);
  size_t grain = std::max<size_t>(1, kGrain / static_cast<size_t>(std::max<int64_t>(D * std::min(inner, kCols), 1)));
  auto body = [&](size_t b, size_t e) {
    for (size_t u = b; u < e; ++u) {
      const int64_t o = static_cast<int64_t>(u) / col_blocks, cb = static_cast<int64_t>(u) % col_blocks;
      const int64_t j0 = cb * kCols, j1 = std::min(inner, j0 + kCols);
      softmax_columns<T, kLog>(x + o * D * inner, y + o * D * inner, D, inner, j0, j1);
    }
  };
  parallel(units, grain, body);
}

template <bool kLog>
et_error* softmax_generic(const char* op, const Tensor& self_arg, int64_t dim, bool half_to_float, Tensor& out_arg) {
  const et_tensor* self = &self_arg;
  et_tensor* out = &out_arg;
  ETRT_TRY(check_data(op, *self, "self"));
  ETRT_TRY(check_float(op, *self, "self"));
  if (half_to_float)
    return invalid(op, std::string("half_to_float=True is only valid for float16 input, got ") +
                           dtype_name(self->dtype));
  if (out->dtype != self->dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out->dtype) + " must match the input dtype " +
                           dtype_name(self->dtype));
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self->rank, &d));
  ETRT_TRY(resize_out(op, *out, self->sizes, self->rank));
  if (etrt::plugin::numel(*out) == 0) return nullptr;
  ETRT_TRY(check_data(op, *out, "out"));
  int64_t outer = 1, D = 1, inner = 1;
  for (int64_t i = 0; i < self->rank; ++i) {
    if (i < d) outer *= self->sizes[i];
    else if (i == d) D = self->sizes[i];
    else inner *= self->sizes[i];
  }
  Scratch scratch;
  View x;
  if (!contiguous_as(view_of(*self), self->dtype, scratch, &x)) return out_of_memory(op);
  OutputBuffer ob;
  if (!ob.init(*out, out->dtype, true)) return out_of_memory(op);
  if (self->dtype == ET_DTYPE_FLOAT32)
    softmax<float, kLog>(reinterpret_cast<const float*>(x.data), reinterpret_cast<float*>(ob.view().data), outer, D,
                         inner);
  else
    softmax<double, kLog>(reinterpret_cast<const double*>(x.data), reinterpret_cast<double*>(ob.view().data), outer,
                          D, inner);
  ob.finish();
  return nullptr;
}

// Prepared float32 softmax of contiguous tensors (prepared_plan.h). The plan keeps the shape's [outer, D, inner]
// split as its loop's sizes -- the loop is not iterated, softmax() walks the rows itself -- and the dim as its list,
// so a call checks the operands and the dim and runs softmax().
bool plan_float_softmax(LoopPlan& plan, const et_tensor& self, int64_t dim, const et_tensor& out) {
  plan.clear();
  if (self.dtype != ET_DTYPE_FLOAT32 || out.dtype != ET_DTYPE_FLOAT32) return false;
  if (!same_plannable_shape(self, out) || !etrt::plugin::is_contiguous(self) ||
      !etrt::plugin::is_contiguous(out) || etrt::plugin::numel(self) == 0)
    return true;
  int64_t d = 0;
  if (et_error* error = normalize_dim("", dim, self.rank, &d)) {  // the generic path reports it
    host.api()->error_destroy(error);
    return true;
  }
  Loop L;
  L.rank = 3;
  L.nops = 2;
  L.numel = static_cast<int64_t>(etrt::plugin::numel(self));
  L.sizes[0] = L.sizes[1] = L.sizes[2] = 1;
  for (int64_t i = 0; i < self.rank; ++i) L.sizes[i < d ? 0 : i == d ? 1 : 2] *= self.sizes[i];
  plan.set({&out, &self}, L, IntArrayRef{&dim, 1});
  return true;
}

template <bool kLog>
et_error* softmax_kernel(Call call, const Tensor& self, int64_t dim, bool half_to_float, Tensor& out) {
  if (LoopPlan* plan = plan_of(call))
    if (!half_to_float)
      if (const Loop* L = plan->bind({&out, &self}, IntArrayRef{&dim, 1})) {
        softmax<float, kLog>(reinterpret_cast<const float*>(L->data[1]), reinterpret_cast<float*>(L->data[0]),
                             L->sizes[0], L->sizes[1], L->sizes[2]);
        return nullptr;
      }
  return generic_then_replan(
      call, [&] { return softmax_generic<kLog>(call.op, self, dim, half_to_float, out); },
      [&](LoopPlan& plan) { return plan_float_softmax(plan, self, dim, out); });
}

et_error* prepare_softmax(Prepare& prepare, const Tensor& self, int64_t dim, bool, Tensor& out) {
  return prepare_plan(prepare, [&](LoopPlan& plan) { return plan_float_softmax(plan, self, dim, out); });
}

}  // namespace

}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> softmax_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_SOFTMAX
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
