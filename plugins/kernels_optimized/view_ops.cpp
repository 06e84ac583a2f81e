// View-like operators, each a strided view of its input copied out: reshapes
// (view_copy, squeeze/unsqueeze), permutes and transposes, expand, slice and select.
#include <cstring>

#include "pointwise_common.h"
#include "prepared_plan.h"

namespace etrt::kernels::pw {
namespace {

void move_bytes(void* to, const void* from, size_t bytes) {
  if (to == from) return;
  switch (bytes) {  // one element: a move instruction, not a call of memmove
    case 4: std::memcpy(to, from, 4); break;
    case 8: std::memcpy(to, from, 8); break;
    default: std::memmove(to, from, bytes); break;
  }
}

// Both row-major contiguous, same dtype (not bool: a copy normalises bools to 0/1): the bytes move as they are,
// without strided views or loops (the usual reshape of a small tensor). False when that does not apply.
bool copy_flat(const et_tensor& in, et_tensor& out, size_t numel) {
  if (in.dtype != out.dtype || in.dtype == ET_DTYPE_BOOL || !etrt::plugin::is_contiguous(in) ||
      !etrt::plugin::is_contiguous(out))
    return false;
  move_bytes(out.data, in.data, numel * element_size(in.dtype));
  return true;
}

// The result of reshaping `in` to `sizes` (same numel) written into `out`:
// elements in row-major logical order.
et_error* reshape_copy(const char* op, const et_tensor& in, et_tensor& out, const int64_t* sizes, int64_t rank) {
  ETRT_TRY(check_data(op, in, "self"));
  ETRT_TRY(check_storage(op, in, "self"));
  if (in.dtype != out.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(in.dtype));
  ETRT_TRY(resize_out(op, out, sizes, rank));
  size_t n = etrt::plugin::numel(out);
  if (n == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  if (copy_flat(in, out, n)) return nullptr;
  View src = view_of(in);
  View dst = view_of(out);
  if (dst.contiguous()) {
    if (out.data == in.data && src.contiguous()) return nullptr;  // an aliasing view: nothing to move
    copy_view(contiguous_view(out.dtype, in.rank, in.sizes, out.data), src);
    return nullptr;
  }
  Scratch scratch;
  View flat;
  if (!contiguous_as(src, in.dtype, scratch, &flat)) return out_of_memory(op);
  copy_view(dst, contiguous_view(out.dtype, out.rank, out.sizes, flat.data));
  return nullptr;
}

// Shape of `sizes` with a -1 inferred from numel.
et_error* infer_shape(const char* op, const IntArrayRef& size, int64_t numel, int64_t* out) {
  if (size.count > ET_MAX_RANK) return invalid(op, "size has " + str(int64_t(size.count)) + " dims, more than 16");
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < size.count; ++i) {
    int64_t s = size.items[i];
    if (s == -1) {
      if (infer >= 0) return invalid(op, "only one dimension of size " + list_str(size) + " can be inferred (-1)");
      infer = static_cast<int64_t>(i);
    } else if (s < 0) {
      return invalid(op, "invalid size " + str(s) + " at dim " + str(int64_t(i)) + " of " + list_str(size));
    } else {
      known *= s;
    }
    out[i] = s;
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      return invalid(op, "shape " + list_str(size) + " is invalid for input of size " + str(numel));
    out[infer] = numel / known;
  } else if (known != numel) {
    return invalid(op, "shape " + list_str(size) + " is invalid for input of size " + str(numel));
  }
  return nullptr;
}


et_error* permute(const char* op, const et_tensor& self, const int64_t* dims, size_t count, et_tensor& out) {
  if (count != static_cast<size_t>(self.rank))
    return invalid(op, "dims " + shape_string(dims, static_cast<int64_t>(count)) + " must list each of the " +
                           str(self.rank) + " dims of the input " + shape_string(self) + " once");
  View in = view_of(self), v = in;
  bool seen[ET_MAX_RANK] = {};
  for (size_t i = 0; i < count; ++i) {
    int64_t d = 0;
    ETRT_TRY(normalize_dim(op, dims[i], self.rank, &d));
    if (seen[d]) return invalid(op, "dim " + str(d) + " is repeated in dims " + shape_string(dims, static_cast<int64_t>(count)));
    seen[d] = true;
    v.sizes[i] = in.sizes[d];
    v.strides[i] = in.strides[d];
  }
  // A permutation that keeps the elements in row-major order (only size-1 dims move, as on a 1-element tensor) is
  // a flat copy when the output is already of its shape.
  if (self.dtype == out.dtype && v.contiguous() && out.rank == v.rank &&
      std::equal(v.sizes, v.sizes + v.rank, out.sizes) && self.data != nullptr && out.data != nullptr &&
      copy_flat(self, out, static_cast<size_t>(v.numel())))
    return nullptr;
  return view_copy_into(op, self, v, out);
}

// Prepared copies (prepared_plan.h): `src`, a view of self of out's shape, copied into out of self's dtype (not
// bool: a copy normalises bools), out already of that shape. The plan depends on the operator's int list too.
bool copy_plannable(const et_tensor& out, const et_tensor& self) {
  return self.dtype == out.dtype && self.dtype != ET_DTYPE_BOOL && is_storage_supported(self.dtype);
}
void plan_copy(LoopPlan& plan, const et_tensor& out, const et_tensor& self, const View& src, IntArrayRef list) {
  if (src.rank != out.rank || !std::equal(src.sizes, src.sizes + src.rank, out.sizes)) return;
  const View vo = view_of(out);
  plan.set({&out, &self}, make_loop(out.rank, out.sizes, {&vo, &src}), list);
}

// The copy of a plan that holds; false (nothing done) when out and self partly overlap, which the generic path
// handles (memmove).
bool run_copy_plan(const Loop& L, const et_tensor& out, const et_tensor& self) {
  const char* o = static_cast<const char*>(out.data);
  const char* i = static_cast<const char*>(self.data);
  if (o != i && o < i + self.nbytes && i < o + out.nbytes) return false;
  const int64_t es = static_cast<int64_t>(element_size(out.dtype));
  if (L.rank == 1 && (L.numel == 1 || (L.strides[0][0] == es && L.strides[1][0] == es))) {  // the bytes as they are
    move_bytes(L.data[0], L.data[1], static_cast<size_t>(L.numel * es));
    return true;
  }
  copy_loop(L, static_cast<size_t>(es));
  return true;
}

// The copies' kernels: the plan's loop when it holds, else the generic path and a new plan.
template <typename Generic, typename Planner>
et_error* copy_prepared(const Call& call, const et_tensor& self, IntArrayRef list, et_tensor& out, Generic&& generic,
                        Planner&& planner) {
  if (LoopPlan* plan = plan_of(call))
    if (const Loop* L = plan->bind({&out, &self}, list))
      if (run_copy_plan(*L, out, self)) return nullptr;
  return generic_then_replan(call, generic, planner);
}

// The planners return false when the dtypes rule the fast path out for good (prepared_plan.h).
bool plan_view_copy(LoopPlan& plan, const et_tensor& out, const et_tensor& self, IntArrayRef size) {
  plan.clear();
  if (!copy_plannable(out, self)) return false;
  int64_t shape[ET_MAX_RANK];
  if (!etrt::plugin::is_contiguous(self) || size.count > ET_MAX_RANK) return true;
  et_error* error = infer_shape("", size, static_cast<int64_t>(etrt::plugin::numel(self)), shape);
  if (error != nullptr) {  // symbolic sizes not computed yet at load, or a bad size the generic path reports
    host.api()->error_destroy(error);
    return true;
  }
  plan_copy(plan, out, self, contiguous_view(self.dtype, static_cast<int32_t>(size.count), shape, self.data), size);
  return true;
}

// The permuted view of self, or false for dims the generic path refuses.
bool permuted_view(const et_tensor& self, IntArrayRef dims, View* v) {
  if (dims.count != static_cast<size_t>(self.rank)) return false;
  *v = view_of(self);
  bool seen[ET_MAX_RANK] = {};
  for (size_t i = 0; i < dims.count; ++i) {
    int64_t d = dims.items[i] < 0 ? dims.items[i] + self.rank : dims.items[i];
    if (d < 0 || d >= self.rank || seen[d]) return false;
    seen[d] = true;
    v->sizes[i] = self.sizes[d];
    v->strides[i] = self.strides[d];
  }
  return true;
}

bool plan_permute_copy(LoopPlan& plan, const et_tensor& out, const et_tensor& self, IntArrayRef dims) {
  plan.clear();
  if (!copy_plannable(out, self)) return false;
  View v;
  if (static_cast<uint32_t>(self.rank) <= ET_MAX_RANK && permuted_view(self, dims, &v))
    plan_copy(plan, out, self, v, dims);
  return true;
}

}  // namespace

// view_copy.out(self, SymInt[] size, *, out)
et_error* view_copy_out(Call call, const Tensor& self, IntArrayRef size, Tensor& out) {
  return copy_prepared(
      call, self, size, out,
      [&] {
        int64_t shape[ET_MAX_RANK];
        ETRT_TRY(infer_shape(call.op, size, static_cast<int64_t>(etrt::plugin::numel(self)), shape));
        return reshape_copy(call.op, self, out, shape, static_cast<int64_t>(size.count));
      },
      [&](LoopPlan& plan) { return plan_view_copy(plan, out, self, size); });
}

et_error* prepare_view_copy_out(Prepare& prepare, const Tensor& self, IntArrayRef size, Tensor& out) {
  return prepare_plan(prepare, [&](LoopPlan& plan) { return plan_view_copy(plan, out, self, size); });
}

// unsqueeze_copy.out(self, int dim, *, out)
et_error* unsqueeze_copy_out(Call call, const Tensor& self, int64_t dim, Tensor& out) {
  const char* op = call.op;
  if (self.rank >= ET_MAX_RANK) return unsupported(op, "result rank would exceed 16");
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank + 1, &d));
  int64_t shape[ET_MAX_RANK];
  for (int64_t i = 0, j = 0; i <= self.rank; ++i) shape[i] = i == d ? 1 : self.sizes[j++];
  return reshape_copy(op, self, out, shape, self.rank + 1);
}

namespace {
et_error* squeeze(const char* op, const et_tensor& self, et_tensor& out, const bool* squeeze_dim) {
  int64_t shape[ET_MAX_RANK], rank = 0;
  for (int32_t i = 0; i < self.rank; ++i)
    if (!(squeeze_dim[i] && self.sizes[i] == 1)) shape[rank++] = self.sizes[i];
  return reshape_copy(op, self, out, shape, rank);
}
}  // namespace

// squeeze_copy.dims_out(self, int[] dim, *, out)
et_error* squeeze_copy_dims_out(Call call, const Tensor& self, IntArrayRef dims, Tensor& out) {
  const char* op = call.op;
  bool sq[ET_MAX_RANK] = {};
  for (size_t k = 0; k < dims.count; ++k) {
    int64_t d = 0;
    ETRT_TRY(normalize_dim(op, dims.items[k], self.rank, &d));
    if (self.rank > 0) sq[d] = true;
  }
  return squeeze(op, self, out, sq);
}

// squeeze_copy.dim_out(self, int dim, *, out)
et_error* squeeze_copy_dim_out(Call call, const Tensor& self, int64_t dim, Tensor& out) {
  const char* op = call.op;
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  bool sq[ET_MAX_RANK] = {};
  if (self.rank > 0) sq[d] = true;
  return squeeze(op, self, out, sq);
}

// squeeze_copy.out(self, *, out)
et_error* squeeze_copy_out(Call call, const Tensor& self, Tensor& out) {
  const char* op = call.op;
  bool sq[ET_MAX_RANK];
  std::fill(sq, sq + ET_MAX_RANK, true);
  return squeeze(op, self, out, sq);
}

// permute_copy.out(self, int[] dims, *, out)
et_error* permute_copy_out(Call call, const Tensor& self, IntArrayRef dims, Tensor& out) {
  return copy_prepared(
      call, self, dims, out, [&] { return permute(call.op, self, dims.items, dims.count, out); },
      [&](LoopPlan& plan) { return plan_permute_copy(plan, out, self, dims); });
}

et_error* prepare_permute_copy_out(Prepare& prepare, const Tensor& self, IntArrayRef dims, Tensor& out) {
  return prepare_plan(prepare, [&](LoopPlan& plan) { return plan_permute_copy(plan, out, self, dims); });
}

// transpose_copy.int_out(self, int dim0, int dim1, *, out)
et_error* transpose_copy_out(Call call, const Tensor& self, int64_t d0, int64_t d1, Tensor& out) {
  const char* op = call.op;
  int64_t a = 0, b = 0;
  ETRT_TRY(normalize_dim(op, d0, self.rank, &a, "dim0"));
  ETRT_TRY(normalize_dim(op, d1, self.rank, &b, "dim1"));
  int64_t dims[ET_MAX_RANK];
  for (int64_t i = 0; i < self.rank; ++i) dims[i] = i;
  if (self.rank > 0) std::swap(dims[a], dims[b]);
  return permute(op, self, dims, static_cast<size_t>(self.rank), out);
}

// t_copy.out(self, *, out): transpose of a rank <= 2 tensor
et_error* t_copy_out(Call call, const Tensor& self, Tensor& out) {
  const char* op = call.op;
  if (self.rank > 2) return invalid(op, "expects a tensor of rank <= 2, got shape " + shape_string(self));
  int64_t dims[2] = {self.rank == 2 ? 1 : 0, 0};
  return permute(op, self, dims, static_cast<size_t>(self.rank), out);
}

// expand_copy.out(self, SymInt[] size, *, bool implicit=False, out)
et_error* expand_copy_out(Call call, const Tensor& self, IntArrayRef size, bool implicit, Tensor& out) {
  const char* op = call.op;
  const int64_t rank = static_cast<int64_t>(size.count);
  if (rank < self.rank || rank > ET_MAX_RANK)
    return invalid(op, "size " + list_str(size) + " must have at least as many dims as the input " + shape_string(self));
  View in = view_of(self), v;
  v.dtype = in.dtype;
  v.rank = static_cast<int32_t>(rank);
  v.data = in.data;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t s = size.items[i];
    int64_t j = i - (rank - self.rank);
    if (j < 0) {
      if (s < 0) return invalid(op, "size " + list_str(size) + ": -1 is not allowed for a new leading dim");
      v.sizes[i] = s;
      v.strides[i] = 0;
      continue;
    }
    int64_t have = in.sizes[j];
    if (s == -1) s = have;
    if (have == s) {
      v.sizes[i] = s;
      v.strides[i] = in.strides[j];
    } else if (have == 1 && s >= 0) {
      v.sizes[i] = s;
      v.strides[i] = 0;
    } else {
      return invalid(op, "the expanded size " + str(s) + " must match the existing size " + str(have) + " at dim " +
                             str(i) + " (input " + shape_string(self) + ", size " + list_str(size) + ")");
    }
  }
  return view_copy_into(op, self, v, out);
}

// slice_copy.Tensor_out(self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *, out)
et_error* slice_copy_out(Call call, const Tensor& self, int64_t dim, std::optional<int64_t> start_arg,
                         std::optional<int64_t> end_arg, int64_t step, Tensor& out) {
  const char* op = call.op;
  int64_t d = 0;
  const bool has_start = start_arg.has_value(), has_end = end_arg.has_value();
  int64_t start = start_arg.value_or(0), end = end_arg.value_or(0);
  if (self.rank == 0) return invalid(op, "slice cannot be applied to a rank-0 tensor");
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  if (step <= 0) return invalid(op, "slice step must be positive, got " + str(step));
  const int64_t size = self.sizes[d];
  if (!has_start) start = 0;
  if (!has_end) end = size;
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, 0, size);
  const int64_t length = end > start ? (end - start + step - 1) / step : 0;
  View v = view_of(self).narrow(static_cast<int32_t>(d), length > 0 ? start : 0, length, step);
  return view_copy_into(op, self, v, out);
}

// select_copy.int_out(self, int dim, SymInt index, *, out)
et_error* select_copy_out(Call call, const Tensor& self, int64_t dim, int64_t index, Tensor& out) {
  const char* op = call.op;
  int64_t d = 0;
  if (self.rank == 0) return invalid(op, "select cannot be applied to a rank-0 tensor");
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  const int64_t size = self.sizes[d];
  if (index < -size || index >= size)
    return invalid(op, "index " + str(index) + " is out of range for dim " + str(d) + " of size " + str(size));
  if (index < 0) index += size;
  return view_copy_into(op, self, view_of(self).select(static_cast<int32_t>(d), index), out);
}


// narrow_copy.out(self, int dim, SymInt start, SymInt length, *, out)
et_error* narrow_copy_out(Call call, const Tensor& self, int64_t dim, int64_t start, int64_t length, Tensor& out) {
  const char* op = call.op;
  if (self.rank == 0) return invalid(op, "narrow cannot be applied to a rank-0 tensor");
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  const int64_t size = self.sizes[d];
  if (start < -size || start > size)
    return invalid(op, "start " + str(start) + " is out of range for dim " + str(d) + " of size " + str(size));
  if (start < 0) start += size;
  if (length < 0 || start + length > size)
    return invalid(op, "start " + str(start) + " + length " + str(length) + " exceeds dim " + str(d) + " of size " +
                           str(size));
  return view_copy_into(op, self, view_of(self).narrow(static_cast<int32_t>(d), start, length), out);
}

// diagonal_copy.out(self, int offset=0, int dim1=0, int dim2=1, *, out): the other
// dims in order, then the diagonal.
et_error* diagonal_copy_out(Call call, const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2, Tensor& out) {
  const char* op = call.op;
  if (self.rank < 2) return invalid(op, "diagonal needs at least 2 dims, got shape " + shape_string(self));
  int64_t a = 0, b = 0;
  ETRT_TRY(normalize_dim(op, dim1, self.rank, &a, "dim1"));
  ETRT_TRY(normalize_dim(op, dim2, self.rank, &b, "dim2"));
  if (a == b) return invalid(op, "dim1 and dim2 cannot be the same dim " + str(a));
  const View in = view_of(self);
  const int64_t n1 = in.sizes[a], n2 = in.sizes[b];
  const int64_t length = std::max<int64_t>(0, offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2));
  View v;
  v.dtype = in.dtype;
  v.data = in.data;
  if (length > 0)
    v.data += (offset >= 0 ? offset * in.strides[b] : -offset * in.strides[a]) * static_cast<int64_t>(in.esize());
  for (int32_t i = 0; i < in.rank; ++i) {
    if (i == a || i == b) continue;
    v.sizes[v.rank] = in.sizes[i];
    v.strides[v.rank++] = in.strides[i];
  }
  v.sizes[v.rank] = length;
  v.strides[v.rank++] = in.strides[a] + in.strides[b];
  return view_copy_into(op, self, v, out);
}

// as_strided_copy.out(self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None, *, out):
// a view of self's memory (self's first element is offset 0), checked to stay inside it.
et_error* as_strided_copy_out(Call call, const Tensor& self, IntArrayRef size, IntArrayRef stride,
                              std::optional<int64_t> storage_offset, Tensor& out) {
  const char* op = call.op;
  if (size.size() != stride.size())
    return invalid(op, "size " + list_str(size) + " and stride " + list_str(stride) + " must have the same length");
  if (size.size() > ET_MAX_RANK) return invalid(op, "size has more than 16 dims");
  const int64_t offset = storage_offset.value_or(0);
  if (offset < 0) return invalid(op, "storage_offset must be non-negative, got " + str(offset));
  View v;
  v.dtype = self.dtype;
  v.rank = static_cast<int32_t>(size.size());
  int64_t last = offset;
  bool empty = false;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] < 0 || stride[i] < 0)
      return invalid(op, "size " + list_str(size) + " and stride " + list_str(stride) + " must be non-negative");
    v.sizes[i] = size[i];
    v.strides[i] = stride[i];
    empty |= size[i] == 0;
    if (size[i] > 0) last += (size[i] - 1) * stride[i];
  }
  const int64_t available = static_cast<int64_t>(etrt::plugin::numel(self));
  if (!empty && last >= available)
    return invalid(op, "size " + list_str(size) + ", stride " + list_str(stride) + " and storage_offset " + str(offset) +
                           " reach element " + str(last) + " but self " + shape_string(self) + " has " + str(available));
  if (!empty && !view_of(self).contiguous())
    return unsupported(op, "self must be contiguous (its memory is what the strides address)");
  v.data = static_cast<char*>(self.data) + (empty ? 0 : offset * static_cast<int64_t>(element_size(self.dtype)));
  return view_copy_into(op, self, v, out);
}

// unfold_copy.out(self, int dimension, int size, int step, *, out): windows of
// `size` every `step` along `dimension`, as a new last dim.
et_error* unfold_copy_out(Call call, const Tensor& self, int64_t dimension, int64_t size, int64_t step, Tensor& out) {
  const char* op = call.op;
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dimension, self.rank, &d, "dimension"));
  if (step <= 0) return invalid(op, "step must be positive, got " + str(step));
  if (self.rank + 1 > ET_MAX_RANK) return unsupported(op, "result rank would exceed 16");
  View v = view_of(self);
  const int64_t n = self.rank == 0 ? 1 : v.sizes[d], s = self.rank == 0 ? 1 : v.strides[d];
  if (size < 0 || size > n)
    return invalid(op, "size " + str(size) + " must be in [0, " + str(n) + "] (the size of dimension " + str(d) + ")");
  if (self.rank == 0) {
    v.rank = 1;
    v.sizes[0] = size;
    v.strides[0] = 1;
    return view_copy_into(op, self, v, out);
  }
  v.sizes[d] = (n - size) / step + 1;
  v.strides[d] = s * step;
  v.sizes[v.rank] = size;
  v.strides[v.rank++] = s;
  return view_copy_into(op, self, v, out);
}

// unbind_copy.int_out(self, int dim=0, *, Tensor(a!)[] out) -> (): out[i] = self.select(dim, i).
et_error* unbind_copy_out(Call call, const Tensor& self, int64_t dim, TensorList out) {
  const char* op = call.op;
  if (self.rank == 0) return invalid(op, "unbind cannot be applied to a rank-0 tensor");
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  if (static_cast<int64_t>(out.size()) != self.sizes[d])
    return invalid(op, "out has " + str(static_cast<int64_t>(out.size())) + " tensors but dim " + str(d) + " of " +
                           shape_string(self) + " has size " + str(self.sizes[d]));
  for (size_t i = 0; i < out.size(); ++i)
    ETRT_TRY(view_copy_into(op, self, view_of(self).select(static_cast<int32_t>(d), static_cast<int64_t>(i)), out[i]));
  return nullptr;
}


}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> view_ops_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_VIEW_OPS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
