// Deprecated helpers of the C++ SDK. They stay so that a plugin source written
// against an earlier SDK minor still compiles against today's headers, with a
// compiler warning that names what replaced them (docs/PLUGIN_GUIDE.md, "SDK
// stability"). Each says the minor it was deprecated in and the first minor
// that may remove it; a removal is noted in the SDK changelog of the guide.
// Included by plugin.hpp: a plugin never includes this file itself.
#pragma once

#include <cstddef>
#include <string>

#include "etrt/kernel_types.hpp"
#include "etrt/plugin.hpp"

namespace etrt::plugin {

// ------------------------------------------------------------ boxed argument checks
// SDK 1.1 and 1.2. Removed in 1.3 without a deprecation (typed kernels replaced
// them), restored deprecated in 1.6; may be removed from 1.8. A typed kernel
// (etrt/kernel.hpp) checks its argument count and every argument's kind before
// it runs; these check one boxed argument at a time, in the typed layer's words.

// nullptr when nargs == expected, else "<op>: expected <expected> arguments, got <nargs>".
[[deprecated("use a typed kernel (etrt/kernel.hpp, kernel<fn>(name, signature)): it checks the argument count")]]
inline et_error* expect_args(const Host& host, const char* op, size_t nargs, size_t expected) {
  if (nargs == expected) return nullptr;
  return host.error(ET_ERR_INVALID_ARGUMENT, std::string(op) + ": expected " + std::to_string(expected) +
                                                 " arguments, got " + std::to_string(nargs));
}

// nullptr when args[index] is a tensor, else "<op>: argument <index> must be a Tensor, got <kind>".
// The caller checked index < nargs (expect_args).
[[deprecated("use a typed kernel (etrt/kernel.hpp) taking `const Tensor&`: it checks each argument's kind")]]
inline et_error* expect_tensor(const Host& host, const char* op, et_value* const* args, size_t index) {
  const et_value* value = args != nullptr ? args[index] : nullptr;
  if (value != nullptr && value->tag == ET_VALUE_TENSOR && value->tensor != nullptr) return nullptr;
  std::string got = value == nullptr                  ? "nothing (null)"
                    : value->tag == ET_VALUE_TENSOR ? "a Tensor without data (null)"
                                                    : value_kind_name(value->tag);
  return host.error(ET_ERR_INVALID_ARGUMENT,
                    std::string(op) + ": argument " + std::to_string(index) + " must be a Tensor, got " + got);
}

}  // namespace etrt::plugin
