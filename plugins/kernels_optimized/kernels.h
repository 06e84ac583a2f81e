// Kernel functions of the kernels_optimized plugin, and the host they use.
#pragma once

#include "etrt/plugin.hpp"

namespace etrt::kernels {

// Bound once in init; a plain pointer-sized object, so no static initialiser.
extern etrt::plugin::Host host;

et_error* add_out(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs);
et_error* mul_out(void* user_data, et_exec_context* ctx, et_value* const* args, size_t nargs);

}  // namespace etrt::kernels
