// Where manifests come from, after explicit loads and host-given manifests:
// ETRT_PLUGIN_PATH, then the default manifests installed beside libetrt.
#pragma once

#include <string>
#include <vector>

namespace etrt::loader {

// Entries of ETRT_PLUGIN_PATH (':'-separated files or directories). Ignored in
// setuid/setgid processes, like every path-type variable should be.
std::vector<std::string> plugin_path_from_env();

// <directory of libetrt>/etrt/manifests, found from libetrt's own address,
// never from the working directory. "" if it cannot be determined.
std::string default_manifest_dir();

}  // namespace etrt::loader
