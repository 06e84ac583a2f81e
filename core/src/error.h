// The host's error object and helpers to create it from C++.
#pragma once

#include <string>

#include "etrt/plugin_api.h"

struct et_error {
  int32_t code = ET_OK;
  std::string message;
  std::string plugin;  // who raised it; "" for the host
};

namespace etrt {

// Never returns nullptr (falls back to a static out-of-memory error).
et_error* make_error(int32_t code, std::string message);

// Sets *out (when out is not null) or destroys the error; returns its code.
int32_t hand_over(et_error* error, et_error** out);

}  // namespace etrt
