// Entry point of the kernels_optimized plugin: registers every family's kernels.
#include "half_compute.h"
#include "kernels.h"

namespace etrt::kernels {

etrt::plugin::Host host;

namespace {

constexpr std::span<const KernelDef> (*kFamilies[])() = {
#define ETRT_KERNEL(name, fn, signature)
#define ETRT_KERNEL_FAMILY(family) family##_kernels,
#define KERNELS_ALL
#include "operators.def"
};

// How many operators operators.def lists (a family missing from a table would leave some out).
constexpr size_t kOperators = 0
#define ETRT_KERNEL(name, fn, signature) +1
#define KERNELS_ALL
#include "operators.def"
    ;

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  size_t registered = 0;
  for (auto family : kFamilies) {
    ETRT_TRY(register_with_half(host, family()));
    registered += family().size();
  }
  if (registered != kOperators)
    return host.error(ET_ERR_INTERNAL, "kernels_optimized: registered " + std::to_string(registered) +
                                           " kernels but operators.def lists " + std::to_string(kOperators));
  return nullptr;
}

}  // namespace
}  // namespace etrt::kernels

ETRT_PLUGIN("kernels_optimized", "0.1.0", "CPU operator kernels", etrt::kernels::init)
