// Entry point of the xnnpack plugin: registers the backend "XnnpackBackend".
//
// Proof that a delegate ran here: every handle counts its executes, the
// XNNPACK runtimes it invoked, the nodes it ran itself and the runtime sets it
// built. On destroy the counts go to the plugin's log (debug level) and, when
// ETRT_XNNPACK_STATS names a file, one JSON line is appended to it.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "delegate.h"

namespace etrt::xnn {
namespace {

plugin::Host host;  // constant-initialised

int32_t is_available(void*) {
  std::string error;
  if (library(&error) != nullptr) return 1;
  host.log(ET_LOG_ERROR, "XnnpackBackend is not available: " + error);
  return 0;
}

et_error* init_delegate(void*, const et_backend_init_args* args, void** out_handle) {
  if (args == nullptr || out_handle == nullptr || args->struct_size < sizeof(et_backend_init_args))
    return host.error(ET_ERR_INVALID_ARGUMENT, "XnnpackBackend: init arguments are missing or too small");
  *out_handle = nullptr;
  std::string why;
  const Library* lib = library(&why);
  if (lib == nullptr) return host.error(ET_ERR_NOT_SUPPORTED, "XnnpackBackend: " + why);
  try {
    // Owned until init succeeds: a throw from init (bad_alloc) frees it as a returned error does.
    auto delegate = std::make_unique<Delegate>(host, lib);
    if (et_error* error = delegate->init(*args)) return error;
    *out_handle = delegate.release();
    return nullptr;
  } catch (const std::bad_alloc&) {
    return host.error(ET_ERR_OUT_OF_MEMORY, "XnnpackBackend: out of memory while compiling the delegate");
  } catch (const std::exception& e) {
    return host.error(ET_ERR_INTERNAL, std::string("XnnpackBackend: ") + e.what());
  }
}

et_error* execute(void*, void* handle, et_exec_context* ctx, et_value* const* args, size_t nargs) {
  if (handle == nullptr) return host.error(ET_ERR_INVALID_STATE, "XnnpackBackend: execute without a delegate handle");
  try {
    return static_cast<Delegate*>(handle)->execute(ctx, args, nargs);
  } catch (const std::bad_alloc&) {
    return host.error(ET_ERR_OUT_OF_MEMORY, "XnnpackBackend: out of memory during execute");
  } catch (const std::exception& e) {
    return host.error(ET_ERR_INTERNAL, std::string("XnnpackBackend: ") + e.what());
  }
}

void report(const Delegate& d) {
  const Stats& s = d.stats();
  std::string line = "{\"backend\": \"XnnpackBackend\", \"plugin\": \"xnnpack\", \"executes\": " +
                     std::to_string(s.executes.load()) + ", \"plans_built\": " + std::to_string(s.plans_built.load()) +
                     ", \"xnnpack_invocations\": " + std::to_string(s.xnnpack_invocations.load()) +
                     ", \"plugin_node_runs\": " + std::to_string(s.plugin_node_runs.load()) +
                     ", \"setups\": " + std::to_string(s.setups.load()) +
                     ", \"reference_runs\": " + std::to_string(s.reference_runs.load()) +
                     ", \"nan_reruns\": " + std::to_string(s.nan_reruns.load()) + ", \"graph\": \"" + d.summary() +
                     "\", \"nodes\": " + d.node_kinds_json();
  std::string ignored;
  if (const Library* lib = library(&ignored)) {
    line += ", \"xnnpack_library\": \"" + lib->path + "\", \"deep_bind\": " + (lib->deep_bind ? "true" : "false");
  }
  line += "}";
  host.log(ET_LOG_DEBUG, line);
  const char* path = host_setting("ETRT_XNNPACK_STATS");
  if (path == nullptr || *path == '\0') return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

void destroy(void*, void* handle) {
  if (handle == nullptr) return;
  auto* delegate = static_cast<Delegate*>(handle);
  try {
    report(*delegate);
  } catch (...) {
  }
  delete delegate;
}

et_error* init(const et_host_api* api, et_plugin_handle* self) {
  host.bind(api, self);
  if (api->abi_minor < 1 || api->struct_size < offsetof(et_host_api, service_release) + sizeof(api->service_release))
    return host.error(ET_ERR_ABI_MISMATCH, "xnnpack plugin needs a host with ABI 1.1 services (the pthreadpool lease)");
  et_backend_descriptor backend{};
  backend.struct_size = sizeof backend;
  backend.id = "XnnpackBackend";
  backend.user_data = nullptr;
  backend.is_available = is_available;
  backend.init = init_delegate;
  backend.execute = execute;
  backend.destroy = destroy;
  return api->register_backend(self, &backend);
}

constexpr et_plugin_info kInfo = {
    sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_MINOR, "xnnpack", "0.1.0",
    "XNNPACK delegate (backend XnnpackBackend) on Debian's libXNNPACK", init,
};

}  // namespace

const char* host_setting(const char* name) { return et_host_setting(host.api(), host.self(), name); }

}  // namespace etrt::xnn

extern "C" ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &etrt::xnn::kInfo);
}
