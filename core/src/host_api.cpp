#include "host_api.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "../../threadpool/threadpool.h"
#include "etrt/plugin.hpp"
#include "error.h"
#include "logging.h"
#include "named_data.h"
#include "registry.h"

namespace etrt {
namespace {

PluginRecord* record_of(et_plugin_handle* self) { return reinterpret_cast<PluginRecord*>(self); }

// Registration is a plugin's init talking; anything else is refused up front.
et_error* check_registering(et_plugin_handle* self) {
  PluginRecord* plugin = record_of(self);
  if (plugin == nullptr || !plugin->in_init)
    return make_error(ET_ERR_INVALID_STATE, "registration is only allowed during the plugin's init");
  return nullptr;
}

// Copies the prefix of a plugin struct the plugin says it has; the rest stays zero.
template <typename T>
bool copy_prefix(const T* from, T* to, size_t minimum) {
  *to = T{};
  if (from == nullptr || from->struct_size < minimum) return false;
  std::memcpy(to, from, std::min(from->struct_size, sizeof(T)));
  to->struct_size = sizeof(T);
  return true;
}

std::string too_small(const char* what, size_t got, size_t minimum) {
  return std::string(what) + " is null or too small (struct_size " + std::to_string(got) + ", ABI 1.0 needs " +
         std::to_string(minimum) + ")";
}

et_error* register_kernel(et_plugin_handle* self, const et_kernel_descriptor* kernel) {
  if (et_error* error = check_registering(self)) return error;
  constexpr size_t kMin = offsetof(et_kernel_descriptor, user_data) + sizeof(void*);
  Provider provider;
  provider.kind = ET_ENTRY_OPERATOR;
  if (!copy_prefix(kernel, &provider.kernel, kMin))
    return make_error(ET_ERR_INVALID_ARGUMENT, too_small("kernel descriptor", kernel ? kernel->struct_size : 0, kMin));
  if (provider.kernel.name == nullptr || *provider.kernel.name == '\0' || provider.kernel.fn == nullptr)
    return make_error(ET_ERR_INVALID_ARGUMENT, "kernel descriptor needs a name and a function");
  PluginRecord* plugin = record_of(self);
  Registry& registry = Registry::instance();
  provider.name = provider.kernel.name;
  provider.variant = provider.kernel.variant != nullptr ? provider.kernel.variant : "";
  provider.kernel.name = registry.keep_string(plugin, provider.kernel.name);
  provider.kernel.variant = registry.keep_string(plugin, provider.variant.c_str());
  return registry.stage(plugin, std::move(provider));
}

et_error* register_backend(et_plugin_handle* self, const et_backend_descriptor* backend) {
  if (et_error* error = check_registering(self)) return error;
  constexpr size_t kMin = sizeof(et_backend_descriptor);
  Provider provider;
  provider.kind = ET_ENTRY_BACKEND;
  if (!copy_prefix(backend, &provider.backend, kMin))
    return make_error(ET_ERR_INVALID_ARGUMENT,
                      too_small("backend descriptor", backend ? backend->struct_size : 0, kMin));
  const et_backend_descriptor& b = provider.backend;
  if (b.id == nullptr || *b.id == '\0' || b.is_available == nullptr || b.init == nullptr ||
      b.execute == nullptr || b.destroy == nullptr)
    return make_error(ET_ERR_INVALID_ARGUMENT,
                      "backend descriptor needs an id and is_available, init, execute and destroy");
  PluginRecord* plugin = record_of(self);
  Registry& registry = Registry::instance();
  provider.name = b.id;
  provider.backend.id = registry.keep_string(plugin, b.id);
  return registry.stage(plugin, std::move(provider));
}

et_error* register_tracer(et_plugin_handle* self, const et_tracer_descriptor* tracer) {
  if (et_error* error = check_registering(self)) return error;
  constexpr size_t kMin = sizeof(et_tracer_descriptor);
  Provider provider;
  provider.kind = ET_ENTRY_TRACER;
  if (!copy_prefix(tracer, &provider.tracer, kMin))
    return make_error(ET_ERR_INVALID_ARGUMENT, too_small("tracer descriptor", tracer ? tracer->struct_size : 0, kMin));
  if (provider.tracer.name == nullptr || *provider.tracer.name == '\0' || provider.tracer.begin == nullptr ||
      provider.tracer.end == nullptr)
    return make_error(ET_ERR_INVALID_ARGUMENT, "tracer descriptor needs a name, begin and end");
  PluginRecord* plugin = record_of(self);
  Registry& registry = Registry::instance();
  provider.name = provider.tracer.name;
  provider.tracer.name = registry.keep_string(plugin, provider.tracer.name);
  return registry.stage(plugin, std::move(provider));
}

et_error* error_create(int32_t code, const char* message) {
  return make_error(code == ET_OK ? ET_ERR_INTERNAL : code, message != nullptr ? message : "");
}

void error_destroy(et_error* error) { delete error; }

void plugin_log(et_plugin_handle* self, int32_t level, const char* message) {
  auto log_level = static_cast<LogLevel>(level < 0 ? 0 : level > 4 ? 4 : level);
  if (!log_enabled(log_level)) return;
  PluginRecord* plugin = record_of(self);
  // While init runs only the loading thread may look at the record's identity.
  std::string who = plugin == nullptr ? std::string("plugin")
                    : plugin->state.load() == ET_PLUGIN_LOADED ? plugin->name
                                                               : plugin->loading_name;
  log_message(log_level, "[" + who + "] " + (message != nullptr ? message : ""));
}

void* host_alloc(size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  void* ptr = nullptr;
  if (posix_memalign(&ptr, alignment, size == 0 ? 1 : size) != 0) return nullptr;
  return ptr;
}

void host_free(void* ptr) { std::free(ptr); }

et_error* tensor_resize(et_tensor* tensor, const int64_t* sizes, size_t rank) {
  if (tensor == nullptr || (sizes == nullptr && rank > 0))
    return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: null tensor or sizes");
  if (rank != static_cast<size_t>(tensor->rank))
    return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: rank " + std::to_string(rank) +
                                                   " differs from the tensor's rank " + std::to_string(tensor->rank));
  size_t element = dtype_size(tensor->dtype);
  if (element == 0) return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: unknown dtype " + std::to_string(tensor->dtype));
  size_t numel = 1;
  bool changed = false;
  for (size_t i = 0; i < rank; ++i) {
    if (sizes[i] < 0) return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: negative size at dim " + std::to_string(i));
    if (__builtin_mul_overflow(numel, static_cast<size_t>(sizes[i]), &numel))
      return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: element count overflows");
    changed |= sizes[i] != tensor->sizes[i];
  }
  if (!changed) return nullptr;
  if (tensor->dynamism == ET_SHAPE_STATIC)
    return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: tensor has a static shape");
  size_t bytes = 0;
  if (__builtin_mul_overflow(numel, element, &bytes) || bytes > tensor->capacity_bytes)
    return make_error(ET_ERR_INVALID_ARGUMENT, "tensor_resize: " + std::to_string(numel) +
                                                   " elements exceed the tensor's capacity of " +
                                                   std::to_string(tensor->capacity_bytes) + " bytes");
  // The host owns sizes/strides; they are const only to plugins.
  auto* new_sizes = const_cast<int64_t*>(tensor->sizes);
  auto* strides = const_cast<int64_t*>(tensor->strides);
  for (size_t i = 0; i < rank; ++i) new_sizes[i] = sizes[i];
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    size_t dim = tensor->dim_order != nullptr ? tensor->dim_order[i] : i;
    strides[dim] = stride;
    stride *= std::max<int64_t>(sizes[dim], 1);
  }
  tensor->nbytes = bytes;
  return nullptr;
}

void parallel_for(size_t range, size_t grain, et_parallel_body body, void* context) {
  ThreadPool::instance().parallel_for(range, grain, body, context);
}

size_t num_threads() { return ThreadPool::instance().size(); }

et_error* named_data_get(et_named_data* map, const char* key, const void** data, size_t* size) {
  if (map == nullptr || key == nullptr || data == nullptr || size == nullptr)
    return make_error(ET_ERR_INVALID_ARGUMENT, "named_data_get: null argument");
  return map->get(key, data, size);
}

et_error* service_acquire(const char* name, et_service_lease* lease) {
  if (name != nullptr && std::strcmp(name, "pthreadpool") == 0) return ThreadPool::instance().acquire(lease);
  return make_error(ET_ERR_NOT_FOUND, std::string("host has no service named '") + (name ? name : "(null)") +
                                          "'; available: pthreadpool");
}

void service_release(et_service_lease* lease) { ThreadPool::instance().release(lease); }

}  // namespace

size_t dtype_size(int32_t dtype) { return etrt::plugin::element_size(dtype); }

const et_host_api* host_api() {
  static const et_host_api table = {
      sizeof(et_host_api), ET_ABI_MAJOR, ET_ABI_MINOR,
      register_kernel, register_backend,
      error_create, error_destroy,
      plugin_log,
      host_alloc, host_free,
      tensor_resize,
      parallel_for, num_threads,
      named_data_get,
      register_tracer, service_acquire, service_release,
  };
  return &table;
}

}  // namespace etrt
