// The host's error object and helpers to create it from C++.
#pragma once

#include <new>
#include <string>

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

}  // namespace etrt
