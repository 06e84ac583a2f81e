#include "cpuinfo_library.h"

#include "etrt/private_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <initializer_list>
#include <utility>

namespace etrt {
namespace {

using SymbolSlot = std::pair<const char*, void**>;

// libetrt's private copy: ETRT_CPUINFO_PRIVATE_PATH relative to the directory of
// the object holding this code (libetrt), so it is never found by a search and a
// system or PyTorch copy cannot stand in for it.
std::string private_path(const char* relative) {
  std::string self = plugin::own_library_path(reinterpret_cast<const void*>(&private_path));
  if (self.empty()) return "";
  size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/" + relative;
}

// Opens the library at `file` privately and fills every slot; returns "" or why it failed.
// RTLD_LOCAL: nothing of ours joins the global scope; RTLD_DEEPBIND (unless a
// sanitizer forbids it): the library resolves its own calls before anything global.
std::string open_private(const std::string& file, std::initializer_list<SymbolSlot> slots, std::string* path) {
  if (file.empty()) return "cannot locate libetrt's own file (neither dladdr nor /proc/self/maps names it)";
  void* handle = dlopen(file.c_str(), plugin::private_open_flags());
  if (handle == nullptr) {
    const char* why = dlerror();
    return "cannot open libetrt's private library " + file + ": " + (why ? why : "unknown error") +
           " (it is built and installed with libetrt)";
  }
  link_map* map = nullptr;
  *path = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr ? map->l_name : file;
  for (const auto& [name, slot] : slots) {
    *slot = dlsym(handle, name);  // from this library (or its dependencies) only
    if (*slot == nullptr) return *path + ": missing symbol " + name;
  }
  return "";
}

template <typename Library>
const Library* checked(const Library& library, const std::string& failure, std::string* error) {
  if (failure.empty()) return &library;
  if (error != nullptr) *error = failure;
  return nullptr;
}

}  // namespace

const CpuinfoLibrary* cpuinfo_library(std::string* error) {
  static CpuinfoLibrary library;
  static const std::string failure = open_private(
      private_path(ETRT_CPUINFO_PRIVATE_PATH),
      {{"cpuinfo_initialize", reinterpret_cast<void**>(&library.initialize)},
       {"cpuinfo_get_cores_count", reinterpret_cast<void**>(&library.get_cores_count)}},
      &library.path);
  return checked(library, failure, error);
}

}  // namespace etrt
