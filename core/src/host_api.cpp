#include "host_api.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "../../threadpool/threadpool.h"
#include "etrt/plugin.hpp"
#include "error.h"
#include "logging.h"
#include "named_data.h"
#include "loader/plugin_handle.h"
#include "program/exec_context.h"
#include "program/tensor_shape.h"
#include "program/tracing.h"
#include "registry.h"

namespace etrt {
namespace {

using Provider = loader::Registration;

constexpr const char* kNotInInit = "registration is only allowed during the plugin's init";

// Refused before the descriptor is read or anything is copied: a plugin thread
// registering after init (in a loop, from several threads) costs nothing and changes nothing.
bool outside_init(const et_plugin_handle* self) { return self == nullptr || !self->in_init(); }

// The handle decides whether registration is allowed (only during init, under its
// lock: the check above is only the early answer) and keeps the copied names.
et_error* stage(et_plugin_handle* self, Provider&& provider) {
  std::string why_not;
  int32_t code = self->stage(std::move(provider), &why_not);
  return code == ET_OK ? nullptr : make_error(code, std::move(why_not));
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
  if (outside_init(self)) return make_error(ET_ERR_INVALID_STATE, kNotInInit);
  constexpr size_t kMin = offsetof(et_kernel_descriptor, user_data) + sizeof(void*);
  Provider provider;
  provider.kind = ET_ENTRY_OPERATOR;
  if (!copy_prefix(kernel, &provider.kernel, kMin))
    return make_error(ET_ERR_INVALID_ARGUMENT, too_small("kernel descriptor", kernel ? kernel->struct_size : 0, kMin));
  if (provider.kernel.name == nullptr || *provider.kernel.name == '\0' || provider.kernel.fn == nullptr)
    return make_error(ET_ERR_INVALID_ARGUMENT, "kernel descriptor needs a name and a function");
  // 1.4: a kernel that prepares must also run prepared and release (a shorter descriptor left them zero).
  if (provider.kernel.prepare != nullptr && (provider.kernel.run_prepared == nullptr || provider.kernel.release == nullptr))
    return make_error(ET_ERR_INVALID_ARGUMENT, "kernel descriptor '" + std::string(provider.kernel.name) +
                                                   "' has prepare but not run_prepared and release");
  provider.name = provider.kernel.name;
  provider.variant = provider.kernel.variant != nullptr ? provider.kernel.variant : "";
  return stage(self, std::move(provider));
}

et_error* register_backend(et_plugin_handle* self, const et_backend_descriptor* backend) {
  if (outside_init(self)) return make_error(ET_ERR_INVALID_STATE, kNotInInit);
  constexpr size_t kMin = sizeof(et_backend_descriptor);
  Provider provider;
  provider.kind = ET_ENTRY_BACKEND;
  if (!copy_prefix(backend, &provider.backend, kMin))
    return make_error(ET_ERR_INVALID_ARGUMENT,
                      too_small("backend descriptor", backend ? backend->struct_size : 0, kMin));
  const et_backend_descriptor& b = provider.backend;
  // is_available and destroy are optional (plugin_api.h): the method skips them when NULL.
  if (b.id == nullptr || *b.id == '\0' || b.init == nullptr || b.execute == nullptr)
    return make_error(ET_ERR_INVALID_ARGUMENT, "backend descriptor needs an id, init and execute");
  provider.name = b.id;
  return stage(self, std::move(provider));
}

et_error* register_tracer(et_plugin_handle* self, const et_tracer_descriptor* tracer) {
  if (outside_init(self)) return make_error(ET_ERR_INVALID_STATE, kNotInInit);
  constexpr size_t kMin = offsetof(et_tracer_descriptor, end) + sizeof(void*);  // ABI 1.1's descriptor
  Provider provider;
  provider.kind = ET_ENTRY_TRACER;
  if (!copy_prefix(tracer, &provider.tracer, kMin))
    return make_error(ET_ERR_INVALID_ARGUMENT, too_small("tracer descriptor", tracer ? tracer->struct_size : 0, kMin));
  if (provider.tracer.name == nullptr || *provider.tracer.name == '\0' || provider.tracer.begin == nullptr ||
      provider.tracer.end == nullptr)
    return make_error(ET_ERR_INVALID_ARGUMENT, "tracer descriptor needs a name, begin and end");
  const et_tracer_descriptor& t = provider.tracer;
  if (t.session_create != nullptr &&
      (t.session_destroy == nullptr || t.session_begin == nullptr || t.session_end == nullptr ||
       t.session_result == nullptr))
    return make_error(ET_ERR_INVALID_ARGUMENT,
                      "tracer descriptor with session_create needs session_destroy, session_begin, session_end and "
                      "session_result");
  provider.name = provider.tracer.name;
  return stage(self, std::move(provider));
}

et_error* error_create(int32_t code, const char* message) {
  return make_error(code == ET_OK ? ET_ERR_INTERNAL : code, message != nullptr ? message : "");
}

void error_destroy(et_error* error) { delete error; }

int32_t error_code(const et_error* error) { return error != nullptr ? error->code : ET_OK; }

const char* error_message(const et_error* error) { return error != nullptr ? error->message.c_str() : ""; }

void* scratch_alloc(et_exec_context* context, size_t bytes, size_t alignment) {
  if (context == nullptr || context->scratch == nullptr) return nullptr;
  return context->scratch->allocate(bytes, alignment);
}

// The loader's rule for the environment, for plugins: only etrt's own names,
// and nothing in a setuid/setgid process (secure_getenv returns NULL there).
const char* setting(et_plugin_handle*, const char* name) {
  if (name == nullptr || std::strncmp(name, "ETRT_", 5) != 0) return nullptr;
  return secure_getenv(name);
}

void plugin_log(et_plugin_handle* self, int32_t level, const char* message) {
  auto log_level = static_cast<LogLevel>(level < 0 ? 0 : level > 4 ? 4 : level);
  if (!log_enabled(log_level)) return;
  // The handle's name is fixed before init, so any thread may read it.
  std::string who = self == nullptr ? std::string("plugin") : self->plugin_name;
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
  return resize_tensor(tensor, sizes, rank);
}

void pool_parallel_for(size_t range, size_t grain, et_parallel_body body, void* context) {
  ThreadPool::instance().parallel_for(range, grain, body, context);
}

void parallel_for(size_t range, size_t grain, et_parallel_body body, void* context) {
  // A traced instruction on this thread records one span per chunk and thread
  // when the work splits over more than one thread (the thread-local is looked
  // up only then: work the pool runs inline adds nothing to the instruction's span).
  if (g_traced_runs.load(std::memory_order_relaxed) != 0) [[unlikely]] {
    if (range > std::max<size_t>(grain, 1) && ThreadPool::instance().size() > 1)
      if (TracedCall* traced = current_traced_call(); traced != nullptr)
        return traced_parallel_for(*traced, pool_parallel_for, range, grain, body, context);
  }
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

// A name given as a template argument ("register_kernel").
template <size_t N>
struct EntryName {
  constexpr EntryName(const char (&text)[N]) { std::copy_n(text, N, name); }
  char name[N];
};

// Every entry of the table is called from plugin code, which may be C: an
// exception of the host's own (out of memory while building a message, almost
// always) stops here. An entry returning an error returns one; the others
// return their "nothing" (null, 0). Zero cost while nothing throws.
template <EntryName kName, auto F>
struct Fenced;
template <EntryName kName, typename R, typename... A, R (*F)(A...)>
struct Fenced<kName, F> {
  static R call(A... args) noexcept {
    try {
      return F(args...);
    } catch (...) {
      if constexpr (std::is_same_v<R, et_error*>) return host_exception_error(kName.name);
      else if constexpr (!std::is_void_v<R>) return R{};
    }
  }
};

#define ETRT_FENCED(entry) &Fenced<#entry, entry>::call

}  // namespace

const et_host_api* host_api() {
  // parallel_for is the one entry not fenced here: an exception a plugin's own
  // body throws goes back to that plugin's caller, as if the body had run on the
  // calling thread (ThreadPool::parallel_for carries it over from the workers).
  static const et_host_api table = {
      sizeof(et_host_api), ET_ABI_MAJOR, ET_ABI_MINOR,
      ETRT_FENCED(register_kernel), ETRT_FENCED(register_backend),
      ETRT_FENCED(error_create), ETRT_FENCED(error_destroy),
      ETRT_FENCED(plugin_log),
      ETRT_FENCED(host_alloc), ETRT_FENCED(host_free),
      ETRT_FENCED(tensor_resize),
      parallel_for, ETRT_FENCED(num_threads),
      ETRT_FENCED(named_data_get),
      ETRT_FENCED(register_tracer), ETRT_FENCED(service_acquire), ETRT_FENCED(service_release),
      ETRT_FENCED(error_code), ETRT_FENCED(error_message), ETRT_FENCED(scratch_alloc), ETRT_FENCED(setting),
      ETRT_FENCED(trace_clock_ns), ETRT_FENCED(host_trace_span),
  };
  return &table;
}

}  // namespace etrt
