// aten::convolution_backward.out (float32 and float64, NCHW; 1-D convolutions run as 2-D with H = 1).
//
// With x the input [N, Cin, H, W], w the weight [Cout, Cin/g, KH, KW] and dy the output gradient
// [N, Cout, OH, OW], per group g (Cout/g output channels reading Cin/g input channels), and with
// patch(n, p) the K = Cin/g * KH * KW input values output position p reads (im2col, zero where padded):
//   grad_weight[oc, :] = sum over n, p of dy[n, oc, p] * patch(n, p)
//   grad_input:          for each n, p: the K-vector sum over oc of dy[n, oc, p] * w[oc, :] is added back
//                        to the input positions patch(n, p) came from (col2im)
//   grad_bias[oc]      = sum over n, p of dy[n, oc, p]
// Every inner loop is an axpy over K contiguous values (the compiler vectorises it; no reduction needs
// reassociating). grad_weight is split over output channels (each task owns its rows), grad_input over
// images (each task owns its image), grad_bias over output channels; the patches of every image are
// gathered once, in parallel, before grad_weight reads them.
#include <algorithm>
#include <vector>

#include "training_kernels.h"

namespace etrt_training_kernels {
namespace {

using etrt::plugin::shape_string;

struct Geometry {
  int64_t N, Cin, H, W, Cout, KH, KW, OH, OW, groups;
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t cin_g() const { return Cin / groups; }
  int64_t cout_g() const { return Cout / groups; }
  int64_t K() const { return cin_g() * KH * KW; }
  int64_t P() const { return OH * OW; }
};

// Reads or writes the patch of output position (oh, ow) of one image and group, as a K-vector:
// fn(k, input offset within the image) for the taps inside the input.
template <typename Fn>
inline void for_each_tap(const Geometry& g, int64_t group, int64_t oh, int64_t ow, Fn&& fn) {
  int64_t k = 0;
  for (int64_t c = 0; c < g.cin_g(); ++c) {
    const int64_t plane = (group * g.cin_g() + c) * g.H * g.W;
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      const int64_t ih = oh * g.sh - g.ph + kh * g.dh;
      for (int64_t kw = 0; kw < g.KW; ++kw, ++k) {
        const int64_t iw = ow * g.sw - g.pw + kw * g.dw;
        if (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) fn(k, plane + ih * g.W + iw);
      }
    }
  }
}

template <typename T>
void grad_weight(const Geometry& g, const T* x, const T* dy, T* dw) {
  const int64_t K = g.K(), P = g.P();
  // patches[group][n][p][k]
  std::vector<T> patches(static_cast<size_t>(g.groups * g.N * P * K), T(0));
  host.parallel_for(static_cast<size_t>(g.groups * g.N * g.OH), 4, [&](size_t begin, size_t end) {
    for (size_t job = begin; job < end; ++job) {
      const int64_t oh = static_cast<int64_t>(job) % g.OH;
      const int64_t n = static_cast<int64_t>(job) / g.OH % g.N;
      const int64_t group = static_cast<int64_t>(job) / g.OH / g.N;
      const T* image = x + n * g.Cin * g.H * g.W;
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        T* patch = patches.data() + ((group * g.N + n) * P + oh * g.OW + ow) * K;
        for_each_tap(g, group, oh, ow, [&](int64_t k, int64_t at) { patch[k] = image[at]; });
      }
    }
  });
  const size_t grain = static_cast<size_t>(std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, g.N * P * K)));
  host.parallel_for(static_cast<size_t>(g.Cout), grain, [&](size_t begin, size_t end) {
    for (size_t o = begin; o < end; ++o) {
      const int64_t oc = static_cast<int64_t>(o), group = oc / g.cout_g();
      T* row = dw + oc * K;
      std::fill(row, row + K, T(0));
      for (int64_t n = 0; n < g.N; ++n) {
        const T* dyr = dy + (n * g.Cout + oc) * P;
        const T* patch = patches.data() + (group * g.N + n) * P * K;
        for (int64_t p = 0; p < P; ++p, patch += K) {
          const T scale = dyr[p];
          for (int64_t k = 0; k < K; ++k) row[k] += scale * patch[k];
        }
      }
    }
  });
}

template <typename T>
void grad_input(const Geometry& g, const T* w, const T* dy, T* dx) {
  const int64_t K = g.K(), P = g.P();
  host.parallel_for(static_cast<size_t>(g.N), 1, [&](size_t begin, size_t end) {
    std::vector<T> column(static_cast<size_t>(K));
    for (size_t image = begin; image < end; ++image) {
      const int64_t n = static_cast<int64_t>(image);
      T* dxn = dx + n * g.Cin * g.H * g.W;
      std::fill(dxn, dxn + g.Cin * g.H * g.W, T(0));
      for (int64_t group = 0; group < g.groups; ++group) {
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) {
            const int64_t p = oh * g.OW + ow;
            std::fill(column.begin(), column.end(), T(0));
            for (int64_t oc = group * g.cout_g(); oc < (group + 1) * g.cout_g(); ++oc) {
              const T scale = dy[(n * g.Cout + oc) * P + p];
              const T* wr = w + oc * K;
              T* col = column.data();
              for (int64_t k = 0; k < K; ++k) col[k] += scale * wr[k];
            }
            for_each_tap(g, group, oh, ow, [&](int64_t k, int64_t at) { dxn[at] += column[static_cast<size_t>(k)]; });
          }
      }
    }
  });
}

template <typename T>
void grad_bias(const Geometry& g, const T* dy, T* db) {
  const int64_t P = g.P();
  host.parallel_for(static_cast<size_t>(g.Cout), 8, [&](size_t begin, size_t end) {
    for (size_t o = begin; o < end; ++o) {
      double sum = 0;  // N * OH * OW terms: summed in double, rounded once
      for (int64_t n = 0; n < g.N; ++n) {
        const T* dyr = dy + (n * g.Cout + static_cast<int64_t>(o)) * P;
        for (int64_t p = 0; p < P; ++p) sum += static_cast<double>(dyr[p]);
      }
      db[o] = static_cast<T>(sum);
    }
  });
}

// The geometry of a 1-D ([N, C, L]) or 2-D ([N, C, H, W]) convolution, checked against its tensors.
et_error* plan(const Call& call, const Tensor& grad_output, const Tensor& input, const Tensor& weight,
               IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, IntArrayRef output_padding,
               int64_t groups, Geometry* g) {
  if (input.rank != 3 && input.rank != 4)
    return unsupported(call, "input must be 3-D [N, C, L] or 4-D [N, C, H, W] (1-D or 2-D convolution), got " +
                                 shape_string(input));
  if (weight.rank != input.rank)
    return invalid(call, "weight " + shape_string(weight) + " must have the rank of input " + shape_string(input));
  if (grad_output.rank != input.rank)
    return invalid(call, "grad_output " + shape_string(grad_output) + " must have the rank of input " +
                             shape_string(input));
  const int dims = input.rank - 2;
  int64_t s[2] = {1, 1}, p[2] = {0, 0}, d[2] = {1, 1}, op[2] = {0, 0};
  ETRT_TRY(expand_list(call, stride, "stride", dims, nullptr, s + (2 - dims)));
  ETRT_TRY(expand_list(call, padding, "padding", dims, nullptr, p + (2 - dims)));
  ETRT_TRY(expand_list(call, dilation, "dilation", dims, nullptr, d + (2 - dims)));
  if (!output_padding.empty()) ETRT_TRY(expand_list(call, output_padding, "output_padding", dims, nullptr, op + (2 - dims)));
  for (int i = 0; i < 2; ++i) {
    if (s[i] < 1 || d[i] < 1 || p[i] < 0)
      return invalid(call, "stride and dilation must be positive and padding non-negative");
    if (op[i] != 0) return invalid(call, "output_padding must be zero for a convolution that is not transposed");
  }
  if (groups < 1) return invalid(call, "groups must be positive, got " + std::to_string(groups));
  auto size = [](const Tensor& t, int i) { return t.rank == 4 ? t.sizes[i] : (i == 2 ? 1 : t.sizes[i == 3 ? 2 : i]); };
  *g = Geometry{size(input, 0), size(input, 1), size(input, 2), size(input, 3), size(weight, 0), size(weight, 2),
                size(weight, 3), size(grad_output, 2), size(grad_output, 3), groups,
                s[0], s[1], p[0], p[1], d[0], d[1]};
  if (g->Cin % groups != 0 || g->Cout % groups != 0 || size(weight, 1) * groups != g->Cin)
    return invalid(call, "weight " + shape_string(weight) + " does not fit input " + shape_string(input) + " in " +
                             std::to_string(groups) + " groups");
  const int64_t oh = (g->H + 2 * g->ph - g->dh * (g->KH - 1) - 1) / g->sh + 1;
  const int64_t ow = (g->W + 2 * g->pw - g->dw * (g->KW - 1) - 1) / g->sw + 1;
  if (size(grad_output, 0) != g->N || size(grad_output, 1) != g->Cout || g->OH != oh || g->OW != ow || oh < 1 || ow < 1)
    return invalid(call, "grad_output has the shape " + shape_string(grad_output) + ", the convolution of input " +
                             shape_string(input) + " by weight " + shape_string(weight) + " gives [" +
                             std::to_string(g->N) + ", " + std::to_string(g->Cout) +
                             (dims == 2 ? ", " + std::to_string(oh) : std::string()) + ", " + std::to_string(ow) + "]");
  return nullptr;
}

}  // namespace

et_error* convolution_backward_out(Call call, const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                   std::optional<IntArrayRef> bias_sizes, IntArrayRef stride, IntArrayRef padding,
                                   IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups,
                                   BoolArrayRef output_mask, Tensor* out0, Tensor* out1, Tensor* out2) {
  if (transposed) return unsupported(call, "transposed convolutions are not supported");
  if (output_mask.size() != 3)
    return invalid(call, "output_mask must have 3 items, got " + std::to_string(output_mask.size()));
  if (input.dtype != ET_DTYPE_FLOAT32 && input.dtype != ET_DTYPE_FLOAT64)
    return unsupported(call, std::string("input must be float32 or float64, got ") +
                                 etrt::plugin::dtype_name(input.dtype));
  ETRT_TRY(expect_dtype(call, grad_output, "grad_output", input.dtype));
  ETRT_TRY(expect_dtype(call, weight, "weight", input.dtype));
  Geometry g{};
  ETRT_TRY(plan(call, grad_output, input, weight, stride, padding, dilation, output_padding, groups, &g));
  ETRT_TRY(expect_row_major(call, grad_output, "grad_output"));
  ETRT_TRY(expect_row_major(call, input, "input"));
  ETRT_TRY(expect_row_major(call, weight, "weight"));
  Tensor* outs[3] = {out0, out1, out2};
  const char* names[3] = {"out0 (grad_input)", "out1 (grad_weight)", "out2 (grad_bias)"};
  const int64_t bias_shape[1] = {g.Cout};
  if (output_mask[2] && bias_sizes && !(bias_sizes->size() == 1 && (*bias_sizes)[0] == g.Cout))
    return invalid(call, "bias_sizes must be [" + std::to_string(g.Cout) + "] (the output channels)");
  const int64_t* shapes[3] = {input.sizes, weight.sizes, bias_shape};
  const int32_t ranks[3] = {input.rank, weight.rank, 1};
  for (int i = 0; i < 3; ++i) {
    if (!output_mask[static_cast<size_t>(i)]) continue;
    if (outs[i] == nullptr) return invalid(call, std::string(names[i]) + " is None but output_mask asks for it");
    ETRT_TRY(expect_dtype(call, *outs[i], names[i], input.dtype));
    ETRT_TRY(shape_output(call, *outs[i], shapes[i], ranks[i], names[i]));
  }
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* x = static_cast<const T*>(input.data);
    const T* w = static_cast<const T*>(weight.data);
    const T* dy = static_cast<const T*>(grad_output.data);
    if (output_mask[0]) grad_input<T>(g, w, dy, static_cast<T*>(out0->data));
    if (output_mask[1]) grad_weight<T>(g, x, dy, static_cast<T*>(out1->data));
    if (output_mask[2]) grad_bias<T>(g, dy, static_cast<T*>(out2->data));
  };
  if (input.dtype == ET_DTYPE_FLOAT64) run(double{});
  else run(float{});
  return nullptr;
}

}  // namespace etrt_training_kernels
