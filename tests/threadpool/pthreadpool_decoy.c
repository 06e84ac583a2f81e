/* Exports the pthreadpool and cpuinfo functions libetrt uses, as PyTorch's
 * libtorch_cpu and libc10 (or ExecuTorch's threadpool library) do. Loaded
 * RTLD_GLOBAL before libetrt creates its pool, none of them may be called. */
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int etrt_decoy_calls = 0;
EXPORT const char* etrt_decoy_last = "";

#define COUNT(name) (++etrt_decoy_calls, etrt_decoy_last = name)

EXPORT void* pthreadpool_create(size_t threads) { (void)threads; COUNT("pthreadpool_create"); return NULL; }
EXPORT void pthreadpool_destroy(void* pool) { (void)pool; COUNT("pthreadpool_destroy"); }
EXPORT size_t pthreadpool_get_threads_count(void* pool) { (void)pool; COUNT("pthreadpool_get_threads_count"); return 0; }
EXPORT void pthreadpool_parallelize_1d_tile_1d(void* pool, void (*task)(void*, size_t, size_t), void* context,
                                               size_t range, size_t tile, uint32_t flags) {
  (void)pool; (void)task; (void)context; (void)range; (void)tile; (void)flags;
  COUNT("pthreadpool_parallelize_1d_tile_1d");
}
EXPORT int cpuinfo_initialize(void) { COUNT("cpuinfo_initialize"); return 0; }
EXPORT uint32_t cpuinfo_get_cores_count(void) { COUNT("cpuinfo_get_cores_count"); return 0; }
