// Where a method's operators and backends come from. The method asks through
// this interface, never the registry directly, so the executor can be tested
// with a fake one; the host's own resolver is the plugin registry.
#pragma once

#include <string>
#include <string_view>

#include "etrt/plugin_api.h"
#include "prim_ops.h"

namespace etrt {

struct ResolvedKernel {
  et_kernel_fn fn = nullptr;
  void* user_data = nullptr;
  // ABI 1.4 (et_kernel_prepare_fn): all three, or none.
  et_kernel_prepare_fn prepare = nullptr;
  et_kernel_run_prepared_fn run_prepared = nullptr;
  et_kernel_release_fn release = nullptr;
  std::string plugin;  // who serves it, for errors
};

struct ResolvedBackend {
  et_backend_descriptor backend{};
  std::string plugin;
};

class Resolver {
 public:
  virtual ~Resolver() = default;
  // An error's message says why nothing serves the name; the method collects them all.
  virtual et_error* find_kernel(const std::string& name, ResolvedKernel* out) = 0;
  virtual et_error* find_backend(const std::string& id, ResolvedBackend* out) = 0;
};

// The plugin registry (loads the plugin that provides a name on first need).
Resolver& registry_resolver();

// The serving rule, in one place for the method, the CLI and the devtools: an
// operator built into the executor is served by it whatever any plugin
// declares; every other operator, and every backend, by a resolver. Returns
// the built-in op, or nullptr when a resolver decides.
PrimOpFn builtin_server(int32_t kind, std::string_view name);

}  // namespace etrt
