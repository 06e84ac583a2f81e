// The host's error object and helpers to create it from C++.
#pragma once

#include <new>
#include <string>
#include <string_view>

#include "etrt/plugin_api.h"

struct et_error {
  int32_t code = ET_OK;
  std::string message;
  std::string plugin;  // who raised it; "" for the host

  // Every `delete` of an error goes through here, so the preallocated
  // out-of-memory error (etrt::out_of_memory_error) is never freed.
  static void operator delete(et_error* error, std::destroying_delete_t);
};

namespace etrt {

// The error handed out when allocating one fails: preallocated, shared, never
// freed, never modified. A null error would read as success.
et_error* out_of_memory_error();

// Never returns nullptr (falls back to out_of_memory_error()).
et_error* make_error(int32_t code, std::string message, std::string plugin = {});

// Sets *out (when out is not null) or destroys the error; returns its code.
int32_t hand_over(et_error* error, et_error** out);

// Exceptions stop at every C boundary (a plugin may be C; a host may be C).
// Call these inside a catch block: they describe the exception being handled.
// Neither throws; when even the message cannot be built they return out_of_memory_error().
//
// A plugin's exception, caught around a call into it: "<call> of plugin '<plugin>'
// threw <type>: <what()>", with the plugin set. bad_alloc gives ET_ERR_OUT_OF_MEMORY,
// anything else ET_ERR_INTERNAL. The plugin fault listener (below) hears of it.
et_error* plugin_exception_error(std::string_view plugin, std::string_view call) noexcept;
// The host's own exception (out of memory, almost always), caught at a C entry point `where`.
et_error* host_exception_error(std::string_view where) noexcept;

// The body of an exported C function returning a status: an exception of the
// host's own becomes host_exception_error(where), handed over through `error`.
template <typename Body>
int32_t fenced_status(const char* where, et_error** error, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return hand_over(host_exception_error(where), error);
  }
}

// The body of an exported C function returning something else: an exception gives `failed`.
template <typename Result, typename Body>
Result fenced_value(Result failed, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return failed;
  }
}

// Told of every plugin exception plugin_exception_error() converts, with the plugin's
// name and the message; the registry notes it on the plugin's record. One listener.
using PluginFaultListener = void (*)(const std::string& plugin, const std::string& message);
void set_plugin_fault_listener(PluginFaultListener listener);

}  // namespace etrt
