// The host's resolver: the plugin registry, and the serving rule it follows.
#include "../registry.h"
#include "resolver.h"

namespace etrt {
namespace {

class RegistryResolver final : public Resolver {
 public:
  et_error* find_kernel(const std::string& name, ResolvedKernel* out) override {
    Provider provider;
    if (et_error* error = Registry::instance().find(ET_ENTRY_OPERATOR, name, &provider)) return error;
    out->fn = provider.kernel.fn;
    out->user_data = provider.kernel.user_data;
    out->prepare = provider.kernel.prepare;
    out->run_prepared = provider.kernel.run_prepared;
    out->release = provider.kernel.release;
    out->plugin = provider.plugin->name;
    return nullptr;
  }
  et_error* find_backend(const std::string& id, ResolvedBackend* out) override {
    Provider provider;
    if (et_error* error = Registry::instance().find(ET_ENTRY_BACKEND, id, &provider)) return error;
    out->backend = provider.backend;
    out->plugin = provider.plugin->name;
    return nullptr;
  }
};

}  // namespace

Resolver& registry_resolver() {
  static RegistryResolver resolver;
  return resolver;
}

}  // namespace etrt
