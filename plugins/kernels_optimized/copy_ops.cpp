// Copy operators: dtype and dim-order conversions (_to_copy, _to_dim_order_copy),
// clones, alias_copy and copy_/copy.out. Each hands strided views to
// copy_view, which memcpys contiguous runs, blocks transposes and converts dtypes.
#include "pointwise_common.h"

namespace etrt::kernels::pw {
namespace {

bool same_dim_order(const et_tensor& t, const IntArrayRef& order) {
  if (order.count != static_cast<size_t>(t.rank)) return false;
  for (int32_t i = 0; i < t.rank; ++i) {
    int64_t actual = t.dim_order ? t.dim_order[i] : i;
    if (order.items[i] != actual) return false;
  }
  return true;
}


// Copies `in` into `out` element by element (same logical positions), with
// dtype conversion when `convert_dtype`.
et_error* elementwise_copy(const char* op, const et_tensor& in, et_tensor& out, bool convert_dtype) {
  ETRT_TRY(check_data(op, in, "self"));
  ETRT_TRY(check_movable(op, in, "self"));
  ETRT_TRY(check_movable(op, out, "out"));
  if (!convert_dtype && in.dtype != out.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(in.dtype));
  ETRT_TRY(resize_out(op, out, in.sizes, in.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  if (out.data == in.data && in.dtype == out.dtype) {
    View a = view_of(in), b = view_of(out);
    bool same = true;
    for (int32_t i = 0; i < in.rank; ++i) same &= a.sizes[i] == 1 || a.strides[i] == b.strides[i];
    if (same) return nullptr;  // already in place (an aliasing view)
  }
  copy_view(view_of(out), view_of(in));
  return nullptr;
}



// memory_format: None, 0 contiguous, 1 preserve, 2 channels_last, 3 channels_last_3d.
et_error* check_memory_format(const char* op, std::optional<int64_t> memory_format, const et_tensor& out) {
  if (!memory_format) return nullptr;
  const int64_t mf = *memory_format;
  if (mf == 1) return nullptr;
  if (mf == 0) {
    if (default_dim_order(out)) return nullptr;
    return invalid(op, "memory_format contiguous_format does not match the output's dim order " + dim_order_string(out));
  }
  if (mf == 2 || mf == 3) {
    bool ok = out.rank == (mf == 2 ? 4 : 5) && out.dim_order != nullptr && out.dim_order[0] == 0 &&
              out.dim_order[out.rank - 1] == 1;
    for (int32_t i = 1; ok && i + 1 < out.rank; ++i) ok = out.dim_order[i] == i + 1;
    if (ok) return nullptr;
    return invalid(op, std::string("memory_format ") + (mf == 2 ? "channels_last" : "channels_last_3d") +
                           " does not match the output's dim order " + dim_order_string(out));
  }
  return unsupported(op, "memory_format " + str(mf) + " is not supported");
}


et_error* check_dim_order_arg(const char* op, std::optional<IntArrayRef> dim_order, const et_tensor& out) {
  if (!dim_order) {
    if (default_dim_order(out)) return nullptr;
    return invalid(op, "dim_order None (contiguous) does not match the output's dim order " + dim_order_string(out));
  }
  if (!same_dim_order(out, *dim_order))
    return invalid(op, "dim_order " + list_str(*dim_order) + " does not match the output's dim order " + dim_order_string(out));
  return nullptr;
}


}  // namespace

// _to_copy.out(self, *, bool non_blocking=False, MemoryFormat? memory_format=None, out)
et_error* to_copy_out(Call call, const Tensor& self, bool non_blocking, std::optional<int64_t> memory_format,
                      Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_memory_format(op, memory_format, out));
  return elementwise_copy(op, self, out, true);
}

// dim_order_ops::_to_dim_order_copy.out(self, *, bool non_blocking=False, int[]? dim_order=None, out)
et_error* to_dim_order_copy_out(Call call, const Tensor& self, bool non_blocking, std::optional<IntArrayRef> dim_order,
                                Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_dim_order_arg(op, dim_order, out));
  return elementwise_copy(op, self, out, true);
}

// clone.out(self, *, MemoryFormat? memory_format=None, out)
et_error* clone_out(Call call, const Tensor& self, std::optional<int64_t> memory_format, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_memory_format(op, memory_format, out));
  return elementwise_copy(op, self, out, false);
}

// dim_order_ops::_clone_dim_order.out(self, *, bool non_blocking=False, int[]? dim_order=None, out)
et_error* clone_dim_order_out(Call call, const Tensor& self, bool non_blocking, std::optional<IntArrayRef> dim_order,
                              Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_dim_order_arg(op, dim_order, out));
  return elementwise_copy(op, self, out, false);
}

// alias_copy.out(self, *, out)
et_error* alias_copy_out(Call call, const Tensor& self, Tensor& out) {
  const char* op = call.op;
  return elementwise_copy(op, self, out, false);
}

namespace {
// self <- src broadcast to self's shape, converted to self's dtype.
et_error* copy_into(const char* op, const et_tensor& src, const View& dst, const et_tensor& self) {
  ETRT_TRY(check_data(op, src, "src"));
  ETRT_TRY(check_movable(op, src, "src"));
  ETRT_TRY(check_movable(op, self, "self"));
  bool ok = src.rank <= dst.rank;
  for (int32_t i = 0; ok && i < src.rank; ++i) {
    int64_t s = src.sizes[i], d = dst.sizes[dst.rank - src.rank + i];
    ok = s == d || s == 1;
  }
  if (!ok) return invalid(op, "src of shape " + shape_string(src) + " does not broadcast to self's shape " + shape_string(self));
  if (dst.numel() == 0) return nullptr;
  if (dst.data == src.data && src.dtype == dst.dtype) return nullptr;
  copy_view(dst, view_of(src));
  return nullptr;
}
}  // namespace

// copy_(self, src, bool non_blocking=False) -> self (in place; the return is self again)
et_error* copy_inplace(Call call, Tensor& self, const Tensor& src, bool non_blocking) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  return copy_into(op, src, view_of(self), self);
}

// copy.out(self, src, bool non_blocking=False, *, out)
et_error* copy_out(Call call, const Tensor& self, const Tensor& src, bool non_blocking, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_movable(op, out, "out"));
  if (out.dtype != self.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match self's dtype " +
                           dtype_name(self.dtype));
  ETRT_TRY(resize_out(op, out, self.sizes, self.rank));
  ETRT_TRY(check_data(op, out, "out"));
  return copy_into(op, src, view_of(out), self);
}


}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> copy_ops_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_COPY_OPS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
