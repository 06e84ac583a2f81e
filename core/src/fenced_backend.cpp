#include "fenced_backend.h"

#include <cstdio>

#include "error.h"
#include "logging.h"

namespace etrt {
namespace {

FencedBackend& of(void* user_data) { return *static_cast<FencedBackend*>(user_data); }

// "backend 'XnnpackBackend' init" (plugin_exception_error adds the plugin); built
// without allocating, as it is built in catch blocks (memory may be what ran out).
struct CallName {
  char text[256];
};
CallName call_name(const FencedBackend& fenced, const char* function) noexcept {
  CallName name;
  std::snprintf(name.text, sizeof name.text, "backend '%s' %s", fenced.plugin_backend.id, function);
  return name;
}

// For the functions that return no error: the exception is noted and logged, and goes no further.
void log_exception(const FencedBackend& fenced, const char* function, const char* consequence) noexcept {
  et_error* error = nullptr;
  try {
    error = plugin_exception_error(fenced.plugin, call_name(fenced, function).text);
    log_message(LogLevel::Warn, error->message + consequence);
  } catch (...) {  // out of memory: the note is lost, the caller goes on
  }
  delete error;
}

int32_t is_available(void* user_data) noexcept {
  FencedBackend& fenced = of(user_data);
  try {
    return fenced.plugin_backend.is_available(fenced.plugin_backend.user_data);
  } catch (...) {
    log_exception(fenced, "is_available", "; taken as not available");
    return 0;
  }
}

et_error* init(void* user_data, const et_backend_init_args* args, void** out_handle) noexcept {
  FencedBackend& fenced = of(user_data);
  try {
    return fenced.plugin_backend.init(fenced.plugin_backend.user_data, args, out_handle);
  } catch (...) {
    return plugin_exception_error(fenced.plugin, call_name(fenced, "init").text);
  }
}

et_error* execute(void* user_data, void* handle, et_exec_context* context, et_value* const* args,
                  size_t nargs) noexcept {
  FencedBackend& fenced = of(user_data);
  try {
    return fenced.plugin_backend.execute(fenced.plugin_backend.user_data, handle, context, args, nargs);
  } catch (...) {
    return plugin_exception_error(fenced.plugin, call_name(fenced, "execute").text);
  }
}

void destroy(void* user_data, void* handle) noexcept {
  FencedBackend& fenced = of(user_data);
  try {
    fenced.plugin_backend.destroy(fenced.plugin_backend.user_data, handle);
  } catch (...) {
    log_exception(fenced, "destroy", "");
  }
}

}  // namespace

et_backend_descriptor fenced_backend_descriptor(FencedBackend& fenced) {
  const et_backend_descriptor& b = fenced.plugin_backend;
  et_backend_descriptor out = b;
  out.user_data = &fenced;
  out.is_available = b.is_available != nullptr ? is_available : nullptr;
  out.init = init;
  out.execute = execute;
  out.destroy = b.destroy != nullptr ? destroy : nullptr;
  return out;
}

}  // namespace etrt
