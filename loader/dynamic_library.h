// The only code that talks to the platform's dynamic loader.
#pragma once

#include <string>

namespace etrt::loader {

// dlopen(RTLD_NOW | RTLD_LOCAL). Returns nullptr and sets *error (dlerror text).
void* open_library(const std::string& path, std::string* error);
void* find_symbol(void* library, const char* name, std::string* error);
// Path of the loaded object that contains `address`, or "".
std::string path_of_address(const void* address);

}  // namespace etrt::loader
