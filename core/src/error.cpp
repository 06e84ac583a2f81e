#include "error.h"

#include <atomic>
#include <new>

#include "etrt/etrt.h"
#include "etrt/plugin.hpp"

namespace etrt {
namespace {

// Raw storage, so nothing runs at load time (libetrt has no static
// initialisers); the object is built there on first use, without allocating
// (the message fits std::string's inline buffer), and never destroyed.
alignas(et_error) unsigned char g_out_of_memory_storage[sizeof(et_error)];

et_error* out_of_memory_address() { return reinterpret_cast<et_error*>(g_out_of_memory_storage); }

}  // namespace

et_error* out_of_memory_error() {
  static et_error* const error = new (g_out_of_memory_storage) et_error{ET_ERR_OUT_OF_MEMORY, "out of memory", ""};
  return error;
}

}  // namespace etrt

void et_error::operator delete(et_error* error, std::destroying_delete_t) {
  if (error == etrt::out_of_memory_address()) return;
  error->~et_error();
  ::operator delete(error);
}

namespace etrt {

et_error* make_error(int32_t code, std::string message, std::string plugin) {
  auto* error = new (std::nothrow) et_error;
  if (error == nullptr) return out_of_memory_error();
  error->code = code;
  error->message = std::move(message);
  error->plugin = std::move(plugin);
  return error;
}

namespace {

std::atomic<PluginFaultListener> g_fault_listener{nullptr};

}  // namespace

et_error* plugin_exception_error(std::string_view plugin, std::string_view call) noexcept {
  et_error* error = nullptr;
  try {
    bool out_of_memory = false;
    std::string thrown = plugin::current_exception_text(&out_of_memory);
    error = make_error(out_of_memory ? ET_ERR_OUT_OF_MEMORY : ET_ERR_INTERNAL,
                       std::string(call) + " of plugin '" + std::string(plugin) + "' threw " + thrown +
                           " (C++ exceptions must not cross the plugin ABI)",
                       std::string(plugin));
  } catch (...) {
    return out_of_memory_error();
  }
  if (PluginFaultListener listener = g_fault_listener.load(); listener != nullptr && error != out_of_memory_error()) {
    try {
      listener(error->plugin, error->message);
    } catch (...) {  // noting the fault is best effort; the error itself is what the caller gets
    }
  }
  return error;
}

et_error* host_exception_error(std::string_view where) noexcept {
  try {
    bool out_of_memory = false;
    std::string thrown = plugin::current_exception_text(&out_of_memory);
    return make_error(out_of_memory ? ET_ERR_OUT_OF_MEMORY : ET_ERR_INTERNAL,
                      std::string(where) + (out_of_memory ? ": out of memory (" : ": internal error (") + thrown + ")");
  } catch (...) {
    return out_of_memory_error();
  }
}

void set_plugin_fault_listener(PluginFaultListener listener) { g_fault_listener.store(listener); }

int32_t hand_over(et_error* error, et_error** out) {
  if (error == nullptr) return ET_OK;
  int32_t code = error->code;
  if (out != nullptr) {
    *out = error;
  } else {
    delete error;
  }
  return code;
}

}  // namespace etrt

extern "C" {

int32_t et_error_code(const et_error* error) { return error ? error->code : ET_OK; }
const char* et_error_message(const et_error* error) { return error ? error->message.c_str() : ""; }
const char* et_error_plugin(const et_error* error) { return error ? error->plugin.c_str() : ""; }
void et_error_destroy(et_error* error) { delete error; }

const char* et_status_name(int32_t code) {
  switch (code) {
    case ET_OK: return "ok";
    case ET_ERR_INVALID_ARGUMENT: return "invalid argument";
    case ET_ERR_NOT_FOUND: return "not found";
    case ET_ERR_ABI_MISMATCH: return "ABI mismatch";
    case ET_ERR_OUT_OF_MEMORY: return "out of memory";
    case ET_ERR_NOT_SUPPORTED: return "not supported";
    case ET_ERR_INVALID_FILE: return "invalid file";
    case ET_ERR_LOAD_FAILED: return "load failed";
    case ET_ERR_ALREADY_EXISTS: return "already exists";
    case ET_ERR_INTERNAL: return "internal error";
    case ET_ERR_INVALID_PROGRAM: return "invalid program";
    case ET_ERR_INVALID_STATE: return "invalid state";
    default: return "unknown status";
  }
}

}  // extern "C"
