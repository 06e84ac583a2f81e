// A module that links libetrt, built twice (probe a, probe b) and loaded with
// RTLD_LOCAL by the one-registry test: both must see one registry and pool.
#include <cstddef>

#include "etrt/etrt.h"

extern "C" {

__attribute__((visibility("default"))) const char* probe_name() { return PROBE_NAME; }
__attribute__((visibility("default"))) const void* probe_registry_identity() { return et_registry_identity(); }
__attribute__((visibility("default"))) const void* probe_threadpool_identity() { return et_threadpool_identity(); }
__attribute__((visibility("default"))) size_t probe_threadpool_size() { return et_threadpool_size(); }
__attribute__((visibility("default"))) int probe_load_plugin(const char* path) {
  return et_load_plugin(path, nullptr);
}
__attribute__((visibility("default"))) int probe_set_threads(size_t n) { return et_threadpool_set_size(n, nullptr); }
__attribute__((visibility("default"))) size_t probe_operator_count() { return et_registry_count(ET_ENTRY_OPERATOR); }
__attribute__((visibility("default"))) int probe_has_kernel(const char* name) {
  // Looks only at what is registered: never loads.
  size_t count = et_registry_count(ET_ENTRY_OPERATOR);
  for (size_t i = 0; i < count; ++i) {
    et_registry_entry entry{};
    entry.struct_size = sizeof entry;
    if (et_registry_at(ET_ENTRY_OPERATOR, i, &entry) == ET_OK && __builtin_strcmp(entry.name, name) == 0) return 1;
  }
  return 0;
}

}  // extern "C"
