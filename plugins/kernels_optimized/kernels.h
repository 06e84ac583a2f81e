// The kernels_optimized plugin: typed kernels (etrt/kernel.hpp), one table per
// kernel source, each made from that source's section of operators.def.
#pragma once

#include <span>

#include "etrt/kernel.hpp"

namespace etrt::kernels {

// Bound once in init; a plain pointer-sized object, so no static initialiser.
extern etrt::plugin::Host host;

using etrt::plugin::KernelDef;

// <family>_kernels(): the table of <family>.cpp, declared for every family of operators.def.
#define KERNELS_ALL
#define ETRT_KERNEL(name, fn, signature)
#define ETRT_KERNEL_FAMILY(family) std::span<const KernelDef> family##_kernels();
#include "operators.def"

}  // namespace etrt::kernels
