// aten::max_pool2d_with_indices.out, aten::avg_pool2d.out and
// aten::_adaptive_avg_pool2d.out: float32, [N, C, H, W] or [C, H, W] in the
// default dim order, planes split across the host pool. Output sizes,
// window clipping, divisors and index conventions follow PyTorch's CPU kernels.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "linalg_common.h"

namespace etrt::kernels::linalg {
namespace {

inline int64_t ceil_div_i(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Pool {
  int64_t planes, H, W, OH, OW;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};

// One or two values (PyTorch's int[2] arguments); `empty_default` is used for an empty list.
et_error* pair(const char* op, IntArrayRef values, const char* name, int64_t min_value, const int64_t* empty_default,
               int64_t out[2]) {
  std::span<const int64_t> list(values.begin(), values.end());
  if (list.empty() && empty_default != nullptr) {
    out[0] = empty_default[0], out[1] = empty_default[1];
    return nullptr;
  }
  if (list.size() != 1 && list.size() != 2)
    return invalid(op, std::string(name) + " " + shape_of(list) + " must have 1 or 2 values");
  out[0] = list[0];
  out[1] = list[list.size() - 1];
  for (int64_t x : {out[0], out[1]})
    if (x < min_value || x > kMaxWindowParameter)
      return invalid(op, std::string(name) + " " + shape_of(list) + " must be between " + std::to_string(min_value) +
                             " and " + std::to_string(kMaxWindowParameter));
  return nullptr;
}

// PyTorch's pooling_output_shape.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t numerator = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // floor division (numerator may be negative)
  int64_t out = (numerator >= 0 ? numerator / stride : -((-numerator + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Input [N, C, H, W] or [C, H, W]: checks and the plane geometry.
et_error* check_input(const char* op, const et_tensor& x, Pool* p) {
  if (et_error* e = expect_dtype(op, x, "self")) return e;
  if (x.rank != 3 && x.rank != 4)
    return invalid(op, "self " + shape_string(x) + " must be 3-D (C, H, W) or 4-D (N, C, H, W)");
  if (et_error* e = expect_row_major(op, x, "self")) return e;
  if (et_error* e = expect_data(op, x, "self")) return e;
  p->planes = 1;
  for (int32_t d = 0; d + 2 < x.rank; ++d) p->planes *= x.sizes[d];
  p->H = x.sizes[x.rank - 2];
  p->W = x.sizes[x.rank - 1];
  return nullptr;
}

// Windows of a kernel/stride/padding/dilation pool: sizes and checks shared by max and avg pooling.
et_error* plan_window(const char* op, const et_tensor& x, Pool* p, bool ceil_mode) {
  if (p->ph > p->kh / 2 || p->pw > p->kw / 2)
    return invalid(op, "padding [" + std::to_string(p->ph) + ", " + std::to_string(p->pw) +
                           "] must be at most half of kernel_size [" + std::to_string(p->kh) + ", " +
                           std::to_string(p->kw) + "]");
  p->OH = pooled_size(p->H, p->kh, p->ph, p->sh, p->dh, ceil_mode);
  p->OW = pooled_size(p->W, p->kw, p->pw, p->sw, p->dw, ceil_mode);
  if (p->OH < 1 || p->OW < 1 || p->H < 1 || p->W < 1)
    return invalid(op, "self " + shape_string(x) + " is too small for kernel_size [" + std::to_string(p->kh) + ", " +
                           std::to_string(p->kw) + "] (output would be " + std::to_string(p->OH) + "x" +
                           std::to_string(p->OW) + ")");
  return nullptr;
}

void out_shape(const et_tensor& x, int64_t oh, int64_t ow, int64_t shape[4]) {
  for (int32_t d = 0; d + 2 < x.rank; ++d) shape[d] = x.sizes[d];
  shape[x.rank - 2] = oh;
  shape[x.rank - 1] = ow;
}

et_error* check_output(const char* op, et_tensor& out, const char* name, int32_t dtype) {
  if (et_error* e = expect_dtype(op, out, name, dtype)) return e;
  if (et_error* e = expect_row_major(op, out, name)) return e;
  return expect_data(op, out, name);
}

template <typename Fn>
void for_planes(const Pool& p, Fn&& fn) {
  const int64_t work = std::max<int64_t>(1, p.OH * p.OW * p.kh * p.kw);
  const size_t grain = static_cast<size_t>(std::max<int64_t>(1, (int64_t{1} << 15) / work));
  host.parallel_for(static_cast<size_t>(p.planes), grain, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) fn(static_cast<int64_t>(i));
  });
}

}  // namespace

// max_pool2d_with_indices.out(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False, *, out, indices)
// -> args [self, kernel_size, stride, padding, dilation, ceil_mode, out, indices, (out, indices)]
et_error* max_pool2d_with_indices_out(Call call, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                      IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, Tensor& out_arg,
                                      Tensor& indices_arg) {
  const char* op = call.op;
  const et_tensor* x = &self;
  et_tensor *out = &out_arg, *indices = &indices_arg;
  Pool p{};
  int64_t k[2], s[2], pad[2], dil[2];
  if (et_error* e = pair(op, kernel_size, "kernel_size", 1, nullptr, k)) return e;
  if (et_error* e = pair(op, stride, "stride", 1, k, s)) return e;
  if (et_error* e = pair(op, padding, "padding", 0, nullptr, pad)) return e;
  if (et_error* e = pair(op, dilation, "dilation", 1, nullptr, dil)) return e;
  if (et_error* e = check_input(op, *x, &p)) return e;
  p.kh = k[0], p.kw = k[1], p.sh = s[0], p.sw = s[1], p.ph = pad[0], p.pw = pad[1], p.dh = dil[0], p.dw = dil[1];
  if (et_error* e = plan_window(op, *x, &p, ceil_mode)) return e;
  int64_t shape[4];
  out_shape(*x, p.OH, p.OW, shape);
  if (et_error* e = resize(op, *out, {shape, static_cast<size_t>(x->rank)}, "out")) return e;
  if (et_error* e = resize(op, *indices, {shape, static_cast<size_t>(x->rank)}, "indices")) return e;
  if (et_error* e = check_output(op, *out, "out", ET_DTYPE_FLOAT32)) return e;
  if (et_error* e = check_output(op, *indices, "indices", ET_DTYPE_INT64)) return e;

  const auto* in = static_cast<const float*>(x->data);
  auto* o = static_cast<float*>(out->data);
  auto* idx = static_cast<int64_t*>(indices->data);
  for_planes(p, [&](int64_t plane) {
    const float* src = in + plane * p.H * p.W;
    float* dst = o + plane * p.OH * p.OW;
    int64_t* di = idx + plane * p.OH * p.OW;
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      int64_t h0 = oh * p.sh - p.ph;
      const int64_t h1 = std::min(h0 + (p.kh - 1) * p.dh + 1, p.H);
      while (h0 < 0) h0 += p.dh;
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        int64_t w0 = ow * p.sw - p.pw;
        const int64_t w1 = std::min(w0 + (p.kw - 1) * p.dw + 1, p.W);
        while (w0 < 0) w0 += p.dw;
        float best = -std::numeric_limits<float>::infinity();
        int64_t best_index = h0 * p.W + w0;
        for (int64_t ih = h0; ih < h1; ih += p.dh) {
          for (int64_t iw = w0; iw < w1; iw += p.dw) {
            const float v = src[ih * p.W + iw];
            if (v > best || std::isnan(v)) {  // NaN wins, ties keep the first (PyTorch)
              best = v;
              best_index = ih * p.W + iw;
            }
          }
        }
        dst[oh * p.OW + ow] = best;
        di[oh * p.OW + ow] = best_index;
      }
    }
  });
  return nullptr;
}

// avg_pool2d.out(self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True,
//                divisor_override=None, *, out) -> args [..., divisor_override, out, out]
et_error* avg_pool2d_out(Call call, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                         bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor, Tensor& out_arg) {
  const char* op = call.op;
  const et_tensor* x = &self;
  et_tensor* out = &out_arg;
  const int64_t divisor_override = divisor.value_or(0);
  if (divisor && *divisor == 0) return invalid(op, "divisor_override must not be zero");
  Pool p{};
  int64_t k[2], s[2], pad[2];
  if (et_error* e = pair(op, kernel_size, "kernel_size", 1, nullptr, k)) return e;
  if (et_error* e = pair(op, stride, "stride", 1, k, s)) return e;
  if (et_error* e = pair(op, padding, "padding", 0, nullptr, pad)) return e;
  if (et_error* e = check_input(op, *x, &p)) return e;
  p.kh = k[0], p.kw = k[1], p.sh = s[0], p.sw = s[1], p.ph = pad[0], p.pw = pad[1], p.dh = 1, p.dw = 1;
  if (et_error* e = plan_window(op, *x, &p, ceil_mode)) return e;
  int64_t shape[4];
  out_shape(*x, p.OH, p.OW, shape);
  if (et_error* e = resize(op, *out, {shape, static_cast<size_t>(x->rank)})) return e;
  if (et_error* e = check_output(op, *out, "out", ET_DTYPE_FLOAT32)) return e;

  const auto* in = static_cast<const float*>(x->data);
  auto* o = static_cast<float*>(out->data);
  for_planes(p, [&](int64_t plane) {
    const float* src = in + plane * p.H * p.W;
    float* dst = o + plane * p.OH * p.OW;
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      int64_t h0 = oh * p.sh - p.ph, h1 = std::min(h0 + p.kh, p.H + p.ph);
      const int64_t pool_h = h1 - h0;
      h0 = std::max<int64_t>(h0, 0), h1 = std::min(h1, p.H);
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        int64_t w0 = ow * p.sw - p.pw, w1 = std::min(w0 + p.kw, p.W + p.pw);
        const int64_t pool_size = pool_h * (w1 - w0);
        w0 = std::max<int64_t>(w0, 0), w1 = std::min(w1, p.W);
        if (h0 >= h1 || w0 >= w1) {
          dst[oh * p.OW + ow] = 0.0f;
          continue;
        }
        float sum = 0.0f;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += src[ih * p.W + iw];
        const int64_t divisor =
            divisor_override != 0 ? divisor_override : count_include_pad ? pool_size : (h1 - h0) * (w1 - w0);
        dst[oh * p.OW + ow] = sum / static_cast<float>(divisor);
      }
    }
  });
  return nullptr;
}

// _adaptive_avg_pool2d.out(self, output_size, *, out) -> args [self, output_size, out, out]
et_error* adaptive_avg_pool2d_out(Call call, const Tensor& self, IntArrayRef output_size, Tensor& out_arg) {
  const char* op = call.op;
  const et_tensor* x = &self;
  et_tensor* out = &out_arg;
  int64_t size[2];
  Pool p{};
  if (et_error* e = pair(op, output_size, "output_size", 0, nullptr, size)) return e;
  if (et_error* e = check_input(op, *x, &p)) return e;
  for (int32_t d = 1; d < x->rank; ++d)
    if (x->sizes[d] == 0)
      return invalid(op, "self " + shape_string(*x) + " must be non-empty in every dimension but the batch");
  p.OH = size[0], p.OW = size[1], p.kh = ceil_div_i(p.H, std::max<int64_t>(p.OH, 1)) + 1,
  p.kw = ceil_div_i(p.W, std::max<int64_t>(p.OW, 1)) + 1;
  int64_t shape[4];
  out_shape(*x, p.OH, p.OW, shape);
  if (et_error* e = resize(op, *out, {shape, static_cast<size_t>(x->rank)})) return e;
  if (et_error* e = check_output(op, *out, "out", ET_DTYPE_FLOAT32)) return e;
  if (numel(*out) == 0) return nullptr;

  const auto* in = static_cast<const float*>(x->data);
  auto* o = static_cast<float*>(out->data);
  for_planes(p, [&](int64_t plane) {
    const float* src = in + plane * p.H * p.W;
    float* dst = o + plane * p.OH * p.OW;
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      const int64_t h0 = oh * p.H / p.OH, h1 = ((oh + 1) * p.H + p.OH - 1) / p.OH;
      for (int64_t ow = 0; ow < p.OW; ++ow) {
        const int64_t w0 = ow * p.W / p.OW, w1 = ((ow + 1) * p.W + p.OW - 1) / p.OW;
        float sum = 0.0f;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += src[ih * p.W + iw];
        dst[oh * p.OW + ow] = sum / static_cast<float>((h1 - h0) * (w1 - w0));
      }
    }
  });
  return nullptr;
}

}  // namespace etrt::kernels::linalg

namespace etrt::kernels {

std::span<const KernelDef> pooling_kernels() {
  using namespace linalg;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_POOLING
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
