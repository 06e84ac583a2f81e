// The kernels_optimized plugin: each kernel family contributes a table of
// (operator name, function); plugin_entry.cpp registers every table.
#pragma once

#include <span>

#include "etrt/plugin.hpp"

namespace etrt::kernels {

// Bound once in init; a plain pointer-sized object, so no static initialiser.
extern etrt::plugin::Host host;

struct KernelEntry {
  const char* name;  // "aten::add.out"
  et_kernel_fn fn;
};

// One function per family, defined in that family's file.
std::span<const KernelEntry> binary_elementwise_kernels();
std::span<const KernelEntry> linalg_kernels();
std::span<const KernelEntry> pointwise_kernels();

}  // namespace etrt::kernels
