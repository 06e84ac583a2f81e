// Shape and copy operators: dtype/dim-order conversions, clones, reshapes,
// permutes, expand, squeeze/unsqueeze, cat/stack/split, slicing and padding.
// Each builds a strided view of its input (or of a slice of its output) and
// hands it to copy_view, which memcpys contiguous runs, blocks transposes and
// converts dtypes.
#include <vector>

#include "pointwise_common.h"
#include "pointwise_ops.h"

namespace etrt::kernels::pw {
namespace {

bool same_dim_order(const et_tensor& t, const IntList& order) {
  if (order.count != static_cast<size_t>(t.rank)) return false;
  for (int32_t i = 0; i < t.rank; ++i) {
    int64_t actual = t.dim_order ? t.dim_order[i] : i;
    if (order.items[i] != actual) return false;
  }
  return true;
}

std::string list_str(const IntList& l) { return shape_str(l.items, static_cast<int64_t>(l.count)); }

// Copies `in` into `out` element by element (same logical positions), with
// dtype conversion when `convert_dtype`.
et_error* elementwise_copy(const char* op, const et_tensor& in, et_tensor& out, bool convert_dtype) {
  PW_TRY(check_data(op, in, "self"));
  PW_TRY(check_storage(op, in, "self"));
  PW_TRY(check_storage(op, out, "out"));
  if (!convert_dtype && in.dtype != out.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(in.dtype));
  PW_TRY(resize_out(op, out, in.sizes, in.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  PW_TRY(check_data(op, out, "out"));
  if (out.data == in.data && in.dtype == out.dtype) {
    View a = view_of(in), b = view_of(out);
    bool same = true;
    for (int32_t i = 0; i < in.rank; ++i) same &= a.sizes[i] == 1 || a.strides[i] == b.strides[i];
    if (same) return nullptr;  // already in place (an aliasing view)
  }
  copy_view(view_of(out), view_of(in));
  return nullptr;
}

// The result of reshaping `in` to `sizes` (same numel) written into `out`:
// elements in row-major logical order.
et_error* reshape_copy(const char* op, const et_tensor& in, et_tensor& out, const int64_t* sizes, int64_t rank) {
  PW_TRY(check_data(op, in, "self"));
  PW_TRY(check_storage(op, in, "self"));
  if (in.dtype != out.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(in.dtype));
  PW_TRY(resize_out(op, out, sizes, rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  PW_TRY(check_data(op, out, "out"));
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

// memory_format: None, 0 contiguous, 1 preserve, 2 channels_last, 3 channels_last_3d.
et_error* check_memory_format(const char* op, const ArgReader& r, size_t index, const et_tensor& out) {
  if (r.is_null(index)) return nullptr;
  int64_t mf = 0;
  PW_TRY(r.integer(index, "memory_format", &mf));
  if (mf == 1) return nullptr;
  if (mf == 0) {
    if (default_dim_order(out)) return nullptr;
    return invalid(op, "memory_format contiguous_format does not match the output's dim order " + dim_order_str(out));
  }
  if (mf == 2 || mf == 3) {
    bool ok = out.rank == (mf == 2 ? 4 : 5) && out.dim_order != nullptr && out.dim_order[0] == 0 &&
              out.dim_order[out.rank - 1] == 1;
    for (int32_t i = 1; ok && i + 1 < out.rank; ++i) ok = out.dim_order[i] == i + 1;
    if (ok) return nullptr;
    return invalid(op, std::string("memory_format ") + (mf == 2 ? "channels_last" : "channels_last_3d") +
                           " does not match the output's dim order " + dim_order_str(out));
  }
  return unsupported(op, "memory_format " + str(mf) + " is not supported");
}

et_error* check_dim_order_arg(const char* op, const ArgReader& r, size_t index, const et_tensor& out) {
  bool present = false;
  IntList order;
  PW_TRY(r.opt_int_list(index, "dim_order", &present, &order));
  if (!present) {
    if (default_dim_order(out)) return nullptr;
    return invalid(op, "dim_order None (contiguous) does not match the output's dim order " + dim_order_str(out));
  }
  if (!same_dim_order(out, order))
    return invalid(op, "dim_order " + list_str(order) + " does not match the output's dim order " + dim_order_str(out));
  return nullptr;
}

// Shape of `sizes` with a -1 inferred from numel.
et_error* infer_shape(const char* op, const IntList& size, int64_t numel, int64_t* out) {
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

}  // namespace

// _to_copy.out(self, *, bool non_blocking=False, MemoryFormat? memory_format=None, out)
et_error* to_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::_to_copy.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.tensor(3, "out", &out));
  PW_TRY(check_memory_format(op, r, 2, *out));
  return elementwise_copy(op, *self, *out, true);
}

// dim_order_ops::_to_dim_order_copy.out(self, *, bool non_blocking=False, int[]? dim_order=None, out)
et_error* to_dim_order_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "dim_order_ops::_to_dim_order_copy.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.tensor(3, "out", &out));
  PW_TRY(check_dim_order_arg(op, r, 2, *out));
  return elementwise_copy(op, *self, *out, true);
}

// clone.out(self, *, MemoryFormat? memory_format=None, out)
et_error* clone_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::clone.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.tensor(2, "out", &out));
  PW_TRY(check_memory_format(op, r, 1, *out));
  return elementwise_copy(op, *self, *out, false);
}

// dim_order_ops::_clone_dim_order.out(self, *, bool non_blocking=False, int[]? dim_order=None, out)
et_error* clone_dim_order_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "dim_order_ops::_clone_dim_order.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.tensor(3, "out", &out));
  PW_TRY(check_dim_order_arg(op, r, 2, *out));
  return elementwise_copy(op, *self, *out, false);
}

// alias_copy.out(self, *, out)
et_error* alias_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::alias_copy.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(3));
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.tensor(1, "out", &out));
  return elementwise_copy(op, *self, *out, false);
}

namespace {
// self <- src broadcast to self's shape, converted to self's dtype.
et_error* copy_into(const char* op, const et_tensor& src, const View& dst, const et_tensor& self) {
  PW_TRY(check_data(op, src, "src"));
  PW_TRY(check_storage(op, src, "src"));
  PW_TRY(check_storage(op, self, "self"));
  bool ok = src.rank <= dst.rank;
  for (int32_t i = 0; ok && i < src.rank; ++i) {
    int64_t s = src.sizes[i], d = dst.sizes[dst.rank - src.rank + i];
    ok = s == d || s == 1;
  }
  if (!ok) return invalid(op, "src of shape " + shape_str(src) + " does not broadcast to self's shape " + shape_str(self));
  if (dst.numel() == 0) return nullptr;
  if (dst.data == src.data && src.dtype == dst.dtype) return nullptr;
  copy_view(dst, view_of(src));
  return nullptr;
}
}  // namespace

// copy_(self, src, bool non_blocking=False) -> self (in place; the return is self again)
et_error* copy_inplace(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::copy_";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *src = nullptr, *ret = nullptr;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.tensor(1, "src", &src));
  PW_TRY(r.tensor(3, "return", &ret));
  PW_TRY(check_data(op, *self, "self"));
  return copy_into(op, *src, view_of(*self), *self);
}

// copy.out(self, src, bool non_blocking=False, *, out)
et_error* copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::copy.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *src = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.tensor(1, "src", &src));
  PW_TRY(r.tensor(3, "out", &out));
  PW_TRY(check_storage(op, *out, "out"));
  if (out->dtype != self->dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out->dtype) + " must match self's dtype " +
                           dtype_name(self->dtype));
  PW_TRY(resize_out(op, *out, self->sizes, self->rank));
  PW_TRY(check_data(op, *out, "out"));
  return copy_into(op, *src, view_of(*out), *self);
}

// view_copy.out(self, SymInt[] size, *, out)
et_error* view_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::view_copy.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *out = nullptr;
  IntList size;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.int_list(1, "size", &size));
  PW_TRY(r.tensor(2, "out", &out));
  int64_t shape[ET_MAX_RANK];
  PW_TRY(infer_shape(op, size, static_cast<int64_t>(etrt::plugin::numel(*self)), shape));
  return reshape_copy(op, *self, *out, shape, static_cast<int64_t>(size.count));
}

// unsqueeze_copy.out(self, int dim, *, out)
et_error* unsqueeze_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::unsqueeze_copy.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *out = nullptr;
  int64_t dim = 0;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.integer(1, "dim", &dim));
  PW_TRY(r.tensor(2, "out", &out));
  if (self->rank >= ET_MAX_RANK) return unsupported(op, "result rank would exceed 16");
  int64_t d = 0;
  PW_TRY(normalize_dim(op, dim, self->rank + 1, &d));
  int64_t shape[ET_MAX_RANK];
  for (int64_t i = 0, j = 0; i <= self->rank; ++i) shape[i] = i == d ? 1 : self->sizes[j++];
  return reshape_copy(op, *self, *out, shape, self->rank + 1);
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
et_error* squeeze_copy_dims_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::squeeze_copy.dims_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *out = nullptr;
  IntList dims;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.int_list(1, "dim", &dims));
  PW_TRY(r.tensor(2, "out", &out));
  bool sq[ET_MAX_RANK] = {};
  for (size_t k = 0; k < dims.count; ++k) {
    int64_t d = 0;
    PW_TRY(normalize_dim(op, dims.items[k], self->rank, &d));
    if (self->rank > 0) sq[d] = true;
  }
  return squeeze(op, *self, *out, sq);
}

// squeeze_copy.dim_out(self, int dim, *, out)
et_error* squeeze_copy_dim_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::squeeze_copy.dim_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *out = nullptr;
  int64_t dim = 0, d = 0;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.integer(1, "dim", &dim));
  PW_TRY(r.tensor(2, "out", &out));
  PW_TRY(normalize_dim(op, dim, self->rank, &d));
  bool sq[ET_MAX_RANK] = {};
  if (self->rank > 0) sq[d] = true;
  return squeeze(op, *self, *out, sq);
}

// squeeze_copy.out(self, *, out)
et_error* squeeze_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::squeeze_copy.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(3));
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.tensor(1, "out", &out));
  bool sq[ET_MAX_RANK];
  std::fill(sq, sq + ET_MAX_RANK, true);
  return squeeze(op, *self, *out, sq);
}

namespace {
// out <- src (a strided view of self of out's logical shape).
et_error* view_copy_into(const char* op, const et_tensor& self, const View& src, et_tensor& out) {
  PW_TRY(check_storage(op, self, "self"));
  if (self.dtype != out.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(self.dtype));
  PW_TRY(resize_out(op, out, src.sizes, src.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  PW_TRY(check_data(op, out, "out"));
  PW_TRY(check_data(op, self, "self"));
  copy_view(view_of(out), src);
  return nullptr;
}

et_error* permute(const char* op, const et_tensor& self, const int64_t* dims, size_t count, et_tensor& out) {
  if (count != static_cast<size_t>(self.rank))
    return invalid(op, "dims " + shape_str(dims, static_cast<int64_t>(count)) + " must list each of the " +
                           str(self.rank) + " dims of the input " + shape_str(self) + " once");
  View in = view_of(self), v = in;
  bool seen[ET_MAX_RANK] = {};
  for (size_t i = 0; i < count; ++i) {
    int64_t d = 0;
    PW_TRY(normalize_dim(op, dims[i], self.rank, &d));
    if (seen[d]) return invalid(op, "dim " + str(d) + " is repeated in dims " + shape_str(dims, static_cast<int64_t>(count)));
    seen[d] = true;
    v.sizes[i] = in.sizes[d];
    v.strides[i] = in.strides[d];
  }
  return view_copy_into(op, self, v, out);
}
}  // namespace

// permute_copy.out(self, int[] dims, *, out)
et_error* permute_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::permute_copy.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *out = nullptr;
  IntList dims;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.int_list(1, "dims", &dims));
  PW_TRY(r.tensor(2, "out", &out));
  return permute(op, *self, dims.items, dims.count, *out);
}

// transpose_copy.int_out(self, int dim0, int dim1, *, out)
et_error* transpose_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::transpose_copy.int_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *out = nullptr;
  int64_t d0 = 0, d1 = 0, a = 0, b = 0;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.integer(1, "dim0", &d0));
  PW_TRY(r.integer(2, "dim1", &d1));
  PW_TRY(r.tensor(3, "out", &out));
  PW_TRY(normalize_dim(op, d0, self->rank, &a, "dim0"));
  PW_TRY(normalize_dim(op, d1, self->rank, &b, "dim1"));
  int64_t dims[ET_MAX_RANK];
  for (int64_t i = 0; i < self->rank; ++i) dims[i] = i;
  if (self->rank > 0) std::swap(dims[a], dims[b]);
  return permute(op, *self, dims, static_cast<size_t>(self->rank), *out);
}

// t_copy.out(self, *, out): transpose of a rank <= 2 tensor
et_error* t_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::t_copy.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(3));
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.tensor(1, "out", &out));
  if (self->rank > 2) return invalid(op, "expects a tensor of rank <= 2, got shape " + shape_str(*self));
  int64_t dims[2] = {self->rank == 2 ? 1 : 0, 0};
  return permute(op, *self, dims, static_cast<size_t>(self->rank), *out);
}

// expand_copy.out(self, SymInt[] size, *, bool implicit=False, out)
et_error* expand_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::expand_copy.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *out = nullptr;
  IntList size;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.int_list(1, "size", &size));
  PW_TRY(r.tensor(3, "out", &out));
  const int64_t rank = static_cast<int64_t>(size.count);
  if (rank < self->rank || rank > ET_MAX_RANK)
    return invalid(op, "size " + list_str(size) + " must have at least as many dims as the input " + shape_str(*self));
  View in = view_of(*self), v;
  v.dtype = in.dtype;
  v.rank = static_cast<int32_t>(rank);
  v.data = in.data;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t s = size.items[i];
    int64_t j = i - (rank - self->rank);
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
                             str(i) + " (input " + shape_str(*self) + ", size " + list_str(size) + ")");
    }
  }
  return view_copy_into(op, *self, v, *out);
}

// slice_copy.Tensor_out(self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *, out)
et_error* slice_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::slice_copy.Tensor_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(7));
  et_tensor *self = nullptr, *out = nullptr;
  int64_t dim = 0, start = 0, end = 0, step = 0, d = 0;
  bool has_start = false, has_end = false;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.integer(1, "dim", &dim));
  PW_TRY(r.opt_integer(2, "start", &has_start, &start));
  PW_TRY(r.opt_integer(3, "end", &has_end, &end));
  PW_TRY(r.integer(4, "step", &step));
  PW_TRY(r.tensor(5, "out", &out));
  if (self->rank == 0) return invalid(op, "slice cannot be applied to a rank-0 tensor");
  PW_TRY(normalize_dim(op, dim, self->rank, &d));
  if (step <= 0) return invalid(op, "slice step must be positive, got " + str(step));
  const int64_t size = self->sizes[d];
  if (!has_start) start = 0;
  if (!has_end) end = size;
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, 0, size);
  const int64_t length = end > start ? (end - start + step - 1) / step : 0;
  View v = view_of(*self).narrow(static_cast<int32_t>(d), length > 0 ? start : 0, length, step);
  return view_copy_into(op, *self, v, *out);
}

// select_copy.int_out(self, int dim, SymInt index, *, out)
et_error* select_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::select_copy.int_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *out = nullptr;
  int64_t dim = 0, index = 0, d = 0;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.integer(1, "dim", &dim));
  PW_TRY(r.integer(2, "index", &index));
  PW_TRY(r.tensor(3, "out", &out));
  if (self->rank == 0) return invalid(op, "select cannot be applied to a rank-0 tensor");
  PW_TRY(normalize_dim(op, dim, self->rank, &d));
  const int64_t size = self->sizes[d];
  if (index < -size || index >= size)
    return invalid(op, "index " + str(index) + " is out of range for dim " + str(d) + " of size " + str(size));
  if (index < 0) index += size;
  return view_copy_into(op, *self, view_of(*self).select(static_cast<int32_t>(d), index), *out);
}

// cat.out(Tensor[] tensors, int dim=0, *, out)
et_error* cat_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::cat.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor* const* ts = nullptr;
  size_t n = 0;
  int64_t dim = 0;
  et_tensor* out = nullptr;
  PW_TRY(r.tensor_list(0, "tensors", false, &ts, &n));
  PW_TRY(r.integer(1, "dim", &dim));
  PW_TRY(r.tensor(2, "out", &out));
  PW_TRY(check_storage(op, *out, "out"));
  if (n == 0) return invalid(op, "expected a non-empty list of tensors");
  // Legacy rule: 1-D empty tensors are skipped.
  auto skipped = [](const et_tensor* t) { return t->rank == 1 && t->sizes[0] == 0; };
  const et_tensor* ref = nullptr;
  ResultType rt;
  for (size_t i = 0; i < n; ++i) {
    PW_TRY(check_storage(op, *ts[i], "tensors"));
    PW_TRY(check_data(op, *ts[i], "tensors"));
    rt.add(*ts[i]);
    if (!ref && !skipped(ts[i])) ref = ts[i];
  }
  int32_t common = rt.get();
  PW_TRY(check_result_cast(op, common, out->dtype));
  if (ref == nullptr) {  // everything empty
    int64_t zero = 0;
    return out->rank == 1 ? resize_out(op, *out, &zero, 1) : nullptr;
  }
  if (ref->rank == 0) return invalid(op, "zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t d = 0;
  PW_TRY(normalize_dim(op, dim, ref->rank, &d));
  int64_t shape[ET_MAX_RANK];
  for (int32_t i = 0; i < ref->rank; ++i) shape[i] = ref->sizes[i];
  shape[d] = 0;
  for (size_t k = 0; k < n; ++k) {
    const et_tensor* t = ts[k];
    if (skipped(t)) continue;
    if (t->rank != ref->rank)
      return invalid(op, "tensors must have the same rank: tensor 0 has shape " + shape_str(*ref) + ", tensor " +
                             str(int64_t(k)) + " has shape " + shape_str(*t));
    for (int32_t i = 0; i < t->rank; ++i)
      if (i != d && t->sizes[i] != ref->sizes[i])
        return invalid(op, "sizes of tensors must match except in dim " + str(d) + ": " + shape_str(*ref) + " vs " +
                               shape_str(*t) + " (tensor " + str(int64_t(k)) + ")");
    shape[d] += t->sizes[d];
  }
  PW_TRY(resize_out(op, *out, shape, ref->rank));
  if (etrt::plugin::numel(*out) == 0) return nullptr;
  PW_TRY(check_data(op, *out, "out"));
  View ov = view_of(*out);
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
et_error* stack_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::stack.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor* const* ts = nullptr;
  size_t n = 0;
  int64_t dim = 0, d = 0;
  et_tensor* out = nullptr;
  PW_TRY(r.tensor_list(0, "tensors", false, &ts, &n));
  PW_TRY(r.integer(1, "dim", &dim));
  PW_TRY(r.tensor(2, "out", &out));
  PW_TRY(check_storage(op, *out, "out"));
  if (n == 0) return invalid(op, "expected a non-empty list of tensors");
  const et_tensor& ref = *ts[0];
  if (ref.rank >= ET_MAX_RANK) return unsupported(op, "result rank would exceed 16");
  PW_TRY(normalize_dim(op, dim, ref.rank + 1, &d));
  ResultType rt;
  for (size_t k = 0; k < n; ++k) {
    PW_TRY(check_storage(op, *ts[k], "tensors"));
    PW_TRY(check_data(op, *ts[k], "tensors"));
    rt.add(*ts[k]);
    bool same = ts[k]->rank == ref.rank;
    for (int32_t i = 0; same && i < ref.rank; ++i) same = ts[k]->sizes[i] == ref.sizes[i];
    if (!same)
      return invalid(op, "stack expects each tensor to be equal size, but got " + shape_str(ref) + " at entry 0 and " +
                             shape_str(*ts[k]) + " at entry " + str(int64_t(k)));
  }
  PW_TRY(check_result_cast(op, rt.get(), out->dtype));
  int64_t shape[ET_MAX_RANK];
  for (int64_t i = 0, j = 0; i <= ref.rank; ++i) shape[i] = i == d ? static_cast<int64_t>(n) : ref.sizes[j++];
  PW_TRY(resize_out(op, *out, shape, ref.rank + 1));
  if (etrt::plugin::numel(*out) == 0) return nullptr;
  PW_TRY(check_data(op, *out, "out"));
  View ov = view_of(*out);
  for (size_t k = 0; k < n; ++k) copy_view(ov.select(static_cast<int32_t>(d), static_cast<int64_t>(k)), view_of(*ts[k]));
  return nullptr;
}

namespace {
et_error* split_into(const char* op, const et_tensor& self, const int64_t* sizes, size_t count, int64_t dim,
                     et_tensor* const* outs, size_t nouts) {
  PW_TRY(check_data(op, self, "self"));
  PW_TRY(check_storage(op, self, "self"));
  if (self.rank == 0) return invalid(op, "cannot split a rank-0 tensor");
  int64_t d = 0;
  PW_TRY(normalize_dim(op, dim, self.rank, &d));
  if (nouts != count)
    return invalid(op, "out has " + str(int64_t(nouts)) + " tensors but there are " + str(int64_t(count)) + " splits");
  int64_t total = 0;
  for (size_t k = 0; k < count; ++k) {
    if (sizes[k] < 0) return invalid(op, "split sizes must be non-negative, got " + str(sizes[k]));
    total += sizes[k];
  }
  if (total != self.sizes[d])
    return invalid(op, "split sizes " + shape_str(sizes, static_cast<int64_t>(count)) + " must sum to the size " +
                           str(self.sizes[d]) + " of dim " + str(d));
  View in = view_of(self);
  int64_t offset = 0;
  for (size_t k = 0; k < count; ++k) {
    PW_TRY(view_copy_into(op, self, in.narrow(static_cast<int32_t>(d), offset, sizes[k]), *outs[k]));
    offset += sizes[k];
  }
  return nullptr;
}
}  // namespace

// split_with_sizes_copy.out(self, SymInt[] split_sizes, int dim=0, *, Tensor(a!)[] out) -> ()
et_error* split_with_sizes_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::split_with_sizes_copy.out";
  ArgReader r(op, args, nargs);
  if (nargs != 5) PW_TRY(r.count(4));
  et_tensor* self = nullptr;
  IntList sizes;
  int64_t dim = 0;
  et_tensor* const* outs = nullptr;
  size_t nouts = 0;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.int_list(1, "split_sizes", &sizes));
  PW_TRY(r.integer(2, "dim", &dim));
  PW_TRY(r.tensor_list(3, "out", false, &outs, &nouts));
  return split_into(op, *self, sizes.items, sizes.count, dim, outs, nouts);
}

// split_copy.Tensor_out(self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()
et_error* split_copy_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::split_copy.Tensor_out";
  ArgReader r(op, args, nargs);
  if (nargs != 5) PW_TRY(r.count(4));
  et_tensor* self = nullptr;
  int64_t split = 0, dim = 0, d = 0;
  et_tensor* const* outs = nullptr;
  size_t nouts = 0;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.integer(1, "split_size", &split));
  PW_TRY(r.integer(2, "dim", &dim));
  PW_TRY(r.tensor_list(3, "out", false, &outs, &nouts));
  if (self->rank == 0) return invalid(op, "cannot split a rank-0 tensor");
  PW_TRY(normalize_dim(op, dim, self->rank, &d));
  if (split < 0) return invalid(op, "split_size must be non-negative, got " + str(split));
  const int64_t size = self->sizes[d];
  std::vector<int64_t> sizes;
  if (split == 0) {
    if (size != 0) return invalid(op, "split_size can only be 0 if dim size is 0, got dim size " + str(size));
    sizes.push_back(0);
  } else {
    for (int64_t o = 0; o < size; o += split) sizes.push_back(std::min(split, size - o));
    if (sizes.empty()) sizes.push_back(0);
  }
  return split_into(op, *self, sizes.data(), sizes.size(), d, outs, nouts);
}

// constant_pad_nd.out(self, SymInt[] pad, Scalar value=0, *, out)
et_error* constant_pad_nd_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::constant_pad_nd.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *out = nullptr;
  IntList pad;
  Scalar value;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.int_list(1, "pad", &pad));
  PW_TRY(r.scalar(2, "value", &value));
  PW_TRY(r.tensor(3, "out", &out));
  PW_TRY(check_data(op, *self, "self"));
  PW_TRY(check_storage(op, *self, "self"));
  if (out->dtype != self->dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out->dtype) + " must match the input dtype " +
                           dtype_name(self->dtype));
  if (pad.count % 2 != 0) return invalid(op, "pad length must be even, got " + list_str(pad));
  if (pad.count / 2 > static_cast<size_t>(self->rank))
    return invalid(op, "pad " + list_str(pad) + " pads more dims than the input " + shape_str(*self) + " has");
  int64_t shape[ET_MAX_RANK], before[ET_MAX_RANK] = {};
  for (int32_t i = 0; i < self->rank; ++i) shape[i] = self->sizes[i];
  for (size_t k = 0; k < pad.count / 2; ++k) {
    int32_t d = self->rank - 1 - static_cast<int32_t>(k);
    before[d] = pad.items[2 * k];
    shape[d] = self->sizes[d] + pad.items[2 * k] + pad.items[2 * k + 1];
    if (shape[d] < 0)
      return invalid(op, "pad " + list_str(pad) + " gives a negative size " + str(shape[d]) + " for dim " + str(d) +
                             " of input " + shape_str(*self));
  }
  PW_TRY(resize_out(op, *out, shape, self->rank));
  if (etrt::plugin::numel(*out) == 0) return nullptr;
  PW_TRY(check_data(op, *out, "out"));
  View ov = view_of(*out), iv = view_of(*self);
  fill_view(ov, value);
  for (int32_t d = 0; d < self->rank; ++d) {
    const int64_t src = std::max<int64_t>(0, -before[d]), dst = std::max<int64_t>(0, before[d]);
    const int64_t len = std::min(self->sizes[d] - src, shape[d] - dst);
    if (len <= 0) return nullptr;  // the input is cropped away entirely
    ov = ov.narrow(d, dst, len);
    iv = iv.narrow(d, src, len);
  }
  copy_view(ov, iv);
  return nullptr;
}

// repeat.out(self, SymInt[] repeats, *, out)
et_error* repeat_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::repeat.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *out = nullptr;
  IntList reps;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.int_list(1, "repeats", &reps));
  PW_TRY(r.tensor(2, "out", &out));
  PW_TRY(check_data(op, *self, "self"));
  PW_TRY(check_storage(op, *self, "self"));
  const int64_t rank = static_cast<int64_t>(reps.count);
  if (rank < self->rank || rank > ET_MAX_RANK / 2)
    return invalid(op, "repeats " + list_str(reps) + " must have at least as many dims as the input " +
                           shape_str(*self) + " (and at most 8)");
  if (out->dtype != self->dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out->dtype) + " must match the input dtype " +
                           dtype_name(self->dtype));
  int64_t shape[ET_MAX_RANK];
  View in = view_of(*self);
  // Output viewed as [r0, s0, r1, s1, ...]: the input broadcast along the r dims.
  View src, dst;
  src.dtype = dst.dtype = self->dtype;
  src.rank = dst.rank = static_cast<int32_t>(2 * rank);
  src.data = in.data;
  for (int64_t i = 0; i < rank; ++i) {
    if (reps.items[i] < 0) return invalid(op, "repeats must be non-negative, got " + list_str(reps));
    int64_t j = i - (rank - self->rank);
    int64_t s = j >= 0 ? in.sizes[j] : 1;
    shape[i] = s * reps.items[i];
    src.sizes[2 * i] = reps.items[i];
    src.strides[2 * i] = 0;
    src.sizes[2 * i + 1] = s;
    src.strides[2 * i + 1] = j >= 0 ? in.strides[j] : 0;
  }
  PW_TRY(resize_out(op, *out, shape, rank));
  if (etrt::plugin::numel(*out) == 0) return nullptr;
  PW_TRY(check_data(op, *out, "out"));
  View ov = view_of(*out);
  if (!ov.contiguous()) return unsupported(op, "output dim order " + dim_order_str(*out) + " is not supported");
  for (int32_t i = 0; i < src.rank; ++i) dst.sizes[i] = src.sizes[i];
  dst = contiguous_view(self->dtype, src.rank, src.sizes, out->data);
  copy_view(dst, src);
  return nullptr;
}

}  // namespace etrt::kernels::pw
