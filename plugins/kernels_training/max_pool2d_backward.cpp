// aten::max_pool2d_with_indices_backward.grad_input (float32 and float64, [C, H, W] or [N, C, H, W]).
//
// The forward kernel stored, for each output element, the flat position (h * W + w) of the input element
// its window chose within the same plane. The gradient of that input element is the sum of the output
// gradients that chose it (windows overlap when stride < kernel_size). Planes are independent, so they are
// split over the host's pool; within a plane the scatter is serial, so overlapping windows add in the
// output's order, as PyTorch's CPU kernel does.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "training_kernels.h"

namespace etrt_training_kernels {
namespace {

using etrt::plugin::shape_string;

int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  if (span < 0) return 0;  // the window does not fit: no output (the checks then name the shapes)
  int64_t out = span / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;  // the last window must start inside the input
  return out;
}

template <typename T>
et_error* scatter(const Call& call, const Tensor& grad_output, const Tensor& indices, Tensor& grad_input,
                  int64_t planes, int64_t in_plane, int64_t out_plane) {
  const T* go = static_cast<const T*>(grad_output.data);
  const int64_t* idx = static_cast<const int64_t*>(indices.data);
  T* gi = static_cast<T*>(grad_input.data);
  // A bad index is found by a worker; the first one found is reported after the run.
  std::atomic<int64_t> bad_plane{-1}, bad_index{0};
  const size_t grain = static_cast<size_t>(std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, out_plane)));
  host.parallel_for(static_cast<size_t>(planes), grain, [&](size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) {
      T* dst = gi + static_cast<int64_t>(p) * in_plane;
      const T* src = go + static_cast<int64_t>(p) * out_plane;
      const int64_t* where = idx + static_cast<int64_t>(p) * out_plane;
      std::memset(static_cast<void*>(dst), 0, static_cast<size_t>(in_plane) * sizeof(T));
      for (int64_t o = 0; o < out_plane; ++o) {
        const int64_t i = where[o];
        if (i < 0 || i >= in_plane) {
          int64_t none = -1;
          if (bad_plane.compare_exchange_strong(none, static_cast<int64_t>(p))) bad_index = i;
          break;
        }
        dst[i] += src[o];
      }
    }
  });
  if (bad_plane >= 0)
    return invalid(call, "indices holds " + std::to_string(bad_index.load()) + " in plane " +
                             std::to_string(bad_plane.load()) + ", outside the input plane of " +
                             std::to_string(in_plane) + " elements");
  return nullptr;
}

}  // namespace

et_error* max_pool2d_with_indices_backward_out(Call call, const Tensor& grad_output, const Tensor& self,
                                               IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                                               IntArrayRef dilation, bool ceil_mode, const Tensor& indices,
                                               Tensor& grad_input) {
  if (self.rank != 3 && self.rank != 4)
    return invalid(call, "self must be 3-D [C, H, W] or 4-D [N, C, H, W], got " + shape_string(self));
  if (self.dtype != ET_DTYPE_FLOAT32 && self.dtype != ET_DTYPE_FLOAT64)
    return unsupported(call, std::string("self must be float32 or float64, got ") +
                                 etrt::plugin::dtype_name(self.dtype));
  ETRT_TRY(expect_dtype(call, grad_output, "grad_output", self.dtype));
  ETRT_TRY(expect_dtype(call, indices, "indices", ET_DTYPE_INT64));
  ETRT_TRY(expect_dtype(call, grad_input, "grad_input", self.dtype));
  int64_t k[2], s[2], pad[2], dil[2];
  ETRT_TRY(expand_list(call, kernel_size, "kernel_size", 2, nullptr, k));
  ETRT_TRY(expand_list(call, stride, "stride", 2, k, s));
  ETRT_TRY(expand_list(call, padding, "padding", 2, nullptr, pad));
  ETRT_TRY(expand_list(call, dilation, "dilation", 2, nullptr, dil));
  for (int d = 0; d < 2; ++d)
    if (k[d] < 1 || s[d] < 1 || dil[d] < 1 || pad[d] < 0 || pad[d] > k[d] / 2)
      return invalid(call, "kernel_size, stride and dilation must be positive and padding at most half the "
                           "kernel, got kernel_size [" + std::to_string(k[0]) + ", " + std::to_string(k[1]) +
                           "], stride [" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + "], padding [" +
                           std::to_string(pad[0]) + ", " + std::to_string(pad[1]) + "], dilation [" +
                           std::to_string(dil[0]) + ", " + std::to_string(dil[1]) + "]");
  const int32_t r = self.rank;
  const int64_t H = self.sizes[r - 2], W = self.sizes[r - 1];
  int64_t expected[4];
  for (int32_t d = 0; d < r - 2; ++d) expected[d] = self.sizes[d];
  expected[r - 2] = pooled_size(H, k[0], pad[0], s[0], dil[0], ceil_mode);
  expected[r - 1] = pooled_size(W, k[1], pad[1], s[1], dil[1], ceil_mode);
  for (const auto* t : {&grad_output, &indices}) {
    bool same = t->rank == r;
    for (int32_t d = 0; same && d < r; ++d) same = t->sizes[d] == expected[d];
    if (!same)
      return invalid(call, std::string(t == &grad_output ? "grad_output" : "indices") + " has the shape " +
                               shape_string(*t) + ", the pooling of self " + shape_string(self) + " gives " +
                               shape_string(expected, r));
  }
  ETRT_TRY(expect_row_major(call, self, "self"));
  ETRT_TRY(expect_row_major(call, grad_output, "grad_output"));
  ETRT_TRY(expect_row_major(call, indices, "indices"));
  ETRT_TRY(shape_output(call, grad_input, self.sizes, r, "grad_input"));
  int64_t planes = 1;
  for (int32_t d = 0; d < r - 2; ++d) planes *= self.sizes[d];
  const int64_t out_plane = expected[r - 2] * expected[r - 1];
  if (self.dtype == ET_DTYPE_FLOAT64)
    return scatter<double>(call, grad_output, indices, grad_input, planes, H * W, out_plane);
  return scatter<float>(call, grad_output, indices, grad_input, planes, H * W, out_plane);
}

}  // namespace etrt_training_kernels
