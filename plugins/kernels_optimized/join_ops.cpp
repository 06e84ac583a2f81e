// Operators that join, split or tile tensors: cat, stack, split_copy,
// split_with_sizes_copy, constant_pad_nd and repeat.
#include <vector>

#include "pointwise_common.h"

namespace etrt::kernels::pw {

// cat.out(Tensor[] tensors, int dim=0, *, out)
et_error* cat_out(Call call, TensorList tensors, int64_t dim, Tensor& out) {
  const char* op = call.op;
  et_tensor* const* ts = tensors.items;
  const size_t n = tensors.count;
  ETRT_TRY(check_storage(op, out, "out"));
  if (n == 0) return invalid(op, "expected a non-empty list of tensors");
  // Legacy rule: 1-D empty tensors are skipped.
  auto skipped = [](const et_tensor* t) { return t->rank == 1 && t->sizes[0] == 0; };
  const et_tensor* ref = nullptr;
  ResultType rt;
  for (size_t i = 0; i < n; ++i) {
    ETRT_TRY(check_storage(op, *ts[i], "tensors"));
    ETRT_TRY(check_data(op, *ts[i], "tensors"));
    rt.add(*ts[i]);
    if (!ref && !skipped(ts[i])) ref = ts[i];
  }
  int32_t common = rt.get();
  ETRT_TRY(check_result_cast(op, common, out.dtype));
  if (ref == nullptr) {  // everything empty
    int64_t zero = 0;
    return out.rank == 1 ? resize_out(op, out, &zero, 1) : nullptr;
  }
  if (ref->rank == 0) return invalid(op, "zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, ref->rank, &d));
  int64_t shape[ET_MAX_RANK];
  for (int32_t i = 0; i < ref->rank; ++i) shape[i] = ref->sizes[i];
  shape[d] = 0;
  for (size_t k = 0; k < n; ++k) {
    const et_tensor* t = ts[k];
    if (skipped(t)) continue;
    if (t->rank != ref->rank)
      return invalid(op, "tensors must have the same rank: tensor 0 has shape " + shape_string(*ref) + ", tensor " +
                             str(int64_t(k)) + " has shape " + shape_string(*t));
    for (int32_t i = 0; i < t->rank; ++i)
      if (i != d && t->sizes[i] != ref->sizes[i])
        return invalid(op, "sizes of tensors must match except in dim " + str(d) + ": " + shape_string(*ref) + " vs " +
                               shape_string(*t) + " (tensor " + str(int64_t(k)) + ")");
    shape[d] += t->sizes[d];
  }
  ETRT_TRY(resize_out(op, out, shape, ref->rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  View ov = view_of(out);
  int64_t offset = 0;
  for (size_t k = 0; k < n; ++k) {
    const et_tensor* t = ts[k];
    if (skipped(t)) continue;
    const int64_t len = t->sizes[d];
    if (len > 0 && etrt::plugin::numel(*t) > 0) copy_view(ov.narrow(static_cast<int32_t>(d), offset, len), view_of(*t));
    offset += len;
  }
  return nullptr;
}

// stack.out(Tensor[] tensors, int dim=0, *, out)
et_error* stack_out(Call call, TensorList tensors, int64_t dim, Tensor& out) {
  const char* op = call.op;
  et_tensor* const* ts = tensors.items;
  const size_t n = tensors.count;
  int64_t d = 0;
  ETRT_TRY(check_storage(op, out, "out"));
  if (n == 0) return invalid(op, "expected a non-empty list of tensors");
  const et_tensor& ref = *ts[0];
  if (ref.rank >= ET_MAX_RANK) return unsupported(op, "result rank would exceed 16");
  ETRT_TRY(normalize_dim(op, dim, ref.rank + 1, &d));
  ResultType rt;
  for (size_t k = 0; k < n; ++k) {
    ETRT_TRY(check_storage(op, *ts[k], "tensors"));
    ETRT_TRY(check_data(op, *ts[k], "tensors"));
    rt.add(*ts[k]);
    bool same = ts[k]->rank == ref.rank;
    for (int32_t i = 0; same && i < ref.rank; ++i) same = ts[k]->sizes[i] == ref.sizes[i];
    if (!same)
      return invalid(op, "stack expects each tensor to be equal size, but got " + shape_string(ref) + " at entry 0 and " +
                             shape_string(*ts[k]) + " at entry " + str(int64_t(k)));
  }
  ETRT_TRY(check_result_cast(op, rt.get(), out.dtype));
  int64_t shape[ET_MAX_RANK];
  for (int64_t i = 0, j = 0; i <= ref.rank; ++i) shape[i] = i == d ? static_cast<int64_t>(n) : ref.sizes[j++];
  ETRT_TRY(resize_out(op, out, shape, ref.rank + 1));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  View ov = view_of(out);
  for (size_t k = 0; k < n; ++k) copy_view(ov.select(static_cast<int32_t>(d), static_cast<int64_t>(k)), view_of(*ts[k]));
  return nullptr;
}

namespace {
et_error* split_into(const char* op, const et_tensor& self, const int64_t* sizes, size_t count, int64_t dim,
                     TensorList outs) {
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  if (self.rank == 0) return invalid(op, "cannot split a rank-0 tensor");
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  if (outs.size() != count)
    return invalid(op, "out has " + str(int64_t(outs.size())) + " tensors but there are " + str(int64_t(count)) + " splits");
  int64_t total = 0;
  for (size_t k = 0; k < count; ++k) {
    if (sizes[k] < 0) return invalid(op, "split sizes must be non-negative, got " + str(sizes[k]));
    total += sizes[k];
  }
  if (total != self.sizes[d])
    return invalid(op, "split sizes " + shape_string(sizes, static_cast<int64_t>(count)) + " must sum to the size " +
                           str(self.sizes[d]) + " of dim " + str(d));
  View in = view_of(self);
  int64_t offset = 0;
  for (size_t k = 0; k < count; ++k) {
    ETRT_TRY(view_copy_into(op, self, in.narrow(static_cast<int32_t>(d), offset, sizes[k]), outs[k]));
    offset += sizes[k];
  }
  return nullptr;
}
}  // namespace

// split_with_sizes_copy.out(self, SymInt[] split_sizes, int dim=0, *, Tensor(a!)[] out) -> ()
et_error* split_with_sizes_copy_out(Call call, const Tensor& self, IntArrayRef sizes, int64_t dim, TensorList out) {
  const char* op = call.op;
  return split_into(op, self, sizes.items, sizes.count, dim, out);
}

// split_copy.Tensor_out(self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()
et_error* split_copy_out(Call call, const Tensor& self, int64_t split, int64_t dim, TensorList out) {
  const char* op = call.op;
  int64_t d = 0;
  if (self.rank == 0) return invalid(op, "cannot split a rank-0 tensor");
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  if (split < 0) return invalid(op, "split_size must be non-negative, got " + str(split));
  const int64_t size = self.sizes[d];
  std::vector<int64_t> sizes;
  if (split == 0) {
    if (size != 0) return invalid(op, "split_size can only be 0 if dim size is 0, got dim size " + str(size));
    sizes.push_back(0);
  } else {
    for (int64_t o = 0; o < size; o += split) sizes.push_back(std::min(split, size - o));
    if (sizes.empty()) sizes.push_back(0);
  }
  return split_into(op, self, sizes.data(), sizes.size(), d, out);
}

// constant_pad_nd.out(self, SymInt[] pad, Scalar value=0, *, out)
et_error* constant_pad_nd_out(Call call, const Tensor& self, IntArrayRef pad, Scalar value, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  if (out.dtype != self.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(self.dtype));
  if (pad.count % 2 != 0) return invalid(op, "pad length must be even, got " + list_str(pad));
  if (pad.count / 2 > static_cast<size_t>(self.rank))
    return invalid(op, "pad " + list_str(pad) + " pads more dims than the input " + shape_string(self) + " has");
  int64_t shape[ET_MAX_RANK], before[ET_MAX_RANK] = {};
  for (int32_t i = 0; i < self.rank; ++i) shape[i] = self.sizes[i];
  for (size_t k = 0; k < pad.count / 2; ++k) {
    int32_t d = self.rank - 1 - static_cast<int32_t>(k);
    before[d] = pad.items[2 * k];
    shape[d] = self.sizes[d] + pad.items[2 * k] + pad.items[2 * k + 1];
    if (shape[d] < 0)
      return invalid(op, "pad " + list_str(pad) + " gives a negative size " + str(shape[d]) + " for dim " + str(d) +
                             " of input " + shape_string(self));
  }
  ETRT_TRY(resize_out(op, out, shape, self.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  View ov = view_of(out), iv = view_of(self);
  fill_view(ov, value);
  for (int32_t d = 0; d < self.rank; ++d) {
    const int64_t src = std::max<int64_t>(0, -before[d]), dst = std::max<int64_t>(0, before[d]);
    const int64_t len = std::min(self.sizes[d] - src, shape[d] - dst);
    if (len <= 0) return nullptr;  // the input is cropped away entirely
    ov = ov.narrow(d, dst, len);
    iv = iv.narrow(d, src, len);
  }
  copy_view(ov, iv);
  return nullptr;
}

// repeat.out(self, SymInt[] repeats, *, out)
et_error* repeat_out(Call call, const Tensor& self, IntArrayRef reps, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  const int64_t rank = static_cast<int64_t>(reps.count);
  if (rank < self.rank || rank > ET_MAX_RANK / 2)
    return invalid(op, "repeats " + list_str(reps) + " must have at least as many dims as the input " +
                           shape_string(self) + " (and at most 8)");
  if (out.dtype != self.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(self.dtype));
  int64_t shape[ET_MAX_RANK];
  View in = view_of(self);
  // Output viewed as [r0, s0, r1, s1, ...]: the input broadcast along the r dims.
  View src, dst;
  src.dtype = dst.dtype = self.dtype;
  src.rank = dst.rank = static_cast<int32_t>(2 * rank);
  src.data = in.data;
  for (int64_t i = 0; i < rank; ++i) {
    if (reps.items[i] < 0) return invalid(op, "repeats must be non-negative, got " + list_str(reps));
    int64_t j = i - (rank - self.rank);
    int64_t s = j >= 0 ? in.sizes[j] : 1;
    shape[i] = s * reps.items[i];
    src.sizes[2 * i] = reps.items[i];
    src.strides[2 * i] = 0;
    src.sizes[2 * i + 1] = s;
    src.strides[2 * i + 1] = j >= 0 ? in.strides[j] : 0;
  }
  ETRT_TRY(resize_out(op, out, shape, rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  View ov = view_of(out);
  if (!ov.contiguous()) return unsupported(op, "output dim order " + dim_order_string(out) + " is not supported");
  for (int32_t i = 0; i < src.rank; ++i) dst.sizes[i] = src.sizes[i];
  dst = contiguous_view(self.dtype, src.rank, src.sizes, out.data);
  copy_view(dst, src);
  return nullptr;
}


}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> join_ops_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_JOIN_OPS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
