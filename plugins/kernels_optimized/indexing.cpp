// Indexing and creation operators: embedding, index.Tensor (advanced
// indexing with int and bool index tensors), index_select, full/zeros/ones
// (and their _like forms), scalar_tensor, arange, triu/tril.
#include <vector>

#include "pointwise_common.h"
#include "pointwise_ops.h"

namespace etrt::kernels::pw {
namespace {

bool is_index_dtype(int32_t d) { return d == ET_DTYPE_INT64 || d == ET_DTYPE_INT32; }

// A contiguous int64 copy of an index tensor.
et_error* read_indices(const char* op, const et_tensor& t, const char* name, std::vector<int64_t>* out) {
  PW_TRY(check_data(op, t, name));
  if (!is_index_dtype(t.dtype))
    return invalid(op, std::string(name) + " must be an int64 or int32 tensor, got " + dtype_name(t.dtype));
  out->resize(etrt::plugin::numel(t));
  if (out->empty()) return nullptr;
  copy_view(contiguous_view(ET_DTYPE_INT64, t.rank, t.sizes, out->data()), view_of(t));
  return nullptr;
}

}  // namespace

// embedding.out(weight, indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False, *, out)
et_error* embedding_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::embedding.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(7));
  et_tensor *weight = nullptr, *indices = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "weight", &weight));
  PW_TRY(r.tensor(1, "indices", &indices));
  PW_TRY(r.tensor(5, "out", &out));
  PW_TRY(check_data(op, *weight, "weight"));
  PW_TRY(check_storage(op, *weight, "weight"));
  if (weight->rank != 2) return invalid(op, "weight must be 2-D, got shape " + shape_str(*weight));
  if (out->dtype != weight->dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out->dtype) + " must match the weight dtype " +
                           dtype_name(weight->dtype));
  if (indices->rank + 1 > ET_MAX_RANK) return unsupported(op, "result rank would exceed 16");
  std::vector<int64_t> idx;
  PW_TRY(read_indices(op, *indices, "indices", &idx));
  const int64_t V = weight->sizes[0], D = weight->sizes[1];
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] < 0 || idx[i] >= V)
      return invalid(op, "index " + str(idx[i]) + " (at flat position " + str(int64_t(i)) +
                             ") is out of range for a weight of " + str(V) + " rows");
  int64_t shape[ET_MAX_RANK];
  for (int32_t i = 0; i < indices->rank; ++i) shape[i] = indices->sizes[i];
  shape[indices->rank] = D;
  PW_TRY(resize_out(op, *out, shape, indices->rank + 1));
  if (etrt::plugin::numel(*out) == 0) return nullptr;
  PW_TRY(check_data(op, *out, "out"));
  Scratch ws;
  View w;
  if (!contiguous_as(view_of(*weight), weight->dtype, ws, &w)) return out_of_memory(op);
  OutputBuffer ob;
  if (!ob.init(*out, out->dtype, true)) return out_of_memory(op);
  const size_t row = static_cast<size_t>(D) * element_size(weight->dtype);
  const char* src = w.data;
  char* dst = ob.view().data;
  const int64_t* ip = idx.data();
  parallel(idx.size(), std::max<size_t>(1, kGrain / std::max<size_t>(1, static_cast<size_t>(D))),
           [&](size_t b, size_t e) {
             for (size_t i = b; i < e; ++i) std::memcpy(dst + i * row, src + static_cast<size_t>(ip[i]) * row, row);
           });
  ob.finish();
  return nullptr;
}

// index_select.out(self, int dim, Tensor index, *, out)
et_error* index_select_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::index_select.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *index = nullptr, *out = nullptr;
  int64_t dim = 0, d = 0;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.integer(1, "dim", &dim));
  PW_TRY(r.tensor(2, "index", &index));
  PW_TRY(r.tensor(3, "out", &out));
  PW_TRY(check_data(op, *self, "self"));
  PW_TRY(check_storage(op, *self, "self"));
  if (out->dtype != self->dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out->dtype) + " must match the input dtype " +
                           dtype_name(self->dtype));
  if (index->rank > 1) return invalid(op, "index must be 0-D or 1-D, got shape " + shape_str(*index));
  PW_TRY(normalize_dim(op, dim, self->rank, &d));
  std::vector<int64_t> idx;
  PW_TRY(read_indices(op, *index, "index", &idx));
  const int64_t size = self->rank == 0 ? 1 : self->sizes[d];
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] < 0 || idx[i] >= size)
      return invalid(op, "index " + str(idx[i]) + " is out of range for dim " + str(d) + " of size " + str(size));
  if (self->rank == 0) {
    if (idx.size() != 1) return invalid(op, "index of a rank-0 tensor must hold one element");
    PW_TRY(resize_out(op, *out, nullptr, 0));
    copy_view(view_of(*out), view_of(*self));
    return nullptr;
  }
  int64_t shape[ET_MAX_RANK];
  for (int32_t i = 0; i < self->rank; ++i) shape[i] = self->sizes[i];
  shape[d] = static_cast<int64_t>(idx.size());
  PW_TRY(resize_out(op, *out, shape, self->rank));
  if (etrt::plugin::numel(*out) == 0) return nullptr;
  PW_TRY(check_data(op, *out, "out"));
  View in = view_of(*self), ov = view_of(*out);
  for (size_t i = 0; i < idx.size(); ++i)
    copy_view(ov.select(static_cast<int32_t>(d), static_cast<int64_t>(i)), in.select(static_cast<int32_t>(d), idx[i]));
  return nullptr;
}

// index.Tensor_out(self, Tensor?[] indices, *, out): advanced indexing.
et_error* index_tensor_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::index.Tensor_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *out = nullptr;
  et_tensor* const* list = nullptr;
  size_t n = 0;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.tensor_list(1, "indices", true, &list, &n));
  PW_TRY(r.tensor(2, "out", &out));
  PW_TRY(check_data(op, *self, "self"));
  PW_TRY(check_storage(op, *self, "self"));
  if (out->dtype != self->dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out->dtype) + " must match the input dtype " +
                           dtype_name(self->dtype));
  // Expand the list into one int64 index vector (with its shape) per indexed dim.
  struct Index {
    int32_t dim;
    std::vector<int64_t> values;
    int64_t sizes[ET_MAX_RANK];
    int32_t rank;
  };
  std::vector<Index> idx;
  int32_t dim = 0;
  for (size_t k = 0; k < n; ++k) {
    const et_tensor* t = list[k];
    if (t == nullptr) {
      ++dim;
      continue;
    }
    PW_TRY(check_data(op, *t, "indices"));
    if (t->dtype == ET_DTYPE_BOOL || t->dtype == ET_DTYPE_UINT8) {
      // A mask over t->rank dims: their coordinates where it is true.
      if (t->rank == 0) return unsupported(op, "a rank-0 bool index is not supported");
      if (dim + t->rank > self->rank)
        return invalid(op, "too many indices for a tensor of shape " + shape_str(*self));
      for (int32_t i = 0; i < t->rank; ++i)
        if (t->sizes[i] != self->sizes[dim + i])
          return invalid(op, "the shape of mask " + shape_str(*t) + " at index " + str(int64_t(k)) +
                                 " does not match the shape of the indexed tensor " + shape_str(*self) +
                                 " starting at dim " + str(dim));
      std::vector<uint8_t> mask(etrt::plugin::numel(*t));
      if (!mask.empty()) copy_view(contiguous_view(ET_DTYPE_BOOL, t->rank, t->sizes, mask.data()), view_of(*t));
      int64_t count = 0;
      for (uint8_t m : mask) count += m != 0;
      size_t first = idx.size();
      for (int32_t i = 0; i < t->rank; ++i) {
        Index e;
        e.dim = dim + i;
        e.rank = 1;
        e.sizes[0] = count;
        e.values.reserve(static_cast<size_t>(count));
        idx.push_back(std::move(e));
      }
      for (size_t flat = 0; flat < mask.size(); ++flat) {
        if (!mask[flat]) continue;
        size_t rest = flat;
        for (int32_t i = t->rank - 1; i >= 0; --i) {
          idx[first + static_cast<size_t>(i)].values.push_back(static_cast<int64_t>(rest % static_cast<size_t>(t->sizes[i])));
          rest /= static_cast<size_t>(t->sizes[i]);
        }
      }
      dim += t->rank;
      continue;
    }
    if (dim >= self->rank) return invalid(op, "too many indices for a tensor of shape " + shape_str(*self));
    Index e;
    e.dim = dim;
    e.rank = t->rank;
    for (int32_t i = 0; i < t->rank; ++i) e.sizes[i] = t->sizes[i];
    PW_TRY(read_indices(op, *t, "indices", &e.values));
    const int64_t size = self->sizes[dim];
    for (int64_t& v : e.values) {
      if (v < -size || v >= size)
        return invalid(op, "index " + str(v) + " is out of bounds for dim " + str(dim) + " with size " + str(size));
      if (v < 0) v += size;
    }
    idx.push_back(std::move(e));
    ++dim;
  }
  if (idx.empty()) {  // only None entries: a plain copy
    PW_TRY(resize_out(op, *out, self->sizes, self->rank));
    if (etrt::plugin::numel(*out) > 0) copy_view(view_of(*out), view_of(*self));
    return nullptr;
  }
  // Broadcast the index shapes.
  int64_t B[ET_MAX_RANK], brank = 0;
  for (const Index& e : idx) {
    int64_t next[ET_MAX_RANK], nr;
    if (!broadcast_shapes(B, brank, e.sizes, e.rank, next, &nr))
      return invalid(op, "shape mismatch: indexing tensors could not be broadcast together (" +
                             shape_str(B, brank) + " and " + shape_str(e.sizes, e.rank) + ")");
    std::copy(next, next + nr, B);
    brank = nr;
  }
  int64_t bcount = 1;
  for (int64_t i = 0; i < brank; ++i) bcount *= B[i];
  // Each index broadcast to B, contiguous.
  std::vector<std::vector<int64_t>> flat(idx.size());
  for (size_t k = 0; k < idx.size(); ++k) {
    flat[k].resize(static_cast<size_t>(bcount));
    if (bcount == 0) continue;
    View src = contiguous_view(ET_DTYPE_INT64, idx[k].rank, idx[k].sizes, idx[k].values.data());
    copy_view(contiguous_view(ET_DTYPE_INT64, static_cast<int32_t>(brank), B, flat[k].data()), src);
  }
  bool indexed[ET_MAX_RANK] = {};
  int32_t first = self->rank, last = -1;
  for (const Index& e : idx) {
    if (indexed[e.dim]) return invalid(op, "dim " + str(e.dim) + " is indexed twice");
    indexed[e.dim] = true;
    first = std::min(first, e.dim);
    last = std::max(last, e.dim);
  }
  const bool adjacent = last - first + 1 == static_cast<int32_t>(idx.size());
  // Output shape and the per-b sub-views.
  View in = view_of(*self);
  View in_sub;  // non-indexed dims of self
  in_sub.dtype = self->dtype;
  int32_t pre = 0;  // non-indexed dims before the index block in the output
  for (int32_t i = 0; i < self->rank; ++i) {
    if (indexed[i]) continue;
    if (adjacent && i < first) ++pre;
    in_sub.sizes[in_sub.rank] = in.sizes[i];
    in_sub.strides[in_sub.rank] = in.strides[i];
    ++in_sub.rank;
  }
  const int64_t out_rank = in_sub.rank + brank;
  if (out_rank > ET_MAX_RANK) return unsupported(op, "result rank would exceed 16");
  int64_t shape[ET_MAX_RANK];
  const int32_t bpos = adjacent ? pre : 0;  // where B's dims go
  for (int64_t i = 0, j = 0; i < out_rank; ++i) {
    if (i >= bpos && i < bpos + brank) shape[i] = B[i - bpos];
    else shape[i] = in_sub.sizes[j++];
  }
  PW_TRY(resize_out(op, *out, shape, out_rank));
  if (etrt::plugin::numel(*out) == 0) return nullptr;
  PW_TRY(check_data(op, *out, "out"));
  View ov = view_of(*out);
  View out_sub;
  out_sub.dtype = out->dtype;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (i >= bpos && i < bpos + brank) continue;
    out_sub.sizes[out_sub.rank] = ov.sizes[i];
    out_sub.strides[out_sub.rank] = ov.strides[i];
    ++out_sub.rank;
  }
  const int64_t es = static_cast<int64_t>(element_size(self->dtype));
  const int64_t sub = std::max<int64_t>(1, in_sub.numel());
  parallel(static_cast<size_t>(bcount), std::max<size_t>(1, kGrain / static_cast<size_t>(sub)), [&](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; ++b) {
      int64_t in_off = 0;
      for (size_t k = 0; k < idx.size(); ++k) in_off += flat[k][b] * in.strides[idx[k].dim];
      int64_t out_off = 0, rest = static_cast<int64_t>(b);
      for (int64_t j = brank - 1; j >= 0; --j) {
        out_off += (rest % B[j]) * ov.strides[bpos + j];
        rest /= B[j];
      }
      View src = in_sub, dst = out_sub;
      src.data = in.data + in_off * es;
      dst.data = ov.data + out_off * es;
      copy_view(dst, src);
    }
  });
  return nullptr;
}

namespace {
et_error* fill_out(const char* op, et_tensor& out, const int64_t* shape, int64_t rank, const Scalar& value) {
  PW_TRY(check_storage(op, out, "out"));
  PW_TRY(resize_out(op, out, shape, rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  PW_TRY(check_data(op, out, "out"));
  fill_view(view_of(out), value);
  return nullptr;
}

et_error* check_sizes(const char* op, const IntList& size) {
  if (size.count > ET_MAX_RANK) return invalid(op, "size has more than 16 dims");
  for (size_t i = 0; i < size.count; ++i)
    if (size.items[i] < 0)
      return invalid(op, "size " + shape_str(size.items, static_cast<int64_t>(size.count)) + " has a negative dim");
  return nullptr;
}
}  // namespace

// full.out(SymInt[] size, Scalar fill_value, *, out)
et_error* full_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::full.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  IntList size;
  Scalar value;
  et_tensor* out = nullptr;
  PW_TRY(r.int_list(0, "size", &size));
  PW_TRY(r.scalar(1, "fill_value", &value));
  PW_TRY(r.tensor(2, "out", &out));
  PW_TRY(check_sizes(op, size));
  return fill_out(op, *out, size.items, static_cast<int64_t>(size.count), value);
}

// zeros.out(SymInt[] size, *, out) / ones.out
et_error* zeros_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::zeros.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(3));
  IntList size;
  et_tensor* out = nullptr;
  PW_TRY(r.int_list(0, "size", &size));
  PW_TRY(r.tensor(1, "out", &out));
  PW_TRY(check_sizes(op, size));
  return fill_out(op, *out, size.items, static_cast<int64_t>(size.count), Scalar::of_int(0));
}
et_error* ones_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::ones.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(3));
  IntList size;
  et_tensor* out = nullptr;
  PW_TRY(r.int_list(0, "size", &size));
  PW_TRY(r.tensor(1, "out", &out));
  PW_TRY(check_sizes(op, size));
  return fill_out(op, *out, size.items, static_cast<int64_t>(size.count), Scalar::of_int(1));
}

namespace {
et_error* like(const char* op, et_value* const* args, size_t nargs, bool has_value, int64_t constant) {
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(has_value ? 5 : 4));
  et_tensor *self = nullptr, *out = nullptr;
  Scalar value = Scalar::of_int(constant);
  PW_TRY(r.tensor(0, "self", &self));
  if (has_value) PW_TRY(r.scalar(1, "fill_value", &value));
  size_t mf = has_value ? 2 : 1;
  if (!r.is_null(mf)) {
    int64_t unused = 0;
    PW_TRY(r.integer(mf, "memory_format", &unused));
  }
  PW_TRY(r.tensor(mf + 1, "out", &out));
  return fill_out(op, *out, self->sizes, self->rank, value);
}
}  // namespace

// full_like.out(self, Scalar fill_value, *, MemoryFormat? memory_format=None, out)
et_error* full_like_out(void*, et_exec_context*, et_value* const* a, size_t n) { return like("aten::full_like.out", a, n, true, 0); }
// zeros_like.out(self, *, MemoryFormat? memory_format=None, out)
et_error* zeros_like_out(void*, et_exec_context*, et_value* const* a, size_t n) { return like("aten::zeros_like.out", a, n, false, 0); }
et_error* ones_like_out(void*, et_exec_context*, et_value* const* a, size_t n) { return like("aten::ones_like.out", a, n, false, 1); }

// fill.Scalar_out(self, Scalar value, *, out)
et_error* fill_scalar_out(void*, et_exec_context*, et_value* const* a, size_t n) {
  constexpr const char* op = "aten::fill.Scalar_out";
  ArgReader r(op, a, n);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *out = nullptr;
  Scalar value;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.scalar(1, "value", &value));
  PW_TRY(r.tensor(2, "out", &out));
  return fill_out(op, *out, self->sizes, self->rank, value);
}

// scalar_tensor.out(Scalar s, *, out)
et_error* scalar_tensor_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::scalar_tensor.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(3));
  Scalar value;
  et_tensor* out = nullptr;
  PW_TRY(r.scalar(0, "s", &value));
  PW_TRY(r.tensor(1, "out", &out));
  return fill_out(op, *out, nullptr, 0, value);
}

namespace {
et_error* arange(const char* op, const Scalar& start, const Scalar& end, const Scalar& step, et_tensor& out) {
  PW_TRY(check_storage(op, out, "out"));
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  if (!std::isfinite(s) || !std::isfinite(e)) return invalid(op, "unsupported range: " + start.text() + " -> " + end.text());
  if (st == 0) return invalid(op, "step must be nonzero");
  if ((st > 0 && e < s) || (st < 0 && e > s))
    return invalid(op, "upper bound and larger bound inconsistent with step sign (start " + start.text() + ", end " +
                           end.text() + ", step " + step.text() + ")");
  const bool ints = start.kind != Scalar::kDouble && end.kind != Scalar::kDouble && step.kind != Scalar::kDouble;
  // Computed wide, then bounded: a corrupt program's range must not overflow the arithmetic.
  constexpr double kMaxLength = 9.0e15;  // below 2^53: every index stays exact as a double
  const double approximate = std::ceil((e - s) / st);
  if (!(approximate < kMaxLength))
    return invalid(op, "range " + start.text() + " -> " + end.text() + " step " + step.text() + " is too long");
  int64_t length = 0;
  if (ints) {
    const __int128 a = start.i, b = end.i, c = step.i;
    length = static_cast<int64_t>(c > 0 ? (b - a + c - 1) / c : (a - b - c - 1) / -c);
  } else {
    length = static_cast<int64_t>(approximate);
  }
  if (length < 0) length = 0;
  if (out.rank != 1) return invalid(op, "output must be 1-D, got shape " + shape_str(out));
  PW_TRY(resize_out(op, out, &length, 1));
  if (length == 0) return nullptr;
  PW_TRY(check_data(op, out, "out"));
  View ov = view_of(out);
  dispatch_storage(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < length; ++i) {
      T v;
      if constexpr (std::is_floating_point_v<T>) v = static_cast<T>(s + static_cast<double>(i) * st);
      else if (ints) v = static_cast<T>(start.i + i * step.i);
      else v = convert<T>(s + static_cast<double>(i) * st);
      *reinterpret_cast<T*>(ov.data + i * ov.strides[0] * static_cast<int64_t>(sizeof(T))) = v;
    }
  });
  return nullptr;
}
}  // namespace

// arange.out(Scalar end, *, out)
et_error* arange_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::arange.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(3));
  Scalar end;
  et_tensor* out = nullptr;
  PW_TRY(r.scalar(0, "end", &end));
  PW_TRY(r.tensor(1, "out", &out));
  return arange(op, Scalar::of_int(0), end, Scalar::of_int(1), *out);
}

// arange.start_out(Scalar start, Scalar end, Scalar step=1, *, out)
et_error* arange_start_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::arange.start_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  Scalar start, end, step;
  et_tensor* out = nullptr;
  PW_TRY(r.scalar(0, "start", &start));
  PW_TRY(r.scalar(1, "end", &end));
  PW_TRY(r.scalar(2, "step", &step));
  PW_TRY(r.tensor(3, "out", &out));
  return arange(op, start, end, step, *out);
}

namespace {
// triu (upper) keeps col - row >= diagonal; tril keeps col - row <= diagonal.
template <bool kUpper>
et_error* triangle(const char* op, et_value* const* args, size_t nargs) {
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *self = nullptr, *out = nullptr;
  int64_t diagonal = 0;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.integer(1, "diagonal", &diagonal));
  PW_TRY(r.tensor(2, "out", &out));
  PW_TRY(check_data(op, *self, "self"));
  PW_TRY(check_storage(op, *self, "self"));
  if (self->rank < 2) return invalid(op, "input must have at least 2 dims, got shape " + shape_str(*self));
  if (out->dtype != self->dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out->dtype) + " must match the input dtype " +
                           dtype_name(self->dtype));
  PW_TRY(resize_out(op, *out, self->sizes, self->rank));
  if (etrt::plugin::numel(*out) == 0) return nullptr;
  PW_TRY(check_data(op, *out, "out"));
  OutputBuffer ob;
  if (!ob.init(*out, out->dtype, true)) return out_of_memory(op);
  copy_view(ob.view(), view_of(*self));
  const int64_t rows = self->sizes[self->rank - 2], cols = self->sizes[self->rank - 1];
  const int64_t mats = static_cast<int64_t>(etrt::plugin::numel(*self)) / (rows * cols);
  const size_t es = element_size(self->dtype);
  char* base = ob.view().data;
  parallel(static_cast<size_t>(mats * rows), std::max<size_t>(1, kGrain / static_cast<size_t>(cols)),
           [&](size_t b, size_t e) {
             for (size_t u = b; u < e; ++u) {
               const int64_t i = static_cast<int64_t>(u) % rows;
               char* row = base + u * static_cast<size_t>(cols) * es;
               // Zero the columns outside the kept band.
               int64_t lo, hi;  // zero [lo, hi)
               if (kUpper) lo = 0, hi = std::clamp<int64_t>(i + diagonal, 0, cols);
               else lo = std::clamp<int64_t>(i + diagonal + 1, 0, cols), hi = cols;
               if (hi > lo) std::memset(row + lo * static_cast<int64_t>(es), 0, static_cast<size_t>(hi - lo) * es);
             }
           });
  ob.finish();
  return nullptr;
}
}  // namespace

et_error* triu_out(void*, et_exec_context*, et_value* const* a, size_t n) { return triangle<true>("aten::triu.out", a, n); }
et_error* tril_out(void*, et_exec_context*, et_value* const* a, size_t n) { return triangle<false>("aten::tril.out", a, n); }

}  // namespace etrt::kernels::pw
