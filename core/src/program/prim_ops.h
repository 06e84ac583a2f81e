// Operators built into the executor: the scalar arithmetic and view ops that
// ExecuTorch programs use for dynamic shapes (aten::sym_size.int,
// executorch_prim::*). They act on the method's values, not on tensor data,
// so they belong to the executor rather than to a kernels plugin.
#pragma once

#include <string_view>

#include "etrt/plugin_api.h"

namespace etrt {

using PrimOpFn = et_error* (*)(et_value* const* args, size_t nargs);

// nullptr when `name` ("aten::sym_size.int") is not a built-in op.
PrimOpFn find_prim_op(std::string_view name);

}  // namespace etrt
