// The loader's and registry's state as JSON: what `etrt plugins --json` prints.
#pragma once

#include <string>

namespace etrt {

std::string report_json();

// Keeps a copy of text alive until process exit (for C records); deduplicated.
const char* intern(const std::string& text);

}  // namespace etrt
