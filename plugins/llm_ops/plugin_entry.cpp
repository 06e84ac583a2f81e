// The llm_ops plugin: its kernel table (from operators.def), init and ABI entry.
#include "llm_ops.h"

namespace etrt_llm {

etrt::plugin::Host host;

namespace {

constexpr etrt::plugin::KernelDef kKernels[] = {
#define ETRT_KERNEL(name, fn, signature) etrt::plugin::kernel<fn>(name, signature),
#include "operators.def"
#undef ETRT_KERNEL
};

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  return etrt::plugin::register_kernels(host, kKernels);
}

}  // namespace
}  // namespace etrt_llm

ETRT_PLUGIN("llm_ops", "0.1.0",
            "ExecuTorch's LLM custom operators (llama::update_cache, custom_sdpa, sdpa_with_kv_cache)", etrt_llm::init)
