// A backend as the host hands it out (to methods, and to hosts through
// et_find_backend): the plugin's functions called through host functions that
// stop any C++ exception they throw. Its init and execute then fail with an
// error naming the plugin, the call and what(); is_available answers "not
// available"; destroy logs. The plugin's own user_data and functions are kept
// in the FencedBackend, which lives as long as the registry (until exit).
#pragma once

#include <string>

#include "etrt/plugin_api.h"

namespace etrt {

struct FencedBackend {
  et_backend_descriptor plugin_backend{};  // as the plugin registered it
  std::string plugin;                      // its name, for errors
};

// The descriptor to hand out for `fenced`: same id and optional entries left
// NULL, functions of the host's, user_data = &fenced.
et_backend_descriptor fenced_backend_descriptor(FencedBackend& fenced);

}  // namespace etrt
