#include "xnn_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <mutex>

#include "etrt/private_library.hpp"

namespace etrt::xnn {
namespace {

#ifndef ETRT_XNNPACK_SONAME
#define ETRT_XNNPACK_SONAME "libXNNPACK.so.0"
#endif

// Sanitizer runtimes refuse RTLD_DEEPBIND; ETRT_XNNPACK_NO_DEEPBIND=1 opts out too.
bool want_deep_bind() {
  if (!plugin::deep_bind_allowed()) return false;
  const char* text = std::getenv("ETRT_XNNPACK_NO_DEEPBIND");
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
  auto* owned = new Library();
  Library& lib = *owned;
  lib.deep_bind = want_deep_bind();
  int mode = RTLD_NOW | RTLD_LOCAL;
  if (lib.deep_bind) mode |= RTLD_DEEPBIND;
  // If the library is already mapped (someone linked it), RTLD_DEEPBIND cannot
  // apply to it any more: its symbols were bound when it was first loaded.
  if (void* already = dlopen(ETRT_XNNPACK_SONAME, RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(already);
    lib.deep_bind = false;
  }
  lib.handle = dlopen(ETRT_XNNPACK_SONAME, mode);
  if (lib.handle == nullptr) {
    const char* why = dlerror();
    failure = std::string("cannot open " ETRT_XNNPACK_SONAME ": ") + (why ? why : "unknown error");
    return;
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
  g_library = owned;
}

}  // namespace

const Library* library(std::string* error) {
  std::call_once(g_once, open_library);
  if (g_library == nullptr && error != nullptr) *error = g_error ? *g_error : "XNNPACK not loaded";
  return g_library;
}

const char* status_name(int status) {
  switch (status) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
    default: return "unknown status";
  }
}

}  // namespace etrt::xnn
