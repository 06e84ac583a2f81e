// Plugin code for the image nodes Debian's XNNPACK runs (transposed convolution, PReLU, bilinear resize):
// the reference path for runs with NaN or infinities, and the transposed convolutions XNNPACK cannot
// express (an output adjustment not smaller than the stride, which PyTorch allows under a larger dilation).
// NHWC throughout, parallel over output pixels on the leased pool.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "plugin_ops.h"

namespace etrt::xnn {
namespace {

constexpr size_t kPixelGrain = 16;  // output pixels per task

// The input index a kernel tap `k` of output index `o` reads in a transposed convolution, or -1:
// o = i * stride + k * dilation - pad.
int64_t transposed_source(size_t o, size_t k, uint32_t stride, uint32_t dilation, uint32_t pad, size_t extent) {
  int64_t t = static_cast<int64_t>(o) + pad - static_cast<int64_t>(k) * dilation;
  if (t < 0 || t % stride != 0) return -1;
  int64_t i = t / stride;
  return i < static_cast<int64_t>(extent) ? i : -1;
}

}  // namespace

void transposed_convolution(const Node& n, const OperandView& x, const OperandView& w, const OperandView& bias,
                            float* out, const Shape& out_shape, const Parallel& parallel) {
  const Shape& xs = *x.shape;
  size_t in_h = xs[1], in_w = xs[2], in_ch = xs[3];
  size_t out_h = out_shape[1], out_w = out_shape[2], out_ch = out_shape[3];
  size_t kh = n.kernel[0], kw = n.kernel[1], group_in = n.group_in;
  parallel.run(out_shape[0] * out_h * out_w, kPixelGrain, [&](size_t begin, size_t end) {
    std::vector<int64_t> rows(kh), cols(kw);
    for (size_t pixel = begin; pixel < end; ++pixel) {
      size_t b = pixel / (out_h * out_w), oy = pixel / out_w % out_h, ox = pixel % out_w;
      for (size_t ky = 0; ky < kh; ++ky)
        rows[ky] = transposed_source(oy, ky, n.stride[0], n.dilation[0], n.pad[0], in_h);
      for (size_t kx = 0; kx < kw; ++kx)
        cols[kx] = transposed_source(ox, kx, n.stride[1], n.dilation[1], n.pad[3], in_w);
      float* o = out + pixel * out_ch;
      for (size_t oc = 0; oc < out_ch; ++oc) {
        size_t group = oc / n.group_out;
        float acc = bias.data != nullptr ? bias.data[oc] : 0.0f;
        for (size_t ky = 0; ky < kh; ++ky) {
          if (rows[ky] < 0) continue;
          for (size_t kx = 0; kx < kw; ++kx) {
            if (cols[kx] < 0) continue;
            const float* xi = x.data + ((b * in_h + static_cast<size_t>(rows[ky])) * in_w +
                                        static_cast<size_t>(cols[kx])) * in_ch + group * group_in;
            const float* wk = w.data + ((oc * kh + ky) * kw + kx) * group_in;
            for (size_t ic = 0; ic < group_in; ++ic) acc += xi[ic] * wk[ic];
          }
        }
        o[oc] = acc;
      }
      apply_clamp(n, o, out_ch);
    }
  });
}

void prelu(const Node& n, const OperandView& x, const OperandView& slope, float* out, const Shape& out_shape,
           const Parallel& parallel) {
  size_t channels = out_shape[3];
  size_t pixels = numel(out_shape) / channels;
  parallel.run(pixels, kPixelGrain * 16, [&](size_t begin, size_t end) {
    for (size_t pixel = begin; pixel < end; ++pixel) {
      const float* xi = x.data + pixel * channels;
      float* o = out + pixel * channels;
      // NaN fails the comparison and stays NaN through the product, as in PyTorch.
      for (size_t c = 0; c < channels; ++c) o[c] = xi[c] > 0.0f ? xi[c] : xi[c] * slope.data[c];
      apply_clamp(n, o, channels);
    }
  });
}

void resize_bilinear(const Node& n, const OperandView& x, float* out, const Shape& out_shape,
                     const Parallel& parallel) {
  const Shape& xs = *x.shape;
  size_t in_h = xs[1], in_w = xs[2], channels = xs[3];
  size_t out_h = out_shape[1], out_w = out_shape[2];
  bool align_corners = (n.flags & 8u) != 0, legacy = (n.flags & 4u) != 0;
  // Source coordinate of an output index: PyTorch's half-pixel rule (negative clamped to 0), align-corners,
  // or TensorFlow's legacy rule.
  auto source = [&](size_t o, size_t in, size_t outn) -> float {
    if (align_corners) return outn > 1 ? static_cast<float>(o) * (in - 1) / static_cast<float>(outn - 1) : 0.0f;
    float scale = static_cast<float>(in) / static_cast<float>(outn);
    if (legacy) return static_cast<float>(o) * scale;
    return std::max((static_cast<float>(o) + 0.5f) * scale - 0.5f, 0.0f);
  };
  parallel.run(out_shape[0] * out_h * out_w, kPixelGrain, [&](size_t begin, size_t end) {
    for (size_t pixel = begin; pixel < end; ++pixel) {
      size_t b = pixel / (out_h * out_w), oy = pixel / out_w % out_h, ox = pixel % out_w;
      float sy = source(oy, in_h, out_h), sx = source(ox, in_w, out_w);
      size_t y0 = std::min(static_cast<size_t>(sy), in_h - 1), x0 = std::min(static_cast<size_t>(sx), in_w - 1);
      size_t y1 = std::min(y0 + 1, in_h - 1), x1 = std::min(x0 + 1, in_w - 1);
      float ly = sy - static_cast<float>(y0), lx = sx - static_cast<float>(x0);
      const float* row0 = x.data + (b * in_h + y0) * in_w * channels;
      const float* row1 = x.data + (b * in_h + y1) * in_w * channels;
      const float *tl = row0 + x0 * channels, *tr = row0 + x1 * channels;
      const float *bl = row1 + x0 * channels, *br = row1 + x1 * channels;
      float* o = out + pixel * channels;
      // Weighted sums as PyTorch forms them, so an infinity meets a zero weight (NaN) where it does there.
      for (size_t c = 0; c < channels; ++c)
        o[c] = (1.0f - ly) * ((1.0f - lx) * tl[c] + lx * tr[c]) + ly * ((1.0f - lx) * bl[c] + lx * br[c]);
      apply_clamp(n, o, channels);
    }
  });
}

}  // namespace etrt::xnn
