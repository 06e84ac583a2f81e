// The exported C functions of libetrt: thin shells over Registry and ThreadPool.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../threadpool/threadpool.h"
#include "error.h"
#include "etrt/etrt.h"
#include "host_api.h"
#include "program/prim_ops.h"
#include "registry.h"
#include "report_json.h"
#include "version.h"

using etrt::hand_over;
using etrt::make_error;
using etrt::Registry;

namespace {

// Every function below may be called from C: an exception of the host's own
// (out of memory, almost always) ends at the function (error.h's fences).
using etrt::fenced_status;
using etrt::fenced_value;

template <typename T>
bool fits(const T* out) {
  return out != nullptr && out->struct_size >= sizeof(T);
}

int32_t find_provider(int32_t kind, const char* name, etrt::Provider* provider, et_error** error) {
  if (name == nullptr) return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "name is null"), error);
  return hand_over(Registry::instance().find(kind, name, provider), error);
}

// Descriptors grow with the ABI's minor: copy only the prefix the caller's
// struct_size says it has room for, so a host compiled against an older etrt.h
// is not overrun, and report the size copied.
template <typename T>
int32_t find_descriptor(int32_t kind, T etrt::loader::Registration::*descriptor, const char* name, T* out,
                        const char* what, et_error** error) {
  if (out != nullptr && out->struct_size < sizeof(size_t))
    return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, std::string(what) +
                                                             ": out->struct_size is not set (set it to sizeof the struct)"),
                     error);
  etrt::Provider provider;
  int32_t status = find_provider(kind, name, &provider, error);
  if (status != ET_OK || out == nullptr) return status;
  size_t size = std::min(out->struct_size, sizeof(T));
  std::memcpy(out, &(provider.*descriptor), size);
  out->struct_size = size;
  return ET_OK;
}

}  // namespace

extern "C" {

void et_host_abi_version(uint32_t* major, uint32_t* min_minor, uint32_t* max_minor) {
  if (major) *major = ET_ABI_MAJOR;
  if (min_minor) *min_minor = 0;
  if (max_minor) *max_minor = ET_ABI_MINOR;
}

const et_host_api* et_host_api_get(void) { return etrt::host_api(); }

int32_t et_load_plugin(const char* path, et_error** error) {
  return fenced_status("et_load_plugin", error, [&]() -> int32_t {
    if (path == nullptr || *path == '\0')
      return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "plugin path is empty"), error);
    return hand_over(Registry::instance().load_path(path), error);
  });
}

int32_t et_add_manifest(const char* path, et_error** error) {
  return fenced_status("et_add_manifest", error, [&]() -> int32_t {
    if (path == nullptr || *path == '\0')
      return hand_over(make_error(ET_ERR_INVALID_ARGUMENT, "manifest path is empty"), error);
    return hand_over(Registry::instance().add_manifest_path(path, ET_SOURCE_HOST_MANIFEST), error);
  });
}

int32_t et_load_all_plugins(et_error** error) {
  return fenced_status("et_load_all_plugins", error,
                       [&] { return hand_over(Registry::instance().load_all(), error); });
}

size_t et_plugin_count(void) {
  return fenced_value<size_t>(0, [] {
    Registry::instance().ensure_discovered();
    return Registry::instance().plugins().size();
  });
}

int32_t et_plugin_at(size_t index, et_plugin_record* out) {
  return fenced_status("et_plugin_at", nullptr, [&]() -> int32_t {
    // Records end with `warnings` for callers built before the CPU level fields.
    constexpr size_t kMinimumSize = offsetof(et_plugin_record, warnings) + sizeof(const char*);
    if (out == nullptr || out->struct_size < kMinimumSize) return ET_ERR_INVALID_ARGUMENT;
    et_plugin_record record{};
    if (!Registry::instance().describe(index, &record)) return ET_ERR_NOT_FOUND;
    record.struct_size = std::min(out->struct_size, sizeof(et_plugin_record));
    std::memcpy(out, &record, record.struct_size);
    return ET_OK;
  });
}

size_t et_registry_count(int32_t kind) {
  if (kind < 0 || kind > 2) return 0;
  return fenced_value<size_t>(0, [&] { return Registry::instance().entries(kind).size(); });
}

int32_t et_registry_at(int32_t kind, size_t index, et_registry_entry* out) {
  return fenced_status("et_registry_at", nullptr, [&]() -> int32_t {
    if (!fits(out) || kind < 0 || kind > 2) return ET_ERR_INVALID_ARGUMENT;
    auto entries = Registry::instance().entries(kind);
    if (index >= entries.size()) return ET_ERR_NOT_FOUND;
    const auto& [provider, reason] = entries[index];
    etrt::PluginRecord* plugin = provider.plugin;
    *out = et_registry_entry{};
    out->struct_size = sizeof(et_registry_entry);
    out->kind = kind;
    out->is_winner = reason.empty() ? 1 : 0;
    out->name = kind == ET_ENTRY_OPERATOR ? provider.kernel.name
                : kind == ET_ENTRY_BACKEND ? provider.backend.id
                                           : provider.tracer.name;
    out->variant = kind == ET_ENTRY_OPERATOR ? provider.kernel.variant : "";
    out->plugin = plugin->name.c_str();
    out->plugin_path = plugin->library_path.c_str();
    out->priority = plugin->priority;
    out->reason = etrt::intern(reason);
    return ET_OK;
  });
}

size_t et_rejection_count(void) {
  return fenced_value<size_t>(0, [] { return Registry::instance().rejections().size(); });
}

int32_t et_rejection_at(size_t index, et_rejection* out) {
  return fenced_status("et_rejection_at", nullptr, [&]() -> int32_t {
    if (!fits(out)) return ET_ERR_INVALID_ARGUMENT;
    auto rejections = Registry::instance().rejections();
    if (index >= rejections.size()) return ET_ERR_NOT_FOUND;
    *out = et_rejection{};
    out->struct_size = sizeof(et_rejection);
    out->path = etrt::intern(rejections[index].first);
    out->reason = etrt::intern(rejections[index].second);
    return ET_OK;
  });
}

size_t et_manifest_count(void) {
  return fenced_value<size_t>(0, [] {
    Registry::instance().ensure_discovered();
    return Registry::instance().manifests().size();
  });
}

const char* et_manifest_at(size_t index) {
  return fenced_value<const char*>(nullptr, [&]() -> const char* {
    auto manifests = Registry::instance().manifests();
    return index < manifests.size() ? etrt::intern(manifests[index]) : nullptr;
  });
}

int32_t et_find_kernel(const char* name, et_kernel_descriptor* out, et_error** error) {
  return fenced_status("et_find_kernel", error, [&]() -> int32_t {
    return find_descriptor(ET_ENTRY_OPERATOR, &etrt::loader::Registration::kernel, name, out, "et_find_kernel", error);
  });
}

int32_t et_find_backend(const char* id, et_backend_descriptor* out, et_error** error) {
  return fenced_status("et_find_backend", error, [&]() -> int32_t {
    return find_descriptor(ET_ENTRY_BACKEND, &etrt::loader::Registration::backend, id, out, "et_find_backend", error);
  });
}

int32_t et_find_tracer(const char* name, et_tracer_descriptor* out, et_error** error) {
  return fenced_status("et_find_tracer", error, [&]() -> int32_t {
    return find_descriptor(ET_ENTRY_TRACER, &etrt::loader::Registration::tracer, name, out, "et_find_tracer", error);
  });
}

int32_t et_registry_planned_provider(int32_t kind, const char* name, et_plugin_record* out) {
  return fenced_status("et_registry_planned_provider", nullptr, [&]() -> int32_t {
    if (name == nullptr || kind < 0 || kind > 2 || !fits(out)) return ET_ERR_INVALID_ARGUMENT;
    int64_t index = Registry::instance().planned_provider(kind, name);
    if (index < 0) return ET_ERR_NOT_FOUND;
    return Registry::instance().describe(static_cast<size_t>(index), out) ? ET_OK : ET_ERR_NOT_FOUND;
  });
}

int32_t et_operator_is_builtin(const char* name) { return name != nullptr && etrt::find_prim_op(name) != nullptr; }

char* et_report_json(void) {
  return fenced_value<char*>(nullptr, [] {
    std::string text = etrt::report_json();
    char* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (copy != nullptr) std::memcpy(copy, text.c_str(), text.size() + 1);
    return copy;
  });
}

void et_string_free(char* text) { std::free(text); }

size_t et_threadpool_size(void) { return etrt::ThreadPool::instance().size(); }

int32_t et_threadpool_set_size(size_t threads, et_error** error) {
  return fenced_status("et_threadpool_set_size", error, [&]() -> int32_t {
    return hand_over(etrt::ThreadPool::instance().resize(threads), error);
  });
}

const void* et_threadpool_identity(void) { return etrt::ThreadPool::instance().identity(); }

void et_parallel_for(size_t range, size_t grain, et_parallel_body body, void* context) {
  etrt::ThreadPool::instance().parallel_for(range, grain, body, context);
}

const void* et_registry_identity(void) { return &Registry::instance(); }

const char* et_version(void) { return ETRT_VERSION_STRING; }

}  // extern "C"
