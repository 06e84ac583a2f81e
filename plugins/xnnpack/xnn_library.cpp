#include "xnn_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "etrt/private_library.hpp"

namespace etrt::xnn {
namespace {

#ifndef ETRT_XNNPACK_PRIVATE_DIR
#define ETRT_XNNPACK_PRIVATE_DIR "xnnpack_private"
#define ETRT_XNNPACK_PRIVATE_FILE "libXNNPACK.so.0.etrt"
#define ETRT_PTHREADPOOL_SHIM_SONAME "libetrt_pthreadpool_shim.so.1"
#define ETRT_CPUINFO_PRIVATE_FILE "libcpuinfo.so.0.etrt"
#endif

// The directory holding the plugin's private libraries: beside this plugin's own file (found even when
// the loader mapped the plugin through /proc/self/fd/N, see own_library_path).
std::string private_directory() {
  std::string self = plugin::own_library_path(reinterpret_cast<const void*>(&private_directory));
  if (self.empty()) return "";
  size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/" ETRT_XNNPACK_PRIVATE_DIR;
}

// Sanitizer runtimes refuse RTLD_DEEPBIND; ETRT_XNNPACK_NO_DEEPBIND=1 opts out too.
bool want_deep_bind() {
  if (!plugin::deep_bind_allowed()) return false;
  const char* text = host_setting("ETRT_XNNPACK_NO_DEEPBIND");
  return text == nullptr || *text == '\0' || *text == '0';
}

// Constant-initialised (no static constructor); set once under the flag and
// leaked on purpose (the library stays mapped while the process runs).
std::once_flag g_once;
const Library* g_library = nullptr;
const std::string* g_error = nullptr;

void open_library() {
  auto* failure_text = new std::string();
  g_error = failure_text;
  std::string& failure = *failure_text;
  // Kept (in g_library) only once everything resolved: a failure frees it, nothing else points to it.
  auto owned = std::make_unique<Library>();
  Library& lib = *owned;
  lib.deep_bind = want_deep_bind();
  int mode = RTLD_NOW | RTLD_LOCAL;
  if (lib.deep_bind) mode |= RTLD_DEEPBIND;
  // The plugin's private libXNNPACK (its pthreadpool is etrt's shim, so XNNPACK
  // runs on the host's one pool), opened by path, never found by a search. The
  // shim and the private cpuinfo go first, so the copy's NEEDED entries bind to these very files.
  std::string dir = private_directory();
  if (dir.empty()) {
    failure = "cannot locate the XNNPACK plugin's own file (neither dladdr nor /proc/self/maps names it)";
    return;
  }
  std::string shim = dir + "/" ETRT_PTHREADPOOL_SHIM_SONAME;
  std::string cpuinfo = dir + "/" ETRT_CPUINFO_PRIVATE_FILE;
  std::string copy = dir + "/" ETRT_XNNPACK_PRIVATE_FILE;
  for (const std::string* path : {&shim, &cpuinfo, &copy}) {
    void* handle = dlopen(path->c_str(), mode);
    if (handle == nullptr) {
      const char* why = dlerror();
      failure = "cannot open the XNNPACK plugin's private library " + *path + ": " + (why ? why : "unknown error") +
                " (it is built and installed with the plugin)";
      return;
    }
    lib.handle = handle;  // the last one: libXNNPACK
  }
  struct link_map* map = nullptr;
  if (dlinfo(lib.handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr)
    lib.path = map->l_name;
  // dlsym on the handle searches that library and its dependencies only, never
  // the global scope, so a decoy exporting the same names cannot answer.
#define ETRT_XNN_RESOLVE(name)                                                                   \
  lib.name = reinterpret_cast<decltype(&::name)>(dlsym(lib.handle, #name));                        \
  if (lib.name == nullptr) {                                                                     \
    failure = "XNNPACK library " + lib.path + " has no symbol " #name;                           \
    return;                                                                                      \
  }
  ETRT_XNN_FUNCTIONS(ETRT_XNN_RESOLVE)
#undef ETRT_XNN_RESOLVE
  // pthreadpool as XNNPACK itself binds it (its dependency, through the same handle).
#define ETRT_POOL_RESOLVE(name, type)                                                             \
  lib.name = reinterpret_cast<type>(dlsym(lib.handle, #name));                                    \
  if (lib.name == nullptr) {                                                                     \
    failure = "XNNPACK library " + lib.path + " reaches no symbol " #name;                       \
    return;                                                                                      \
  }
  ETRT_POOL_FUNCTIONS(ETRT_POOL_RESOLVE)
#undef ETRT_POOL_RESOLVE
  xnn_status status = lib.xnn_initialize(nullptr);  // idempotent in XNNPACK
  if (status != xnn_status_success) {
    failure = std::string("xnn_initialize failed: ") + status_name(status);
    return;
  }
  g_library = owned.release();
}

}  // namespace

const Library* library(std::string* error) {
  std::call_once(g_once, open_library);
  if (g_library == nullptr && error != nullptr) *error = g_error ? *g_error : "XNNPACK not loaded";
  return g_library;
}

}  // namespace etrt::xnn
