#include "tensor_shape.h"

#include <algorithm>
#include <string>

#include "../error.h"
#include "checked_size.h"
#include "etrt/plugin.hpp"

namespace etrt {

size_t dtype_size(int32_t dtype) { return etrt::plugin::element_size(dtype); }

et_error* resize_tensor(et_tensor* tensor, const int64_t* sizes, size_t rank) {
  if (tensor == nullptr || (sizes == nullptr && rank > 0))
    return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: null tensor or sizes");
  if (rank != static_cast<size_t>(tensor->rank))
    return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: rank " + std::to_string(rank) +
                                                   " differs from the tensor's rank " + std::to_string(tensor->rank));
  size_t element = dtype_size(tensor->dtype);
  if (element == 0) return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: unknown dtype " + std::to_string(tensor->dtype));
  const ShapeSize shape = measure_shape(sizes, rank, element);
  if (!shape.ok()) return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: " + shape.fault_text());
  bool changed = false;
  for (size_t i = 0; i < rank; ++i) changed |= sizes[i] != tensor->sizes[i];
  if (!changed) return nullptr;
  if (tensor->dynamism == ET_SHAPE_STATIC)
    return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: tensor has a static shape");
  if (shape.nbytes > tensor->capacity_bytes)
    return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: " + std::to_string(shape.numel) +
                                                   " elements exceed the tensor's capacity of " +
                                                   std::to_string(tensor->capacity_bytes) + " bytes");
  // The host owns sizes/strides; they are const only to plugins.
  auto* new_sizes = const_cast<int64_t*>(tensor->sizes);
  auto* strides = const_cast<int64_t*>(tensor->strides);
  for (size_t i = 0; i < rank; ++i) new_sizes[i] = sizes[i];
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    size_t dim = tensor->dim_order != nullptr ? tensor->dim_order[i] : i;
    strides[dim] = stride;
    stride *= std::max<int64_t>(sizes[dim], 1);
  }
  tensor->nbytes = shape.nbytes;
  return nullptr;
}

}  // namespace etrt
