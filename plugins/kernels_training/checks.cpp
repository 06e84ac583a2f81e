// Argument checks the training kernels share; every message names the operator and the argument.
#include "training_kernels.h"

namespace etrt_training_kernels {

using etrt::plugin::dtype_name;
using etrt::plugin::shape_string;

et_error* invalid(const Call& call, const std::string& what) {
  return host.error(ET_ERR_INVALID_ARGUMENT, std::string(call.op) + ": " + what);
}

et_error* unsupported(const Call& call, const std::string& what) {
  return host.error(ET_ERR_NOT_SUPPORTED, std::string(call.op) + ": " + what);
}

et_error* expect_row_major(const Call& call, const Tensor& t, const char* name) {
  for (int32_t d = 0; d < t.rank; ++d)
    if (t.dim_order[d] != d)
      return unsupported(call, std::string(name) + " must be in the contiguous dim order, got " +
                                   etrt::plugin::dim_order_string(t));
  if (!etrt::plugin::is_dense_in_dim_order(t))
    return unsupported(call, std::string(name) + " " + shape_string(t) + " must be dense");
  if (t.data == nullptr && etrt::plugin::numel(t) > 0) return invalid(call, std::string(name) + " has no data");
  return nullptr;
}

et_error* expect_dtype(const Call& call, const Tensor& t, const char* name, int32_t dtype) {
  if (t.dtype == dtype) return nullptr;
  return invalid(call, std::string(name) + " must be " + dtype_name(dtype) + ", got " + dtype_name(t.dtype));
}

et_error* shape_output(const Call& call, Tensor& out, const int64_t* sizes, int32_t rank, const char* name) {
  bool same = out.rank == rank;
  for (int32_t d = 0; same && d < rank; ++d) same = out.sizes[d] == sizes[d];
  if (!same) {
    if (out.dynamism == ET_SHAPE_STATIC || out.rank != rank)
      return invalid(call, std::string(name) + " has the shape " + shape_string(out) + ", the result has shape " +
                               shape_string(sizes, rank));
    ETRT_TRY(host.api()->tensor_resize(&out, sizes, static_cast<size_t>(rank)));
  }
  if (out.is_const) return invalid(call, std::string(name) + " is a read-only constant");
  return expect_row_major(call, out, name);
}

et_error* expand_list(const Call& call, IntArrayRef list, const char* name, int dims, const int64_t* fallback,
                      int64_t* out) {
  if (list.empty() && fallback != nullptr) {
    for (int d = 0; d < dims; ++d) out[d] = fallback[d];
    return nullptr;
  }
  if (list.size() != 1 && list.size() != static_cast<size_t>(dims))
    return invalid(call, std::string(name) + " must have 1 or " + std::to_string(dims) + " items, got " +
                             std::to_string(list.size()));
  for (int d = 0; d < dims; ++d) out[d] = list[list.size() == 1 ? 0 : static_cast<size_t>(d)];
  return nullptr;
}

}  // namespace etrt_training_kernels
