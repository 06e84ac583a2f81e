// Brings one plugin in: checks the file, dlopens it, negotiates the ABI and
// runs its init, in that order, so no plugin code runs before the checks pass.
#pragma once

#include "../core/src/registry.h"

namespace etrt::loader {

// Reads only the plugin's declared fields. On success fills *outcome and
// plugin->staged holds what it registered; on failure nothing stays staged.
et_error* load_plugin_library(PluginRecord* plugin, const et_host_api* host, LoadOutcome* outcome);

}  // namespace etrt::loader
