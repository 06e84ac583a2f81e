// A plugin whose entry point is written by ETRT_PLUGIN (plugin.hpp), its init a
// lambda (commas and all), built for an older minor and as one whose init throws
// (tests/sdk/entry_macro_test.cpp).
#include <stdexcept>

#include "etrt/kernel.hpp"

namespace {

etrt::plugin::Host host;

et_error* probe(int64_t value) { return nullptr; }

constexpr etrt::plugin::KernelDef kKernels[] = {etrt::plugin::kernel<probe>(SDK_PLUGIN_NAME "::probe", "value -> ()")};

constexpr bool kInitThrows = ENTRY_MACRO_INIT_THROWS;

}  // namespace

ETRT_PLUGIN(SDK_PLUGIN_NAME, "2.0.0", "a plugin whose entry point is ETRT_PLUGIN",
            [](const et_host_api* api, et_plugin_handle* self) -> et_error* {
              if (kInitThrows) throw std::runtime_error("no registration today");
              host.bind(api, self);
              return etrt::plugin::register_kernels(host, kKernels);
            })
