// Entry point of the kernels_optimized plugin: registers its kernels.
#include "kernels.h"

namespace etrt::kernels {

etrt::plugin::Host host;

namespace {

// Every family's table; each family's operators are also listed in operators/<family>.txt.
constexpr std::span<const KernelEntry> (*kFamilies[])() = {
    binary_elementwise_kernels,
    linalg_kernels,
    pointwise_kernels,
};

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  for (auto family : kFamilies) {
    for (const KernelEntry& kernel : family()) {
      if (et_error* error = host.register_kernel(kernel.name, kernel.fn)) return error;
    }
  }
  return nullptr;
}

constexpr et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, "kernels_optimized", "0.1.0",
    "CPU operator kernels", init,
};

}  // namespace
}  // namespace etrt::kernels

extern "C" ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &etrt::kernels::kInfo);
}
