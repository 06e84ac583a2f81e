// Shape changes the host makes to its own tensors (the host API's
// tensor_resize, inputs of dynamic shape, built-in view ops).
#pragma once

#include <cstddef>
#include <cstdint>

#include "etrt/plugin_api.h"

namespace etrt {

// Element size of an et_dtype, 0 for unknown codes.
size_t dtype_size(int32_t dtype);

// Changes a tensor's shape within its capacity and recomputes its strides in its dim order.
et_error* resize_tensor(et_tensor* tensor, const int64_t* sizes, size_t rank);

}  // namespace etrt
