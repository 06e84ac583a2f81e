#include "pthreadpool_library.h"

#include "etrt/private_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <initializer_list>
#include <mutex>
#include <utility>

namespace etrt {
namespace {

using SymbolSlot = std::pair<const char*, void**>;

// Opens `soname` privately and fills every slot; returns "" or why it failed.
// RTLD_LOCAL: nothing of ours joins the global scope; RTLD_DEEPBIND (unless a
// sanitizer forbids it): the library resolves its own calls before anything global.
std::string open_private(const char* soname, std::initializer_list<SymbolSlot> slots, std::string* path) {
  void* handle = dlopen(soname, plugin::private_open_flags());
  if (handle == nullptr) {
    const char* why = dlerror();
    return std::string("cannot open ") + soname + ": " + (why ? why : "unknown error");
  }
  link_map* map = nullptr;
  *path = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr ? map->l_name : soname;
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

const PthreadpoolLibrary* pthreadpool_library(std::string* error) {
  static PthreadpoolLibrary library;
  static const std::string failure = open_private(
      ETRT_PTHREADPOOL_SONAME,
      {{"pthreadpool_create", reinterpret_cast<void**>(&library.create)},
       {"pthreadpool_destroy", reinterpret_cast<void**>(&library.destroy)},
       {"pthreadpool_get_threads_count", reinterpret_cast<void**>(&library.get_threads_count)},
       {"pthreadpool_parallelize_1d_tile_1d", reinterpret_cast<void**>(&library.parallelize_1d_tile_1d)}},
      &library.path);
  return checked(library, failure, error);
}

const CpuinfoLibrary* cpuinfo_library(std::string* error) {
  static CpuinfoLibrary library;
  static const std::string failure = open_private(
      ETRT_CPUINFO_SONAME,
      {{"cpuinfo_initialize", reinterpret_cast<void**>(&library.initialize)},
       {"cpuinfo_get_cores_count", reinterpret_cast<void**>(&library.get_cores_count)}},
      &library.path);
  return checked(library, failure, error);
}

}  // namespace etrt
