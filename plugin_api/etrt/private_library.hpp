// Opening a dependency privately: for a plugin (or libetrt) that must call
// its own copy of a library even when the process' global scope already holds
// another library exporting the same names (PyTorch exports pthreadpool_*,
// cpuinfo_*; ExecuTorch exports xnn_* too). Header-only; links nothing.
#pragma once

#include <dlfcn.h>

namespace etrt::plugin {

// RTLD_DEEPBIND makes the library resolve its own calls before the global
// scope. Sanitizer runtimes abort the process on RTLD_DEEPBIND, so it is only
// used when none is present (checked at run time: the host may be
// instrumented while this code is not).
inline bool deep_bind_allowed() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#else
  for (const char* runtime : {"__asan_init", "__tsan_init", "__msan_init", "__hwasan_init"})
    if (dlsym(RTLD_DEFAULT, runtime) != nullptr) return false;
  return true;
#endif
}

// dlopen flags for a private copy: never joins the global scope, binds its own calls first when allowed.
inline int private_open_flags() { return RTLD_NOW | RTLD_LOCAL | (deep_bind_allowed() ? RTLD_DEEPBIND : 0); }

}  // namespace etrt::plugin
