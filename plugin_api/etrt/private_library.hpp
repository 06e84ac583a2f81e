// Opening a dependency privately: for a plugin (or libetrt) that must call
// its own copy of a library even when the process' global scope already holds
// another library exporting the same names (PyTorch exports pthreadpool_*,
// cpuinfo_*; ExecuTorch exports xnn_* too). Header-only; links nothing.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

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

// The file a plugin was loaded from, found from an address inside it (pass a
// function of the plugin), so it can open private libraries installed beside it.
// etrt's loader hashes and maps one open file (dlopen of /proc/self/fd/N), so
// dladdr names that descriptor, which is closed by the time the plugin runs;
// the kernel's map of the process still names the file itself. "" if not found.
inline std::string own_library_path(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  if (std::strncmp(info.dli_fname, "/proc/self/fd/", 14) != 0) return info.dli_fname;
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return "";
  const auto target = reinterpret_cast<uintptr_t>(address);
  std::string found;
  char line[4096 + 128];
  while (found.empty() && std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long begin = 0, end = 0;
    int path_at = 0;
    // "begin-end perms offset dev inode   path"
    if (std::sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &begin, &end, &path_at) < 2 || path_at == 0) continue;
    if (target < begin || target >= end || line[path_at] != '/') continue;
    found = line + path_at;
    while (!found.empty() && (found.back() == '\n' || found.back() == ' ')) found.pop_back();
    if (found.size() > 10 && found.compare(found.size() - 10, 10, " (deleted)") == 0) found.clear();
  }
  std::fclose(maps);
  return found;
}

}  // namespace etrt::plugin
