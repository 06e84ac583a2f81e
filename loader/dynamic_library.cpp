#include "dynamic_library.h"

#include <dlfcn.h>

namespace etrt::loader {

void* open_library(const std::string& path, std::string* error) {
  dlerror();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* text = dlerror();
    *error = text != nullptr ? text : "dlopen failed without a message";
  }
  return library;
}

void* find_symbol(void* library, const char* name, std::string* error) {
  dlerror();
  void* symbol = dlsym(library, name);
  if (symbol == nullptr) {
    const char* text = dlerror();
    *error = text != nullptr ? text : std::string("symbol '") + name + "' is null";
  }
  return symbol;
}

std::string path_of_address(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

}  // namespace etrt::loader
