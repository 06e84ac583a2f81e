// Operators that move elements without changing them: flip (a view with
// reversed strides), roll (block copies per rolled dim), gather (one index per
// output element) and cumsum (a running sum along one dim).
#include <algorithm>
#include <numeric>
#include <vector>

#include "pointwise_common.h"

namespace etrt::kernels::pw {
namespace {

et_error* same_dtype(const char* op, const et_tensor& self, const et_tensor& out) {
  if (out.dtype == self.dtype) return nullptr;
  return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                         dtype_name(self.dtype));
}

// flip.out(self, int[] dims, *, out)
et_error* flip_out(Call call, const Tensor& self, IntArrayRef dims, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  View v = view_of(self);
  bool flipped[ET_MAX_RANK] = {};
  for (int64_t dim : dims) {
    int64_t d = 0;
    ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
    if (self.rank == 0) continue;
    if (flipped[d]) return invalid(op, "dim " + str(d) + " appears more than once in dims " + list_str(dims));
    flipped[d] = true;
    // Start at the last element of the dim and walk backwards.
    if (v.sizes[d] > 0) v.data += (v.sizes[d] - 1) * v.strides[d] * static_cast<int64_t>(v.esize());
    v.strides[d] = -v.strides[d];
  }
  return view_copy_into(op, self, v, out);
}

// Copies `in` rolled by shift[k] along dims[k] (k >= level) into `out`: each
// rolled dim splits into two blocks that swap places.
void roll_blocks(const View& out, const View& in, const int64_t* dims, const int64_t* shifts, size_t count,
                 size_t level) {
  if (level == count) {
    copy_view(out, in);
    return;
  }
  const int32_t d = static_cast<int32_t>(dims[level]);
  const int64_t n = in.sizes[d], s = shifts[level];
  if (n - s > 0) roll_blocks(out.narrow(d, s, n - s), in.narrow(d, 0, n - s), dims, shifts, count, level + 1);
  if (s > 0) roll_blocks(out.narrow(d, 0, s), in.narrow(d, n - s, s), dims, shifts, count, level + 1);
}

// roll.out(self, SymInt[1] shifts, int[1] dims=[], *, out)
et_error* roll_out(Call call, const Tensor& self, IntArrayRef shifts, IntArrayRef dims, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  ETRT_TRY(same_dtype(op, self, out));
  if (dims.empty() && shifts.size() != 1)
    return invalid(op, "shifts " + list_str(shifts) + " must have one value when dims is empty");
  if (!dims.empty() && shifts.size() != dims.size())
    return invalid(op, "shifts " + list_str(shifts) + " and dims " + list_str(dims) + " must have the same length");
  if (dims.size() > ET_MAX_RANK) return invalid(op, "dims " + list_str(dims) + " has more than 16 entries");
  ETRT_TRY(resize_out(op, out, self.sizes, self.rank));
  const int64_t numel = static_cast<int64_t>(etrt::plugin::numel(self));
  if (numel == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  auto wrap = [](int64_t shift, int64_t n) { return n == 0 ? 0 : ((shift % n) + n) % n; };
  if (dims.empty()) {  // roll the flattened tensor
    Scratch in_scratch;
    View flat_in;
    if (!contiguous_as(view_of(self), self.dtype, in_scratch, &flat_in)) return out_of_memory(op);
    OutputBuffer ob;
    if (!ob.init(out, out.dtype, true)) return out_of_memory(op);
    View a = contiguous_view(self.dtype, 1, &numel, flat_in.data), b = contiguous_view(self.dtype, 1, &numel, ob.view().data);
    const int64_t dim0 = 0, shift = wrap(shifts[0], numel);
    roll_blocks(b, a, &dim0, &shift, 1, 0);
    ob.finish();
    return nullptr;
  }
  int64_t d[ET_MAX_RANK], s[ET_MAX_RANK];
  for (size_t k = 0; k < dims.size(); ++k) {
    ETRT_TRY(normalize_dim(op, dims[k], self.rank, &d[k]));
    if (self.rank == 0) return invalid(op, "cannot roll a rank-0 tensor along a dim");
    s[k] = wrap(shifts[k], self.sizes[d[k]]);
  }
  if (out.data == self.data) return invalid(op, "out must not alias self");
  roll_blocks(view_of(out), view_of(self), d, s, dims.size(), 0);
  return nullptr;
}

// gather.out(self, int dim, Tensor index, *, bool sparse_grad=False, out):
// out[i...] = self[i... with dim replaced by index[i...]].
et_error* gather_out(Call call, const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_data(op, index, "index"));
  ETRT_TRY(check_storage(op, self, "self"));
  ETRT_TRY(same_dtype(op, self, out));
  if (index.dtype != ET_DTYPE_INT64 && index.dtype != ET_DTYPE_INT32)
    return invalid(op, std::string("index must be an int64 or int32 tensor, got ") + dtype_name(index.dtype));
  const int32_t rank = self.rank == 0 ? 1 : self.rank;
  const int32_t index_rank = index.rank == 0 ? 1 : index.rank;
  if (index_rank != rank)
    return invalid(op, "index " + shape_string(index) + " must have the rank of self " + shape_string(self));
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  auto size_of = [](const et_tensor& t, int32_t i) { return t.rank == 0 ? int64_t{1} : t.sizes[i]; };
  for (int32_t i = 0; i < rank; ++i)
    if (i != d && size_of(index, i) > size_of(self, i))
      return invalid(op, "index " + shape_string(index) + " is larger than self " + shape_string(self) +
                             " in dim " + str(i));
  ETRT_TRY(resize_out(op, out, index.sizes, index.rank));
  const size_t n = etrt::plugin::numel(index);
  if (n == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  std::vector<int64_t> idx(n);
  copy_view(contiguous_view(ET_DTYPE_INT64, index.rank, index.sizes, idx.data()), view_of(index));
  const int64_t limit = size_of(self, static_cast<int32_t>(d));
  for (size_t k = 0; k < n; ++k)
    if (idx[k] < -limit || idx[k] >= limit)
      return invalid(op, "index " + str(idx[k]) + " is out of range for dim " + str(d) + " of size " + str(limit));
  const View in = view_of(self), ov = view_of(out);
  const int64_t es = static_cast<int64_t>(element_size(self.dtype));
  int64_t pos[ET_MAX_RANK] = {};
  for (size_t k = 0; k < n; ++k) {  // row-major over index's shape
    int64_t src = 0, dst = 0;
    for (int32_t i = 0; i < index.rank; ++i) {
      int64_t at = i == d ? (idx[k] < 0 ? idx[k] + limit : idx[k]) : pos[i];
      src += at * in.strides[i];
      dst += pos[i] * ov.strides[i];
    }
    std::memcpy(ov.data + dst * es, in.data + src * es, static_cast<size_t>(es));
    for (int32_t i = index.rank; i-- > 0;) {
      if (++pos[i] < index.sizes[i]) break;
      pos[i] = 0;
    }
  }
  return nullptr;
}

// cumsum.out(self, int dim, *, ScalarType? dtype=None, out): integral inputs
// sum in int64 (bool included), floating ones in double.
et_error* cumsum_out(Call call, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  ETRT_TRY(check_storage(op, out, "out"));
  const int32_t result = dtype ? static_cast<int32_t>(*dtype) : is_float(self.dtype) ? self.dtype : ET_DTYPE_INT64;
  if (result != out.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must be " + dtype_name(result) +
                           (dtype ? " (the dtype argument)" : ""));
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  ETRT_TRY(resize_out(op, out, self.sizes, self.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  int64_t outer = 1, D = 1, inner = 1;
  for (int64_t i = 0; i < self.rank; ++i) (i < d ? outer : i == d ? D : inner) *= self.sizes[i];
  const int32_t acc = is_float(result) ? ET_DTYPE_FLOAT64 : ET_DTYPE_INT64;
  Scratch in_scratch;
  View x;
  if (!contiguous_as(view_of(self), acc, in_scratch, &x)) return out_of_memory(op);
  OutputBuffer ob;
  if (!ob.init(out, acc, true)) return out_of_memory(op);
  auto scan = [&](auto* src, auto* dst) {
    parallel(static_cast<size_t>(outer * inner), std::max<size_t>(1, kGrain / static_cast<size_t>(D)),
             [&](size_t b, size_t e) {
               for (size_t u = b; u < e; ++u) {
                 const int64_t o = static_cast<int64_t>(u) / inner, j = static_cast<int64_t>(u) % inner;
                 auto total = src[0] - src[0];
                 for (int64_t k = 0; k < D; ++k) {
                   const int64_t at = (o * D + k) * inner + j;
                   total += src[at];
                   dst[at] = total;
                 }
               }
             });
  };
  if (acc == ET_DTYPE_FLOAT64)
    scan(reinterpret_cast<const double*>(x.data), reinterpret_cast<double*>(ob.view().data));
  else  // int64 sums wrap like PyTorch's (unsigned arithmetic: signed overflow would be undefined)
    scan(reinterpret_cast<const uint64_t*>(x.data), reinterpret_cast<uint64_t*>(ob.view().data));
  ob.finish();
  return nullptr;
}

// topk.values(self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, values, indices)
// -> (values, indices). NaN counts as larger than every number (PyTorch's order); ties keep the
// lower index first. Results are always sorted (sorted=False allows any order).
et_error* topk_out(Call call, const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted, Tensor& values,
                   Tensor& indices) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  ETRT_TRY(same_dtype(op, self, values));
  if (indices.dtype != ET_DTYPE_INT64)
    return invalid(op, std::string("indices dtype must be int64, got ") + dtype_name(indices.dtype));
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  const int64_t n = self.rank == 0 ? 1 : self.sizes[d];
  if (k < 0 || k > n)
    return invalid(op, "k " + str(k) + " is out of range for dim " + str(d) + " of size " + str(n));
  int64_t shape[ET_MAX_RANK];
  std::copy(self.sizes, self.sizes + self.rank, shape);
  if (self.rank > 0) shape[d] = k;
  ETRT_TRY(resize_out(op, values, shape, self.rank));
  ETRT_TRY(resize_out(op, indices, shape, self.rank));
  if (etrt::plugin::numel(values) == 0) return nullptr;
  ETRT_TRY(check_data(op, values, "values"));
  ETRT_TRY(check_data(op, indices, "indices"));
  const int32_t rank = self.rank == 0 ? 1 : self.rank;
  const int64_t one = 1, zero = 0;
  const int64_t* sizes = self.rank == 0 ? &one : self.sizes;
  View in = view_of(self), vo = view_of(values), io = view_of(indices);
  if (self.rank == 0) {
    in.rank = vo.rank = io.rank = 1;
    in.sizes[0] = vo.sizes[0] = io.sizes[0] = 1;
    in.strides[0] = vo.strides[0] = io.strides[0] = zero;
  }
  int64_t rows = 1;
  for (int32_t i = 0; i < rank; ++i) rows *= i == d ? 1 : sizes[i];
  dispatch_storage(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using S = Stored<T>;
    // a before b in the result.
    auto before = [largest](T a, T b) {
      if constexpr (std::is_floating_point_v<T>) {
        if (a != a) return largest && b == b;
        if (b != b) return !largest;
      }
      return largest ? a > b : a < b;
    };
    parallel(static_cast<size_t>(rows), 1, [&](size_t b0, size_t b1) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::vector<T> row(static_cast<size_t>(n));
      for (size_t r = b0; r < b1; ++r) {
        int64_t in_off = 0, v_off = 0, i_off = 0, rest = static_cast<int64_t>(r);
        for (int32_t i = rank; i-- > 0;) {
          if (i == d) continue;
          const int64_t at = rest % sizes[i];
          rest /= sizes[i];
          in_off += at * in.strides[i], v_off += at * vo.strides[i], i_off += at * io.strides[i];
        }
        for (int64_t j = 0; j < n; ++j)
          row[static_cast<size_t>(j)] = load<T>(reinterpret_cast<const S*>(in.data)[in_off + j * in.strides[d]]);
        std::iota(order.begin(), order.end(), int64_t{0});
        auto cmp = [&](int64_t a, int64_t b) {
          const T x = row[static_cast<size_t>(a)], y = row[static_cast<size_t>(b)];
          if (before(x, y)) return true;
          if (before(y, x)) return false;
          return a < b;
        };
        std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t src = order[static_cast<size_t>(j)];
          reinterpret_cast<S*>(vo.data)[v_off + j * vo.strides[d]] = static_cast<S>(row[static_cast<size_t>(src)]);
          reinterpret_cast<int64_t*>(io.data)[i_off + j * io.strides[d]] = src;
        }
      }
    });
  });
  return nullptr;
}

}  // namespace
}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> reorder_ops_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_REORDER_OPS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
