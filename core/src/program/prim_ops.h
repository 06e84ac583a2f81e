// Operators built into the executor: the scalar arithmetic and view ops that
// ExecuTorch programs use for dynamic shapes (aten::sym_size.int,
// executorch_prim::*). They act on the method's values, not on tensor data,
// so they belong to the executor rather than to a kernels plugin.
#pragma once

#include <string>
#include <string_view>

#include "etrt/plugin_api.h"

namespace etrt {

using PrimOpFn = et_error* (*)(et_value* const* args, size_t nargs);

// nullptr when `name` ("aten::sym_size.int") is not a built-in op.
PrimOpFn find_prim_op(std::string_view name);

// Checks, once when a method loads, the operands of the built-in op `name` as the program declares them: their
// count and kinds, dtypes, list lengths, and that each out operand is declared as the kind of the op's result.
// "" when they fit. The op relies on this: at run time it checks only what depends on the values.
using PrimCheckFn = std::string (*)(const et_value* const* args, size_t nargs);
std::string check_prim_operands(std::string_view name, const et_value* const* args, size_t nargs);

// "an int", "a float32 tensor of rank 2", "an int list of 3 items": a value's kind, for messages.
std::string value_kind_text(const et_value& value);

}  // namespace etrt
