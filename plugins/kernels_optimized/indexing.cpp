// Indexing and creation operators: embedding, index.Tensor (advanced
// indexing with int and bool index tensors), index_select, full/zeros/ones
// (and their _like forms), scalar_tensor, arange, triu/tril.
#include <vector>

#include "pointwise_common.h"

namespace etrt::kernels::pw {
namespace {

bool is_index_dtype(int32_t d) { return d == ET_DTYPE_INT64 || d == ET_DTYPE_INT32; }

// A contiguous int64 copy of an index tensor.
et_error* read_indices(const char* op, const et_tensor& t, const char* name, std::vector<int64_t>* out) {
  ETRT_TRY(check_data(op, t, name));
  if (!is_index_dtype(t.dtype))
    return invalid(op, std::string(name) + " must be an int64 or int32 tensor, got " + dtype_name(t.dtype));
  out->resize(etrt::plugin::numel(t));
  if (out->empty()) return nullptr;
  copy_view(contiguous_view(ET_DTYPE_INT64, t.rank, t.sizes, out->data()), view_of(t));
  return nullptr;
}

}  // namespace

// embedding.out(weight, indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False, *, out)
et_error* embedding_out(Call call, const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                        bool scale_grad_by_freq, bool sparse, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, weight, "weight"));
  ETRT_TRY(check_storage(op, weight, "weight"));
  if (weight.rank != 2) return invalid(op, "weight must be 2-D, got shape " + shape_string(weight));
  if (out.dtype != weight.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the weight dtype " +
                           dtype_name(weight.dtype));
  if (indices.rank + 1 > ET_MAX_RANK) return unsupported(op, "result rank would exceed 16");
  std::vector<int64_t> idx;
  ETRT_TRY(read_indices(op, indices, "indices", &idx));
  const int64_t V = weight.sizes[0], D = weight.sizes[1];
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] < 0 || idx[i] >= V)
      return invalid(op, "index " + str(idx[i]) + " (at flat position " + str(int64_t(i)) +
                             ") is out of range for a weight of " + str(V) + " rows");
  int64_t shape[ET_MAX_RANK];
  for (int32_t i = 0; i < indices.rank; ++i) shape[i] = indices.sizes[i];
  shape[indices.rank] = D;
  ETRT_TRY(resize_out(op, out, shape, indices.rank + 1));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  Scratch ws;
  View w;
  if (!contiguous_as(view_of(weight), weight.dtype, ws, &w)) return out_of_memory(op);
  OutputBuffer ob;
  if (!ob.init(out, out.dtype, true)) return out_of_memory(op);
  const size_t row = static_cast<size_t>(D) * element_size(weight.dtype);
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
et_error* index_select_out(Call call, const Tensor& self, int64_t dim, const Tensor& index, Tensor& out) {
  const char* op = call.op;
  int64_t d = 0;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  if (out.dtype != self.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(self.dtype));
  if (index.rank > 1) return invalid(op, "index must be 0-D or 1-D, got shape " + shape_string(index));
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  std::vector<int64_t> idx;
  ETRT_TRY(read_indices(op, index, "index", &idx));
  const int64_t size = self.rank == 0 ? 1 : self.sizes[d];
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] < 0 || idx[i] >= size)
      return invalid(op, "index " + str(idx[i]) + " is out of range for dim " + str(d) + " of size " + str(size));
  if (self.rank == 0) {
    if (idx.size() != 1) return invalid(op, "index of a rank-0 tensor must hold one element");
    ETRT_TRY(resize_out(op, out, nullptr, 0));
    copy_view(view_of(out), view_of(self));
    return nullptr;
  }
  int64_t shape[ET_MAX_RANK];
  for (int32_t i = 0; i < self.rank; ++i) shape[i] = self.sizes[i];
  shape[d] = static_cast<int64_t>(idx.size());
  ETRT_TRY(resize_out(op, out, shape, self.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  View in = view_of(self), ov = view_of(out);
  for (size_t i = 0; i < idx.size(); ++i)
    copy_view(ov.select(static_cast<int32_t>(d), static_cast<int64_t>(i)), in.select(static_cast<int32_t>(d), idx[i]));
  return nullptr;
}

namespace {

// Advanced indexing of self by a Tensor?[] list: the indexed dims, the index
// values broadcast to one shape B (flat, one vector per indexed dim), and the
// result's shape (B's dims at `bpos` among self's other dims).
struct AdvancedIndex {
  struct Index {
    int32_t dim;
    std::vector<int64_t> values;
    int64_t sizes[ET_MAX_RANK];
    int32_t rank;
  };
  std::vector<Index> idx;
  std::vector<std::vector<int64_t>> flat;  // idx[k]'s values broadcast to B
  int64_t B[ET_MAX_RANK]{};
  int64_t brank = 0, bcount = 1;
  bool indexed[ET_MAX_RANK] = {};
  int32_t bpos = 0;
  int64_t shape[ET_MAX_RANK]{};  // the result's shape
  int64_t rank = 0;

  // The dims of `v` (self's shape) that are not indexed.
  View rest_of(const View& v) const {
    View sub;
    sub.dtype = v.dtype;
    sub.data = v.data;
    for (int32_t i = 0; i < v.rank; ++i) {
      if (indexed[i]) continue;
      sub.sizes[sub.rank] = v.sizes[i];
      sub.strides[sub.rank] = v.strides[i];
      ++sub.rank;
    }
    return sub;
  }
  // Offset (elements) in `v` (self's shape) of the b-th index combination.
  int64_t self_offset(const View& v, size_t b) const {
    int64_t off = 0;
    for (size_t k = 0; k < idx.size(); ++k) off += flat[k][b] * v.strides[idx[k].dim];
    return off;
  }
  // Offset (elements) in `v` (the result's shape) of the b-th index combination.
  int64_t result_offset(const View& v, size_t b) const {
    int64_t off = 0, rest = static_cast<int64_t>(b);
    for (int64_t j = brank - 1; j >= 0; --j) {
      off += (rest % B[j]) * v.strides[bpos + j];
      rest /= B[j];
    }
    return off;
  }
  // The result's dims that are not B's.
  View rest_of_result(const View& v) const {
    View sub;
    sub.dtype = v.dtype;
    sub.data = v.data;
    for (int64_t i = 0; i < rank; ++i) {
      if (i >= bpos && i < bpos + brank) continue;
      sub.sizes[sub.rank] = v.sizes[i];
      sub.strides[sub.rank] = v.strides[i];
      ++sub.rank;
    }
    return sub;
  }
};

et_error* plan_index(const char* op, const et_tensor& self, OptionalTensorList indices, AdvancedIndex* plan) {
  using Index = AdvancedIndex::Index;
  std::vector<Index>& idx = plan->idx;
  int32_t dim = 0;
  for (size_t k = 0; k < indices.count; ++k) {
    const et_tensor* t = indices.items[k];
    if (t == nullptr) {
      ++dim;
      continue;
    }
    ETRT_TRY(check_data(op, *t, "indices"));
    if (t->dtype == ET_DTYPE_BOOL || t->dtype == ET_DTYPE_UINT8) {
      // A mask over t->rank dims: their coordinates where it is true.
      if (t->rank == 0) return unsupported(op, "a rank-0 bool index is not supported");
      if (dim + t->rank > self.rank)
        return invalid(op, "too many indices for a tensor of shape " + shape_string(self));
      for (int32_t i = 0; i < t->rank; ++i)
        if (t->sizes[i] != self.sizes[dim + i])
          return invalid(op, "the shape of mask " + shape_string(*t) + " at index " + str(int64_t(k)) +
                                 " does not match the shape of the indexed tensor " + shape_string(self) +
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
    if (dim >= self.rank) return invalid(op, "too many indices for a tensor of shape " + shape_string(self));
    Index e;
    e.dim = dim;
    e.rank = t->rank;
    for (int32_t i = 0; i < t->rank; ++i) e.sizes[i] = t->sizes[i];
    ETRT_TRY(read_indices(op, *t, "indices", &e.values));
    const int64_t size = self.sizes[dim];
    for (int64_t& v : e.values) {
      if (v < -size || v >= size)
        return invalid(op, "index " + str(v) + " is out of bounds for dim " + str(dim) + " with size " + str(size));
      if (v < 0) v += size;
    }
    idx.push_back(std::move(e));
    ++dim;
  }
  if (idx.empty()) {  // only None entries: the result is self's shape
    plan->rank = self.rank;
    std::copy(self.sizes, self.sizes + self.rank, plan->shape);
    return nullptr;
  }
  // Broadcast the index shapes.
  int64_t* B = plan->B;
  for (const Index& e : idx) {
    int64_t next[ET_MAX_RANK], nr;
    if (!broadcast_shapes(B, plan->brank, e.sizes, e.rank, next, &nr))
      return invalid(op, "shape mismatch: indexing tensors could not be broadcast together (" +
                             shape_string(B, plan->brank) + " and " + shape_string(e.sizes, e.rank) + ")");
    std::copy(next, next + nr, B);
    plan->brank = nr;
  }
  for (int64_t i = 0; i < plan->brank; ++i) plan->bcount *= B[i];
  // Each index broadcast to B, contiguous.
  plan->flat.resize(idx.size());
  for (size_t k = 0; k < idx.size(); ++k) {
    plan->flat[k].resize(static_cast<size_t>(plan->bcount));
    if (plan->bcount == 0) continue;
    View src = contiguous_view(ET_DTYPE_INT64, idx[k].rank, idx[k].sizes, idx[k].values.data());
    copy_view(contiguous_view(ET_DTYPE_INT64, static_cast<int32_t>(plan->brank), B, plan->flat[k].data()), src);
  }
  int32_t first = self.rank, last = -1;
  for (const Index& e : idx) {
    if (plan->indexed[e.dim]) return invalid(op, "dim " + str(e.dim) + " is indexed twice");
    plan->indexed[e.dim] = true;
    first = std::min(first, e.dim);
    last = std::max(last, e.dim);
  }
  // Adjacent indexed dims keep their place in the result; separated ones go first.
  const bool adjacent = last - first + 1 == static_cast<int32_t>(idx.size());
  int32_t pre = 0, others = 0;
  int64_t other_sizes[ET_MAX_RANK];
  for (int32_t i = 0; i < self.rank; ++i) {
    if (plan->indexed[i]) continue;
    if (adjacent && i < first) ++pre;
    other_sizes[others++] = self.sizes[i];
  }
  plan->rank = others + plan->brank;
  if (plan->rank > ET_MAX_RANK) return unsupported(op, "result rank would exceed 16");
  plan->bpos = adjacent ? pre : 0;
  for (int64_t i = 0, j = 0; i < plan->rank; ++i) {
    if (i >= plan->bpos && i < plan->bpos + plan->brank) plan->shape[i] = B[i - plan->bpos];
    else plan->shape[i] = other_sizes[j++];
  }
  return nullptr;
}

}  // namespace

// index.Tensor_out(self, Tensor?[] indices, *, out): advanced indexing.
et_error* index_tensor_out(Call call, const Tensor& self, OptionalTensorList indices, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  if (out.dtype != self.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(self.dtype));
  AdvancedIndex plan;
  ETRT_TRY(plan_index(op, self, indices, &plan));
  ETRT_TRY(resize_out(op, out, plan.shape, plan.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  const View in = view_of(self), ov = view_of(out);
  if (plan.idx.empty()) {  // only None entries: a plain copy
    copy_view(ov, in);
    return nullptr;
  }
  const View in_sub = plan.rest_of(in), out_sub = plan.rest_of_result(ov);
  const int64_t es = static_cast<int64_t>(element_size(self.dtype));
  const int64_t sub = std::max<int64_t>(1, in_sub.numel());
  parallel(static_cast<size_t>(plan.bcount), std::max<size_t>(1, kGrain / static_cast<size_t>(sub)), [&](size_t b0, size_t b1) {
    for (size_t b = b0; b < b1; ++b) {
      View src = in_sub, dst = out_sub;
      src.data = in.data + plan.self_offset(in, b) * es;
      dst.data = ov.data + plan.result_offset(ov, b) * es;
      copy_view(dst, src);
    }
  });
  return nullptr;
}

namespace {

// dst[i] += src[i] over dst's shape (src: same dtype, same shape).
void accumulate_view(const View& dst, const View& src) {
  Loop L = make_loop(dst.rank, dst.sizes, {&dst, &src});
  dispatch_storage(dst.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = Stored<T>;
    // One task: the caller walks overlapping destinations in order.
    auto run = [](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t k = 0; k < n; ++k) {
        S* z = reinterpret_cast<S*>(p[0] + k * s[0]);
        const S x = *reinterpret_cast<const S*>(p[1] + k * s[1]);
        if constexpr (std::is_same_v<T, bool>) *z = static_cast<S>((*z != 0) || (x != 0));
        else if constexpr (std::is_integral_v<T>) *z = static_cast<S>(static_cast<uint64_t>(*z) + static_cast<uint64_t>(x));
        else *z = static_cast<S>(*z + x);
      }
    };
    loop_range(L, 0, L.numel, run);
  });
}

}  // namespace

// index_put.out(self, Tensor?[] indices, Tensor values, bool accumulate=False, *, out):
// out = self with out[indices] = values (or += when accumulating), values broadcast
// to the shape self[indices] has. Later duplicates win (accumulate adds them all).
et_error* index_put_out(Call call, const Tensor& self, OptionalTensorList indices, const Tensor& values,
                        bool accumulate, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_data(op, values, "values"));
  ETRT_TRY(check_storage(op, self, "self"));
  ETRT_TRY(check_storage(op, values, "values"));
  if (out.dtype != self.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(self.dtype));
  if (values.dtype != self.dtype)
    return invalid(op, std::string("values dtype ") + dtype_name(values.dtype) + " must match self's dtype " +
                           dtype_name(self.dtype));
  AdvancedIndex plan;
  ETRT_TRY(plan_index(op, self, indices, &plan));
  // values must broadcast to the indexed shape.
  int64_t shape[ET_MAX_RANK], rank = 0;
  bool ok = broadcast_shapes(plan.shape, plan.rank, values.sizes, values.rank, shape, &rank) && rank == plan.rank;
  for (int64_t i = 0; ok && i < rank; ++i) ok = shape[i] == plan.shape[i];
  if (!ok)
    return invalid(op, "shape mismatch: values of shape " + shape_string(values) +
                           " cannot be broadcast to the indexing result of shape " + shape_string(plan.shape, plan.rank));
  ETRT_TRY(resize_out(op, out, self.sizes, self.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  const View ov = view_of(out);
  if (out.data != self.data) copy_view(ov, view_of(self));
  // values as a view of the result's shape (stride 0 on broadcast dims).
  const View wide = view_of(values).broadcast_to(static_cast<int32_t>(plan.rank), plan.shape);
  const int64_t es = static_cast<int64_t>(element_size(self.dtype));
  if (plan.idx.empty()) {
    if (accumulate) accumulate_view(ov, wide);
    else copy_view(ov, wide);
    return nullptr;
  }
  const View out_sub = plan.rest_of(ov), val_sub = plan.rest_of_result(wide);
  for (size_t b = 0; b < static_cast<size_t>(plan.bcount); ++b) {  // in order: duplicates resolve like PyTorch's CPU
    View dst = out_sub, src = val_sub;
    dst.data = ov.data + plan.self_offset(ov, b) * es;
    src.data = wide.data + plan.result_offset(wide, b) * es;
    if (accumulate) accumulate_view(dst, src);
    else copy_view(dst, src);
  }
  return nullptr;
}

// index_put_(self, Tensor?[] indices, Tensor values, bool accumulate=False) -> self: in place.
et_error* index_put_inplace(Call call, Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate) {
  return index_put_out(call, self, indices, values, accumulate, self);
}

namespace {
et_error* fill_out(const char* op, et_tensor& out, const int64_t* shape, int64_t rank, const Scalar& value) {
  ETRT_TRY(check_storage(op, out, "out"));
  ETRT_TRY(resize_out(op, out, shape, rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  fill_view(view_of(out), value);
  return nullptr;
}

et_error* check_sizes(const char* op, const IntArrayRef& size) {
  if (size.count > ET_MAX_RANK) return invalid(op, "size has more than 16 dims");
  for (size_t i = 0; i < size.count; ++i)
    if (size.items[i] < 0)
      return invalid(op, "size " + shape_string(size.items, static_cast<int64_t>(size.count)) + " has a negative dim");
  return nullptr;
}
}  // namespace

// full.out(SymInt[] size, Scalar fill_value, *, out)
et_error* full_out(Call call, IntArrayRef size, Scalar value, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_sizes(op, size));
  return fill_out(op, out, size.items, static_cast<int64_t>(size.count), value);
}

// zeros.out(SymInt[] size, *, out) / ones.out
template <int kValue>
et_error* constant_out(Call call, IntArrayRef size, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_sizes(op, size));
  return fill_out(op, out, size.items, static_cast<int64_t>(size.count), Scalar::of_int(kValue));
}

// full_like.out(self, Scalar fill_value, *, MemoryFormat? memory_format=None, out)
et_error* full_like_out(Call call, const Tensor& self, Scalar fill_value, std::optional<int64_t> memory_format,
                        Tensor& out) {
  return fill_out(call.op, out, self.sizes, self.rank, fill_value);
}

// zeros_like.out / ones_like.out(self, *, MemoryFormat? memory_format=None, out)
template <int kValue>
et_error* constant_like_out(Call call, const Tensor& self, std::optional<int64_t> memory_format, Tensor& out) {
  return fill_out(call.op, out, self.sizes, self.rank, Scalar::of_int(kValue));
}


// fill.Scalar_out(self, Scalar value, *, out)
et_error* fill_scalar_out(Call call, const Tensor& self, Scalar value, Tensor& out) {
  const char* op = call.op;
  return fill_out(op, out, self.sizes, self.rank, value);
}

// fill.Tensor_out(self, Tensor value, *, out): value is a rank-0 tensor.
et_error* fill_tensor_out(Call call, const Tensor& self, const Tensor& value, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, value, "value"));
  ETRT_TRY(check_storage(op, value, "value"));
  if (value.rank != 0) return invalid(op, "value must be a rank-0 tensor, got shape " + shape_string(value));
  double d = 0;
  int64_t i = 0;
  copy_view(contiguous_view(ET_DTYPE_FLOAT64, 0, nullptr, &d), view_of(value));
  copy_view(contiguous_view(ET_DTYPE_INT64, 0, nullptr, &i), view_of(value));
  const Scalar s = value.dtype == ET_DTYPE_BOOL ? Scalar::of_bool(i != 0)
                   : is_float(value.dtype)      ? Scalar::of_double(d)
                                                : Scalar::of_int(i);
  return fill_out(op, out, self.sizes, self.rank, s);
}

// empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, out): out resized, contents unspecified.
et_error* empty_out(Call call, IntArrayRef size, std::optional<int64_t> memory_format, Tensor& out) {
  ETRT_TRY(check_sizes(call.op, size));
  return resize_out(call.op, out, size.items, static_cast<int64_t>(size.count));
}

// dim_order_ops::_empty_dim_order.out(SymInt[] size, *, int[]? dim_order=None, out)
et_error* empty_dim_order_out(Call call, IntArrayRef size, std::optional<IntArrayRef> dim_order, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_sizes(op, size));
  if (dim_order && dim_order->size() != size.size())
    return invalid(op, "dim_order " + list_str(*dim_order) + " must have one entry per dim of size " + list_str(size));
  return resize_out(op, out, size.items, static_cast<int64_t>(size.count));
}

// repeat_interleave.Tensor_out(Tensor repeats, *, SymInt? output_size=None, out): index i repeated repeats[i] times.
et_error* repeat_interleave_out(Call call, const Tensor& repeats, std::optional<int64_t> output_size, Tensor& out) {
  const char* op = call.op;
  if (repeats.rank != 1) return invalid(op, "repeats must be 1-D, got shape " + shape_string(repeats));
  std::vector<int64_t> counts;
  ETRT_TRY(read_indices(op, repeats, "repeats", &counts));
  if (out.dtype != repeats.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match repeats' dtype " +
                           dtype_name(repeats.dtype));
  std::vector<int64_t> result;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0) return invalid(op, "repeats must be non-negative, got " + str(counts[i]) + " at " + str(int64_t(i)));
    result.insert(result.end(), static_cast<size_t>(counts[i]), static_cast<int64_t>(i));
  }
  const auto n = static_cast<int64_t>(result.size());
  if (output_size && *output_size != n)
    return invalid(op, "output_size " + str(*output_size) + " does not match the sum of repeats " + str(n));
  ETRT_TRY(resize_out(op, out, &n, 1));
  if (n == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  copy_view(view_of(out), contiguous_view(ET_DTYPE_INT64, 1, &n, result.data()));
  return nullptr;
}

// scalar_tensor.out(Scalar s, *, out)
et_error* scalar_tensor_out(Call call, Scalar value, Tensor& out) {
  const char* op = call.op;
  return fill_out(op, out, nullptr, 0, value);
}

namespace {
et_error* arange(const char* op, const Scalar& start, const Scalar& end, const Scalar& step, et_tensor& out) {
  ETRT_TRY(check_storage(op, out, "out"));
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
  if (out.rank != 1) return invalid(op, "output must be 1-D, got shape " + shape_string(out));
  ETRT_TRY(resize_out(op, out, &length, 1));
  if (length == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
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
et_error* arange_out(Call call, Scalar end, Tensor& out) {
  const char* op = call.op;
  return arange(op, Scalar::of_int(0), end, Scalar::of_int(1), out);
}

// arange.start_out(Scalar start, Scalar end, Scalar step=1, *, out)
et_error* arange_start_out(Call call, Scalar start, Scalar end, Scalar step, Tensor& out) {
  const char* op = call.op;
  return arange(op, start, end, step, out);
}

namespace {
// triu (upper) keeps col - row >= diagonal; tril keeps col - row <= diagonal.
template <bool kUpper>
et_error* triangle(Call call, const Tensor& self, int64_t diagonal, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  if (self.rank < 2) return invalid(op, "input must have at least 2 dims, got shape " + shape_string(self));
  if (out.dtype != self.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(self.dtype));
  ETRT_TRY(resize_out(op, out, self.sizes, self.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  OutputBuffer ob;
  if (!ob.init(out, out.dtype, true)) return out_of_memory(op);
  copy_view(ob.view(), view_of(self));
  const int64_t rows = self.sizes[self.rank - 2], cols = self.sizes[self.rank - 1];
  const int64_t mats = static_cast<int64_t>(etrt::plugin::numel(self)) / (rows * cols);
  const size_t es = element_size(self.dtype);
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


}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> indexing_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_INDEXING
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
