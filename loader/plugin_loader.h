// Brings one plugin in: checks the file, dlopens it, negotiates the ABI and
// runs its init, in that order, so no plugin code runs before the checks pass.
#pragma once

#include "../core/src/registry.h"

namespace etrt::loader {

// On success the plugin's library and ABI fields are set and plugin->staged
// holds what it registered. On failure nothing of the plugin stays registered.
et_error* load_plugin_library(PluginRecord* plugin, const et_host_api* host);

}  // namespace etrt::loader
