// Operators that write into a copy of self: scatter (src and value forms),
// scatter_add, select_scatter, slice_scatter, masked_scatter; and the two
// whose result size depends on the data: masked_select and nonzero.
#include <vector>

#include "pointwise_common.h"

namespace etrt::kernels::pw {
namespace {

et_error* same_dtype(const char* op, const et_tensor& t, const char* name, int32_t dtype) {
  if (t.dtype == dtype) return nullptr;
  return invalid(op, std::string(name) + " dtype " + dtype_name(t.dtype) + " must match self's dtype " +
                         dtype_name(dtype));
}

// out <- self (out resized to self's shape); false when there is nothing to write.
et_error* start_from_self(const char* op, const et_tensor& self, et_tensor& out, bool* any) {
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  ETRT_TRY(same_dtype(op, out, "output", self.dtype));
  ETRT_TRY(resize_out(op, out, self.sizes, self.rank));
  *any = etrt::plugin::numel(out) > 0;
  if (!*any) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  if (out.data != self.data) copy_view(view_of(out), view_of(self));
  return nullptr;
}

// *z += x in T (integers wrap, bools or).
template <typename T>
inline void add_into(char* z, const char* x) {
  Stored<T> a, b;
  std::memcpy(&a, z, sizeof a);
  std::memcpy(&b, x, sizeof b);
  if constexpr (std::is_same_v<T, bool>) a = static_cast<Stored<T>>((a != 0) || (b != 0));
  else if constexpr (std::is_integral_v<T>) a = static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else a = static_cast<T>(a + b);
  std::memcpy(z, &a, sizeof a);
}

// Shared by scatter.src, scatter.value and scatter_add: for every position i of
// index, out[i with dim replaced by index[i]] = (or +=) src[i] (or the value).
et_error* scatter_impl(const char* op, const et_tensor& self, int64_t dim, const et_tensor& index,
                       const et_tensor* src, const Scalar* value, bool add, et_tensor& out) {
  ETRT_TRY(check_data(op, index, "index"));
  if (index.dtype != ET_DTYPE_INT64 && index.dtype != ET_DTYPE_INT32)
    return invalid(op, std::string("index must be an int64 or int32 tensor, got ") + dtype_name(index.dtype));
  if (src != nullptr) {
    ETRT_TRY(check_data(op, *src, "src"));
    ETRT_TRY(same_dtype(op, *src, "src", self.dtype));
  }
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  auto size_of = [](const et_tensor& t, int32_t i) { return t.rank == 0 ? int64_t{1} : t.sizes[i]; };
  const int32_t rank = self.rank == 0 ? 1 : self.rank;
  const size_t n = etrt::plugin::numel(index);
  if (n > 0) {
    if ((index.rank == 0 ? 1 : index.rank) != rank)
      return invalid(op, "index " + shape_string(index) + " must have the rank of self " + shape_string(self));
    for (int32_t i = 0; i < rank; ++i) {
      if (i != d && size_of(index, i) > size_of(self, i))
        return invalid(op, "index " + shape_string(index) + " is larger than self " + shape_string(self) + " in dim " +
                               str(i));
      if (src != nullptr && size_of(index, i) > size_of(*src, i))
        return invalid(op, "index " + shape_string(index) + " is larger than src " + shape_string(*src) + " in dim " +
                               str(i));
    }
  }
  std::vector<int64_t> idx(n);
  if (n > 0) copy_view(contiguous_view(ET_DTYPE_INT64, index.rank, index.sizes, idx.data()), view_of(index));
  const int64_t limit = size_of(self, static_cast<int32_t>(d));
  for (int64_t v : idx)
    if (v < -limit || v >= limit)
      return invalid(op, "index " + str(v) + " is out of range for dim " + str(d) + " of size " + str(limit));
  bool any = false;
  ETRT_TRY(start_from_self(op, self, out, &any));
  if (!any || n == 0) return nullptr;
  const View ov = view_of(out);
  const View sv = src != nullptr ? view_of(*src) : View{};
  uint64_t scalar_storage = 0;
  if (value != nullptr) scalar_view(*value, self.dtype, &scalar_storage);
  const char* scalar_bytes = reinterpret_cast<const char*>(&scalar_storage);
  const int64_t es = static_cast<int64_t>(element_size(self.dtype));
  int64_t pos[ET_MAX_RANK] = {};
  dispatch_storage(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t k = 0; k < n; ++k) {  // row-major over index's shape, in order (later duplicates win)
      int64_t dst = 0, from = 0;
      for (int32_t i = 0; i < index.rank; ++i) {
        const int64_t at = i == d ? (idx[k] < 0 ? idx[k] + limit : idx[k]) : pos[i];
        dst += at * ov.strides[i];
        if (src != nullptr && src->rank > 0) from += pos[i] * sv.strides[i];
      }
      char* z = ov.data + dst * es;
      const char* x = src != nullptr ? sv.data + from * es : scalar_bytes;
      if (add) add_into<T>(z, x);
      else std::memcpy(z, x, static_cast<size_t>(es));
      for (int32_t i = index.rank; i-- > 0;) {
        if (++pos[i] < index.sizes[i]) break;
        pos[i] = 0;
      }
    }
  });
  return nullptr;
}

// scatter.src_out(self, int dim, Tensor index, Tensor src, *, out)
et_error* scatter_src_out(Call call, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                          Tensor& out) {
  return scatter_impl(call.op, self, dim, index, &src, nullptr, false, out);
}

// scatter.value_out(self, int dim, Tensor index, Scalar value, *, out)
et_error* scatter_value_out(Call call, const Tensor& self, int64_t dim, const Tensor& index, Scalar value,
                            Tensor& out) {
  return scatter_impl(call.op, self, dim, index, nullptr, &value, false, out);
}

// scatter_add.out(self, int dim, Tensor index, Tensor src, *, out)
et_error* scatter_add_out(Call call, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                          Tensor& out) {
  return scatter_impl(call.op, self, dim, index, &src, nullptr, true, out);
}

// Copies src into `window` (a view of out) after checking src has its shape.
et_error* embed(const char* op, const et_tensor& src, const View& window) {
  bool same = src.rank == window.rank;
  for (int32_t i = 0; same && i < src.rank; ++i) same = src.sizes[i] == window.sizes[i];
  if (!same)
    return invalid(op, "src of shape " + shape_string(src) + " must have the shape of the embedded slice " +
                           shape_string(window.sizes, window.rank));
  if (window.numel() > 0) copy_view(window, view_of(src));
  return nullptr;
}

// select_scatter.out(self, Tensor src, int dim, SymInt index, *, out)
et_error* select_scatter_out(Call call, const Tensor& self, const Tensor& src, int64_t dim, int64_t index,
                             Tensor& out) {
  const char* op = call.op;
  if (self.rank == 0) return invalid(op, "select_scatter cannot be applied to a rank-0 tensor");
  ETRT_TRY(check_data(op, src, "src"));
  ETRT_TRY(same_dtype(op, src, "src", self.dtype));
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  const int64_t size = self.sizes[d];
  if (index < -size || index >= size)
    return invalid(op, "index " + str(index) + " is out of range for dim " + str(d) + " of size " + str(size));
  if (index < 0) index += size;
  bool any = false;
  ETRT_TRY(start_from_self(op, self, out, &any));
  View window = view_of(out).select(static_cast<int32_t>(d), index);
  if (!any) window.data = nullptr;
  return embed(op, src, window);
}

// slice_scatter.out(self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *, out)
et_error* slice_scatter_out(Call call, const Tensor& self, const Tensor& src, int64_t dim,
                            std::optional<int64_t> start_arg, std::optional<int64_t> end_arg, int64_t step,
                            Tensor& out) {
  const char* op = call.op;
  if (self.rank == 0) return invalid(op, "slice_scatter cannot be applied to a rank-0 tensor");
  ETRT_TRY(check_data(op, src, "src"));
  ETRT_TRY(same_dtype(op, src, "src", self.dtype));
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  if (step <= 0) return invalid(op, "slice step must be positive, got " + str(step));
  const int64_t size = self.sizes[d];
  int64_t start = start_arg.value_or(0), end = end_arg.value_or(size);
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, 0, size);
  const int64_t length = end > start ? (end - start + step - 1) / step : 0;
  bool any = false;
  ETRT_TRY(start_from_self(op, self, out, &any));
  View window = view_of(out).narrow(static_cast<int32_t>(d), length > 0 ? start : 0, length, step);
  return embed(op, src, window);
}

// The mask broadcast to `shape` as contiguous 0/1 bytes.
et_error* dense_mask(const char* op, const et_tensor& mask, const int64_t* shape, int64_t rank,
                     std::vector<uint8_t>* bytes) {
  ETRT_TRY(check_data(op, mask, "mask"));
  if (mask.dtype != ET_DTYPE_BOOL)
    return invalid(op, std::string("mask dtype must be bool, got ") + dtype_name(mask.dtype));
  int64_t n = 1;
  for (int64_t i = 0; i < rank; ++i) n *= shape[i];
  bytes->assign(static_cast<size_t>(n), 0);
  if (n == 0) return nullptr;
  const View wide = view_of(mask).broadcast_to(static_cast<int32_t>(rank), shape);
  copy_view(contiguous_view(ET_DTYPE_BOOL, wide.rank, shape, bytes->data()), wide);
  return nullptr;
}

// masked_select.out(self, Tensor mask, *, out): the elements of self (broadcast
// with mask) where mask is true, as a 1-D tensor.
et_error* masked_select_out(Call call, const Tensor& self, const Tensor& mask, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  ETRT_TRY(same_dtype(op, out, "output", self.dtype));
  int64_t shape[ET_MAX_RANK], rank = 0;
  if (!broadcast_shapes(self.sizes, self.rank, mask.sizes, mask.rank, shape, &rank))
    return invalid(op, "mask of shape " + shape_string(mask) + " and self of shape " + shape_string(self) +
                           " are not broadcastable");
  std::vector<uint8_t> keep;
  ETRT_TRY(dense_mask(op, mask, shape, rank, &keep));
  int64_t count = 0;
  for (uint8_t k : keep) count += k;
  ETRT_TRY(resize_out(op, out, &count, 1));
  if (count == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  // self broadcast to the common shape, dense.
  Scratch scratch;
  const int64_t es = static_cast<int64_t>(element_size(self.dtype));
  char* dense = static_cast<char*>(scratch.get(keep.size() * static_cast<size_t>(es)));
  if (dense == nullptr) return out_of_memory(op);
  const View wide = view_of(self).broadcast_to(static_cast<int32_t>(rank), shape);
  copy_view(contiguous_view(self.dtype, wide.rank, shape, dense), wide);
  const View ov = view_of(out);
  int64_t j = 0;
  for (size_t k = 0; k < keep.size(); ++k)
    if (keep[k]) std::memcpy(ov.data + (j++) * ov.strides[0] * es, dense + static_cast<int64_t>(k) * es, static_cast<size_t>(es));
  return nullptr;
}

// masked_scatter.out(self, Tensor mask, Tensor source, *, out): self where mask
// (broadcast to self) is false, the next element of source where it is true.
et_error* masked_scatter_out(Call call, const Tensor& self, const Tensor& mask, const Tensor& source, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, source, "source"));
  ETRT_TRY(same_dtype(op, source, "source", self.dtype));
  int64_t shape[ET_MAX_RANK], rank = 0;
  bool ok = broadcast_shapes(self.sizes, self.rank, mask.sizes, mask.rank, shape, &rank) && rank == self.rank;
  for (int64_t i = 0; ok && i < rank; ++i) ok = shape[i] == self.sizes[i];
  if (!ok)
    return invalid(op, "mask of shape " + shape_string(mask) + " does not broadcast to self's shape " +
                           shape_string(self));
  std::vector<uint8_t> keep;
  ETRT_TRY(dense_mask(op, mask, shape, rank, &keep));
  int64_t count = 0;
  for (uint8_t k : keep) count += k;
  const int64_t available = static_cast<int64_t>(etrt::plugin::numel(source));
  if (count > available)
    return invalid(op, "mask selects " + str(count) + " elements but source " + shape_string(source) + " has only " +
                           str(available));
  bool any = false;
  ETRT_TRY(start_from_self(op, self, out, &any));
  if (!any || count == 0) return nullptr;
  const int64_t es = static_cast<int64_t>(element_size(self.dtype));
  std::vector<char> flat(static_cast<size_t>(available * es));
  copy_view(contiguous_view(source.dtype, source.rank, source.sizes, flat.data()), view_of(source));
  const View ov = view_of(out);
  int64_t pos[ET_MAX_RANK] = {}, j = 0;
  for (size_t k = 0; k < keep.size(); ++k) {
    if (keep[k]) {
      int64_t off = 0;
      for (int32_t i = 0; i < ov.rank; ++i) off += pos[i] * ov.strides[i];
      std::memcpy(ov.data + off * es, flat.data() + (j++) * es, static_cast<size_t>(es));
    }
    for (int32_t i = ov.rank; i-- > 0;) {
      if (++pos[i] < ov.sizes[i]) break;
      pos[i] = 0;
    }
  }
  return nullptr;
}

// nonzero.out(self, *, out): the int64 coordinates [n, rank] of the nonzero elements, row-major.
et_error* nonzero_out(Call call, const Tensor& self, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  if (out.dtype != ET_DTYPE_INT64) return invalid(op, std::string("output dtype must be int64, got ") + dtype_name(out.dtype));
  std::vector<uint8_t> nonzero(etrt::plugin::numel(self));
  if (!nonzero.empty())
    copy_view(contiguous_view(ET_DTYPE_BOOL, self.rank, self.sizes, nonzero.data()), view_of(self));
  int64_t count = 0;
  for (uint8_t v : nonzero) count += v != 0;
  const int64_t shape[2] = {count, self.rank};
  ETRT_TRY(resize_out(op, out, shape, 2));
  if (count == 0 || self.rank == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  const View ov = view_of(out);
  int64_t* z = reinterpret_cast<int64_t*>(ov.data);
  int64_t pos[ET_MAX_RANK] = {}, row = 0;
  for (size_t k = 0; k < nonzero.size(); ++k) {
    if (nonzero[k] != 0) {
      for (int32_t i = 0; i < self.rank; ++i) z[row * ov.strides[0] + i * ov.strides[1]] = pos[i];
      ++row;
    }
    for (int32_t i = self.rank; i-- > 0;) {
      if (++pos[i] < self.sizes[i]) break;
      pos[i] = 0;
    }
  }
  return nullptr;
}

}  // namespace
}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> scatter_ops_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_SCATTER_OPS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
