// Operators that resample the trailing spatial dims: upsample_nearest2d,
// upsample_bilinear2d (PyTorch's coordinate rules, align_corners and explicit
// scale factors) and its antialiased form, grid_sampler_2d, pixel_shuffle/pixel_unshuffle (strided views copied once) and
// the reflection/replication pads (a source index per output index and dim).
#include <cmath>
#include <vector>

#include "pointwise_common.h"

namespace etrt::kernels::pw {
namespace {

// ---------------------------------------------------------------- upsample

// The output size and the source-coordinate scale of one spatial dim, as
// PyTorch computes them (area_pixel_compute_scale).
struct Axis {
  int64_t in = 0, out = 0;
  double scale = 0;  // source units per output unit
};

et_error* plan_upsample(const char* op, const et_tensor& input, std::optional<IntArrayRef> output_size,
                        std::optional<DoubleArrayRef> scale_factors, bool align_corners, Axis axes[2]) {
  if (input.rank != 4) return invalid(op, "input must be 4-D (N, C, H, W), got shape " + shape_string(input));
  if (output_size.has_value() == scale_factors.has_value())
    return invalid(op, "exactly one of output_size and scale_factors must be given");
  if (output_size && output_size->size() != 2)
    return invalid(op, "output_size must have 2 entries, got " + list_str(*output_size));
  if (scale_factors && scale_factors->size() != 2)
    return invalid(op, "scale_factors must have 2 entries, got " + str(static_cast<int64_t>(scale_factors->size())));
  for (int i = 0; i < 2; ++i) {
    Axis& a = axes[i];
    a.in = input.sizes[2 + i];
    const double factor = scale_factors ? (*scale_factors)[static_cast<size_t>(i)] : 0;
    if (scale_factors && !(factor > 0)) return invalid(op, "scale factors must be positive");
    a.out = output_size ? (*output_size)[static_cast<size_t>(i)] : static_cast<int64_t>(std::floor(a.in * factor));
    if (a.out <= 0 || a.in <= 0)
      return invalid(op, "input and output spatial sizes must be positive, got input " + shape_string(input) +
                             " and output " + str(a.out));
    if (align_corners) a.scale = a.out > 1 ? static_cast<double>(a.in - 1) / static_cast<double>(a.out - 1) : 0;
    else a.scale = scale_factors ? 1.0 / factor : static_cast<double>(a.in) / static_cast<double>(a.out);
  }
  return nullptr;
}

// Bilinear source positions of one output index: two neighbours and the weight of the second.
struct Lerp {
  int64_t i0, i1;
  double w1;
};
std::vector<Lerp> lerps(const Axis& a, bool align_corners) {
  std::vector<Lerp> table(static_cast<size_t>(a.out));
  for (int64_t o = 0; o < a.out; ++o) {
    double src = align_corners ? o * a.scale : std::max(0.0, (o + 0.5) * a.scale - 0.5);
    int64_t i0 = std::min(static_cast<int64_t>(src), a.in - 1);
    int64_t i1 = std::min(i0 + 1, a.in - 1);
    table[static_cast<size_t>(o)] = {i0, i1, src - static_cast<double>(i0)};
  }
  return table;
}

// out[n, c, y, x] = f(plane of input[n, c], y, x) for every (n, c) plane.
template <typename Pixel>
void for_each_plane(const View& in, const View& out, const Pixel& pixel) {
  const int64_t planes = out.sizes[0] * out.sizes[1];
  parallel(static_cast<size_t>(planes), 1, [&](size_t b, size_t e) {
    for (size_t p = b; p < e; ++p) {
      const int64_t n = static_cast<int64_t>(p) / out.sizes[1], c = static_cast<int64_t>(p) % out.sizes[1];
      pixel(in.data + (n * in.strides[0] + c * in.strides[1]) * static_cast<int64_t>(in.esize()),
            out.data + (n * out.strides[0] + c * out.strides[1]) * static_cast<int64_t>(out.esize()));
    }
  });
}

et_error* upsample_checks(const char* op, const et_tensor& input, et_tensor& out, const Axis axes[2]) {
  ETRT_TRY(check_data(op, input, "input"));
  ETRT_TRY(check_float(op, input, "input"));
  if (out.dtype != input.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(input.dtype));
  const int64_t shape[4] = {input.sizes[0], input.sizes[1], axes[0].out, axes[1].out};
  ETRT_TRY(resize_out(op, out, shape, 4));
  if (etrt::plugin::numel(out) > 0) ETRT_TRY(check_data(op, out, "out"));
  return nullptr;
}

// upsample_nearest2d.vec_out(input, SymInt[]? output_size, float[]? scale_factors, *, out)
et_error* upsample_nearest2d_out(Call call, const Tensor& input, std::optional<IntArrayRef> output_size,
                                 std::optional<DoubleArrayRef> scale_factors, Tensor& out) {
  const char* op = call.op;
  Axis axes[2];
  ETRT_TRY(plan_upsample(op, input, output_size, scale_factors, false, axes));
  ETRT_TRY(upsample_checks(op, input, out, axes));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  std::vector<int64_t> src[2];
  for (int i = 0; i < 2; ++i)
    for (int64_t o = 0; o < axes[i].out; ++o)
      src[i].push_back(std::min(static_cast<int64_t>(std::floor(o * axes[i].scale)), axes[i].in - 1));
  const View in = view_of(input), ov = view_of(out);
  const size_t es = in.esize();
  for_each_plane(in, ov, [&](const char* x, char* z) {
    for (int64_t y = 0; y < axes[0].out; ++y)
      for (int64_t w = 0; w < axes[1].out; ++w)
        std::memcpy(z + (y * ov.strides[2] + w * ov.strides[3]) * static_cast<int64_t>(es),
                    x + (src[0][static_cast<size_t>(y)] * in.strides[2] + src[1][static_cast<size_t>(w)] * in.strides[3]) *
                            static_cast<int64_t>(es),
                    es);
  });
  return nullptr;
}

// upsample_bilinear2d.vec_out(input, SymInt[]? output_size, bool align_corners, float[]? scale_factors, *, out)
et_error* upsample_bilinear2d_out(Call call, const Tensor& input, std::optional<IntArrayRef> output_size,
                                  bool align_corners, std::optional<DoubleArrayRef> scale_factors, Tensor& out) {
  const char* op = call.op;
  Axis axes[2];
  ETRT_TRY(plan_upsample(op, input, output_size, scale_factors, align_corners, axes));
  ETRT_TRY(upsample_checks(op, input, out, axes));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  const std::vector<Lerp> ys = lerps(axes[0], align_corners), xs = lerps(axes[1], align_corners);
  const View in = view_of(input), ov = view_of(out);
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_plane(in, ov, [&](const char* xb, char* zb) {
      const T* x = reinterpret_cast<const T*>(xb);
      T* z = reinterpret_cast<T*>(zb);
      for (int64_t y = 0; y < axes[0].out; ++y) {
        const Lerp& ly = ys[static_cast<size_t>(y)];
        const T* r0 = x + ly.i0 * in.strides[2];
        const T* r1 = x + ly.i1 * in.strides[2];
        const T wy1 = static_cast<T>(ly.w1), wy0 = T(1) - wy1;
        for (int64_t w = 0; w < axes[1].out; ++w) {
          const Lerp& lx = xs[static_cast<size_t>(w)];
          const T wx1 = static_cast<T>(lx.w1), wx0 = T(1) - wx1;
          const int64_t a = lx.i0 * in.strides[3], b = lx.i1 * in.strides[3];
          z[y * ov.strides[2] + w * ov.strides[3]] = wy0 * (wx0 * r0[a] + wx1 * r0[b]) + wy1 * (wx0 * r1[a] + wx1 * r1[b]);
        }
      }
    });
  };
  if (input.dtype == ET_DTYPE_FLOAT64) run(Tag<double>{});
  else run(Tag<float>{});
  return nullptr;
}

// _upsample_bilinear2d_aa.out(input, SymInt[2] output_size, bool align_corners, float? scales_h=None,
// float? scales_w=None, *, out): bilinear with antialiasing (PyTorch's separable triangle filter whose
// support widens by the downscale factor), horizontal pass then vertical, in double.
struct Taps {
  int64_t first = 0;
  std::vector<double> weights;
};
std::vector<Taps> aa_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale_arg) {
  double scale;
  if (align_corners) scale = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0;
  else scale = scale_arg && *scale_arg > 0 ? 1.0 / *scale_arg : static_cast<double>(in) / static_cast<double>(out);
  const double support = scale >= 1.0 ? scale : 1.0;
  const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  std::vector<Taps> taps(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const double center = scale * (static_cast<double>(i) + 0.5);
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in);
    Taps& t = taps[static_cast<size_t>(i)];
    t.first = lo;
    double total = 0;
    for (int64_t j = lo; j < hi; ++j) {
      const double x = std::fabs((static_cast<double>(j) - center + 0.5) * invscale);
      const double w = x < 1.0 ? 1.0 - x : 0.0;
      t.weights.push_back(w);
      total += w;
    }
    if (total != 0)
      for (double& w : t.weights) w /= total;
  }
  return taps;
}

et_error* upsample_bilinear2d_aa_out(Call call, const Tensor& input, IntArrayRef output_size, bool align_corners,
                                     std::optional<double> scales_h, std::optional<double> scales_w, Tensor& out) {
  const char* op = call.op;
  Axis axes[2];
  ETRT_TRY(plan_upsample(op, input, output_size, std::nullopt, align_corners, axes));
  ETRT_TRY(upsample_checks(op, input, out, axes));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  const std::vector<Taps> ty = aa_taps(axes[0].in, axes[0].out, align_corners, scales_h);
  const std::vector<Taps> tx = aa_taps(axes[1].in, axes[1].out, align_corners, scales_w);
  const int64_t N = input.sizes[0], C = input.sizes[1], H = axes[0].in, W = axes[1].in, Ho = axes[0].out, Wo = axes[1].out;
  std::vector<double> x(static_cast<size_t>(N * C * H * W)), result(static_cast<size_t>(N * C * Ho * Wo));
  copy_view(contiguous_view(ET_DTYPE_FLOAT64, 4, input.sizes, x.data()), view_of(input));
  parallel(static_cast<size_t>(N * C), 1, [&](size_t b, size_t e) {
    std::vector<double> rows(static_cast<size_t>(H * Wo));
    for (size_t plane = b; plane < e; ++plane) {
      const double* src = x.data() + plane * static_cast<size_t>(H * W);
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < Wo; ++w) {
          const Taps& t = tx[static_cast<size_t>(w)];
          double v = 0;
          for (size_t k = 0; k < t.weights.size(); ++k) v += t.weights[k] * src[h * W + t.first + static_cast<int64_t>(k)];
          rows[static_cast<size_t>(h * Wo + w)] = v;
        }
      double* dst = result.data() + plane * static_cast<size_t>(Ho * Wo);
      for (int64_t h = 0; h < Ho; ++h) {
        const Taps& t = ty[static_cast<size_t>(h)];
        for (int64_t w = 0; w < Wo; ++w) {
          double v = 0;
          for (size_t k = 0; k < t.weights.size(); ++k) v += t.weights[k] * rows[static_cast<size_t>((t.first + static_cast<int64_t>(k)) * Wo + w)];
          dst[h * Wo + w] = v;
        }
      }
    }
  });
  copy_view(view_of(out), contiguous_view(ET_DTYPE_FLOAT64, 4, out.sizes, result.data()));
  return nullptr;
}

// grid_sampler_2d.out(input [N, C, H, W], grid [N, Ho, Wo, 2], int interpolation_mode, int padding_mode,
// bool align_corners, *, out [N, C, Ho, Wo]). Interpolation 0 bilinear, 1 nearest; padding 0 zeros,
// 1 border, 2 reflection. grid holds (x, y) in [-1, 1].
double reflect(double v, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  v = std::fabs(v - lo);
  const double extra = std::fmod(v, span);
  const auto flips = static_cast<int64_t>(std::floor(v / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}
double source_coordinate(double coord, int64_t size, int64_t padding, bool align_corners) {
  double v = align_corners ? (coord + 1) / 2 * static_cast<double>(size - 1)
                           : ((coord + 1) * static_cast<double>(size) - 1) / 2;
  const double last = static_cast<double>(size - 1);
  if (padding == 1) v = std::min(std::max(v, 0.0), last);
  if (padding == 2) {
    v = align_corners ? reflect(v, 0, 2 * last) : reflect(v, -1, 2 * static_cast<double>(size) - 1);
    v = std::min(std::max(v, 0.0), last);
  }
  return v;
}

et_error* grid_sampler_2d_out(Call call, const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                              int64_t padding_mode, bool align_corners, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, input, "input"));
  ETRT_TRY(check_data(op, grid, "grid"));
  ETRT_TRY(check_float(op, input, "input"));
  ETRT_TRY(check_float(op, grid, "grid"));
  if (input.rank != 4) return invalid(op, "input must be 4-D (N, C, H, W), got shape " + shape_string(input));
  if (grid.rank != 4 || grid.sizes[3] != 2 || grid.sizes[0] != input.sizes[0])
    return invalid(op, "grid must be (N, H_out, W_out, 2) with input's N, got shape " + shape_string(grid));
  if (interpolation_mode != 0 && interpolation_mode != 1)
    return unsupported(op, "interpolation_mode " + str(interpolation_mode) + " is not supported (0 bilinear, 1 nearest)");
  if (padding_mode < 0 || padding_mode > 2)
    return invalid(op, "padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), got " + str(padding_mode));
  if (out.dtype != input.dtype) return invalid(op, "output dtype must match the input dtype");
  const int64_t N = input.sizes[0], C = input.sizes[1], H = input.sizes[2], W = input.sizes[3];
  const int64_t Ho = grid.sizes[1], Wo = grid.sizes[2];
  const int64_t shape[4] = {N, C, Ho, Wo};
  ETRT_TRY(resize_out(op, out, shape, 4));
  const size_t total = etrt::plugin::numel(out);
  if (total == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  std::vector<double> x(etrt::plugin::numel(input)), g(etrt::plugin::numel(grid)), result(total);
  if (!x.empty()) copy_view(contiguous_view(ET_DTYPE_FLOAT64, 4, input.sizes, x.data()), view_of(input));
  copy_view(contiguous_view(ET_DTYPE_FLOAT64, 4, grid.sizes, g.data()), view_of(grid));
  auto at = [&](int64_t n, int64_t c, int64_t yy, int64_t xx) {
    if (yy < 0 || yy >= H || xx < 0 || xx >= W) return 0.0;
    return x[static_cast<size_t>(((n * C + c) * H + yy) * W + xx)];
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < Ho; ++i)
      for (int64_t j = 0; j < Wo; ++j) {
        const double* p = g.data() + ((n * Ho + i) * Wo + j) * 2;
        const double sx = source_coordinate(p[0], W, padding_mode, align_corners);
        const double sy = source_coordinate(p[1], H, padding_mode, align_corners);
        for (int64_t c = 0; c < C; ++c) {
          double v;
          if (interpolation_mode == 1) {
            v = at(n, c, static_cast<int64_t>(std::nearbyint(sy)), static_cast<int64_t>(std::nearbyint(sx)));
          } else {
            const auto x0 = static_cast<int64_t>(std::floor(sx)), y0 = static_cast<int64_t>(std::floor(sy));
            const double wx = sx - static_cast<double>(x0), wy = sy - static_cast<double>(y0);
            v = (1 - wy) * ((1 - wx) * at(n, c, y0, x0) + wx * at(n, c, y0, x0 + 1)) +
                wy * ((1 - wx) * at(n, c, y0 + 1, x0) + wx * at(n, c, y0 + 1, x0 + 1));
          }
          result[static_cast<size_t>(((n * C + c) * Ho + i) * Wo + j)] = v;
        }
      }
  copy_view(view_of(out), contiguous_view(ET_DTYPE_FLOAT64, 4, shape, result.data()));
  return nullptr;
}

// ----------------------------------------------------------- pixel shuffle

// pixel_shuffle.out(self, int upscale_factor, *, out): (*, C r^2, H, W) -> (*, C, H r, W r).
// pixel_unshuffle.out(self, int downscale_factor, *, out): the inverse.
// Both copy a 6-dim strided view of self, (*, C, H, r, W, r), into the same view of out.
template <bool kShuffle>
et_error* pixel_shuffle_out(Call call, const Tensor& self, int64_t factor, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  if (self.rank < 3) return invalid(op, "self must have at least 3 dims, got shape " + shape_string(self));
  if (self.rank + 3 > ET_MAX_RANK) return unsupported(op, "self has too many dims");
  if (factor <= 0) return invalid(op, "the factor must be positive, got " + str(factor));
  if (out.dtype != self.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(self.dtype));
  const int32_t r = self.rank, b = r - 3;
  const int64_t f = factor;
  int64_t shape[ET_MAX_RANK];
  std::copy(self.sizes, self.sizes + r, shape);
  if (kShuffle) {
    if (self.sizes[b] % (f * f) != 0)
      return invalid(op, "channels " + str(self.sizes[b]) + " must be divisible by the square of upscale_factor " + str(f));
    shape[b] /= f * f, shape[b + 1] *= f, shape[b + 2] *= f;
  } else {
    if (self.sizes[b + 1] % f != 0 || self.sizes[b + 2] % f != 0)
      return invalid(op, "height and width of " + shape_string(self) + " must be divisible by downscale_factor " + str(f));
    shape[b] *= f * f, shape[b + 1] /= f, shape[b + 2] /= f;
  }
  ETRT_TRY(resize_out(op, out, shape, r));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  // Views in (*, C, H, i, W, j) order, C, H, W those of the shuffled (large-spatial) side.
  const et_tensor& deep = kShuffle ? self : out;      // (*, C f f, H, W)
  const et_tensor& spatial = kShuffle ? out : self;   // (*, C, H f, W f)
  View d = view_of(deep), s = view_of(spatial), dv = d, sv = s;
  const int64_t C = spatial.sizes[b], H = deep.sizes[b + 1], W = deep.sizes[b + 2];
  dv.rank = sv.rank = b + 5;
  const int64_t dsizes[5] = {C, H, f, W, f};
  const int64_t dstr[5] = {d.strides[b] * f * f, d.strides[b + 1], d.strides[b] * f, d.strides[b + 2], d.strides[b]};
  const int64_t sstr[5] = {s.strides[b], s.strides[b + 1] * f, s.strides[b + 1], s.strides[b + 2] * f, s.strides[b + 2]};
  for (int k = 0; k < 5; ++k) {
    dv.sizes[b + k] = sv.sizes[b + k] = dsizes[k];
    dv.strides[b + k] = dstr[k];
    sv.strides[b + k] = sstr[k];
  }
  if (kShuffle) copy_view(sv, dv);
  else copy_view(dv, sv);
  return nullptr;
}

// -------------------------------------------------------------------- pads

// reflection_padNd / replication_padNd .out(self, SymInt[2N] padding, *, out):
// padding = (left, right) of the last dim, then of the one before, ...
template <int kDims, bool kReflect>
et_error* pad_out(Call call, const Tensor& self, IntArrayRef padding, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  if (padding.size() != 2 * kDims)
    return invalid(op, "padding must have " + str(2 * kDims) + " entries, got " + list_str(padding));
  if (self.rank != kDims + 1 && self.rank != kDims + 2)
    return invalid(op, "self must be " + str(kDims + 1) + "-D or " + str(kDims + 2) + "-D, got shape " +
                           shape_string(self));
  if (out.dtype != self.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(self.dtype));
  const int32_t r = self.rank;
  int64_t shape[ET_MAX_RANK];
  std::copy(self.sizes, self.sizes + r, shape);
  std::vector<int64_t> source[ET_MAX_RANK];  // per padded dim: the source index of each output index
  for (int k = 0; k < kDims; ++k) {
    const int32_t d = r - 1 - k;
    const int64_t before = padding[static_cast<size_t>(2 * k)], after = padding[static_cast<size_t>(2 * k + 1)];
    const int64_t n = self.sizes[d];
    if (kReflect && (before >= n || after >= n || n == 0))
      return invalid(op, "padding (" + str(before) + ", " + str(after) + ") must be smaller than dim " + str(d) +
                             " of size " + str(n) + " for reflection");
    if (!kReflect && n == 0 && (before > 0 || after > 0))
      return invalid(op, "cannot replicate-pad dim " + str(d) + " of size 0");
    shape[d] = n + before + after;
    if (shape[d] < 0) return invalid(op, "padding " + list_str(padding) + " leaves a negative size");
    for (int64_t o = 0; o < shape[d]; ++o) {
      int64_t i = o - before;
      if (kReflect) i = i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
      else i = std::clamp<int64_t>(i, 0, n - 1);
      source[d].push_back(i);
    }
  }
  ETRT_TRY(resize_out(op, out, shape, r));
  const size_t total = etrt::plugin::numel(out);
  if (total == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  const View in = view_of(self), ov = view_of(out);
  const int64_t es = static_cast<int64_t>(in.esize());
  const int32_t first_padded = r - kDims;
  int64_t pos[ET_MAX_RANK] = {};
  for (size_t k = 0; k < total; ++k) {
    int64_t src = 0, dst = 0;
    for (int32_t i = 0; i < r; ++i) {
      const int64_t at = i < first_padded ? pos[i] : source[i][static_cast<size_t>(pos[i])];
      src += at * in.strides[i];
      dst += pos[i] * ov.strides[i];
    }
    std::memcpy(ov.data + dst * es, in.data + src * es, static_cast<size_t>(es));
    for (int32_t i = r; i-- > 0;) {
      if (++pos[i] < shape[i]) break;
      pos[i] = 0;
    }
  }
  return nullptr;
}

}  // namespace
}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> resample_ops_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_RESAMPLE_OPS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
