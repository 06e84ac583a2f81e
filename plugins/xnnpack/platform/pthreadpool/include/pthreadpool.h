/* The pthreadpool interface, as far as the XNNPACK etrt builds from source calls it
 * (cmake/third_party/EtrtXnnpack.cmake): pthreadpool's names, task signatures and flags,
 * declared here so XNNPACK compiles unchanged. etrt has no pthreadpool of its own: these
 * functions run on the etrt host's one thread pool (plugins/xnnpack/pthreadpool_shim.c,
 * plugins/xnnpack/platform/pthreadpool/pthreadpool_extensions.c), and the `struct
 * pthreadpool` they receive is the host's "pthreadpool" lease handle
 * (threadpool/pthreadpool_handle.h). NULL runs every task on the calling thread.
 *
 * Every parallelize call runs task(context, ...) once for each point (or tile) of its
 * index space and returns when all have run. A `tile` form passes each task the start
 * of its tile and the tile's extent (shorter at the end of a dimension) in the tiled
 * dimensions; the 1d/2d tiles are the last dimensions, e.g. 3d_tile_1d tiles k and
 * 3d_tile_2d tiles j and k. _with_uarch forms pass a microarchitecture index first
 * (etrt always passes default_uarch_index); _with_thread forms pass the index of the
 * thread running the task, below pthreadpool_get_threads_count(), never used by two
 * tasks at the same time (callers keep per-thread scratch space by it). */
#ifndef ETRT_XNNPACK_PLATFORM_PTHREADPOOL_H
#define ETRT_XNNPACK_PLATFORM_PTHREADPOOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pthreadpool* pthreadpool_t;

/* Flush denormals to zero (and treat denormal inputs as zero) while the tasks run. */
#define PTHREADPOOL_FLAG_DISABLE_DENORMALS 0x00000001
/* Let idle workers yield instead of spinning after the call (a hint; etrt's pool decides). */
#define PTHREADPOOL_FLAG_YIELD_WORKERS 0x00000002

typedef void (*pthreadpool_task_1d_t)(void* context, size_t i);
typedef void (*pthreadpool_task_1d_tile_1d_t)(void* context, size_t i, size_t tile_i);
typedef void (*pthreadpool_task_2d_t)(void* context, size_t i, size_t j);
typedef void (*pthreadpool_task_2d_tile_1d_t)(void* context, size_t i, size_t j, size_t tile_j);
typedef void (*pthreadpool_task_2d_tile_2d_t)(void* context, size_t i, size_t j, size_t tile_i, size_t tile_j);
typedef void (*pthreadpool_task_3d_t)(void* context, size_t i, size_t j, size_t k);
typedef void (*pthreadpool_task_3d_tile_1d_t)(void* context, size_t i, size_t j, size_t k, size_t tile_k);
typedef void (*pthreadpool_task_3d_tile_2d_t)(void* context, size_t i, size_t j, size_t k, size_t tile_j,
                                              size_t tile_k);
typedef void (*pthreadpool_task_4d_t)(void* context, size_t i, size_t j, size_t k, size_t l);
typedef void (*pthreadpool_task_4d_tile_2d_t)(void* context, size_t i, size_t j, size_t k, size_t l, size_t tile_k,
                                              size_t tile_l);
typedef void (*pthreadpool_task_5d_t)(void* context, size_t i, size_t j, size_t k, size_t l, size_t m);
typedef void (*pthreadpool_task_5d_tile_2d_t)(void* context, size_t i, size_t j, size_t k, size_t l, size_t m,
                                              size_t tile_l, size_t tile_m);
typedef void (*pthreadpool_task_6d_tile_2d_t)(void* context, size_t i, size_t j, size_t k, size_t l, size_t m,
                                              size_t n, size_t tile_m, size_t tile_n);

typedef void (*pthreadpool_task_1d_with_thread_t)(void* context, size_t thread_index, size_t i);
typedef void (*pthreadpool_task_2d_with_thread_t)(void* context, size_t thread_index, size_t i, size_t j);
typedef void (*pthreadpool_task_3d_tile_1d_with_thread_t)(void* context, size_t thread_index, size_t i, size_t j,
                                                          size_t k, size_t tile_k);

typedef void (*pthreadpool_task_2d_tile_1d_with_id_t)(void* context, uint32_t uarch_index, size_t i, size_t j,
                                                      size_t tile_j);
typedef void (*pthreadpool_task_2d_tile_2d_with_id_t)(void* context, uint32_t uarch_index, size_t i, size_t j,
                                                      size_t tile_i, size_t tile_j);
typedef void (*pthreadpool_task_3d_tile_1d_with_id_t)(void* context, uint32_t uarch_index, size_t i, size_t j,
                                                      size_t k, size_t tile_k);
typedef void (*pthreadpool_task_3d_tile_2d_with_id_t)(void* context, uint32_t uarch_index, size_t i, size_t j,
                                                      size_t k, size_t tile_j, size_t tile_k);
typedef void (*pthreadpool_task_4d_tile_2d_with_id_t)(void* context, uint32_t uarch_index, size_t i, size_t j,
                                                      size_t k, size_t l, size_t tile_k, size_t tile_l);
typedef void (*pthreadpool_task_3d_tile_1d_with_id_with_thread_t)(void* context, uint32_t uarch_index,
                                                                  size_t thread_index, size_t i, size_t j, size_t k,
                                                                  size_t tile_k);

/* The number of threads tasks may run on (1 for NULL). */
size_t pthreadpool_get_threads_count(pthreadpool_t threadpool);

void pthreadpool_parallelize_1d(pthreadpool_t threadpool, pthreadpool_task_1d_t task, void* context, size_t range,
                                uint32_t flags);
void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_1d_tile_1d_t task, void* context,
                                        size_t range, size_t tile, uint32_t flags);
void pthreadpool_parallelize_2d(pthreadpool_t threadpool, pthreadpool_task_2d_t task, void* context, size_t range_i,
                                size_t range_j, uint32_t flags);
void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_2d_tile_1d_t task, void* context,
                                        size_t range_i, size_t range_j, size_t tile_j, uint32_t flags);
void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_2d_tile_2d_t task, void* context,
                                        size_t range_i, size_t range_j, size_t tile_i, size_t tile_j, uint32_t flags);
void pthreadpool_parallelize_3d(pthreadpool_t threadpool, pthreadpool_task_3d_t task, void* context, size_t range_i,
                                size_t range_j, size_t range_k, uint32_t flags);
void pthreadpool_parallelize_3d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_t task, void* context,
                                        size_t range_i, size_t range_j, size_t range_k, size_t tile_k, uint32_t flags);
void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_3d_tile_2d_t task, void* context,
                                        size_t range_i, size_t range_j, size_t range_k, size_t tile_j, size_t tile_k,
                                        uint32_t flags);
void pthreadpool_parallelize_4d(pthreadpool_t threadpool, pthreadpool_task_4d_t task, void* context, size_t range_i,
                                size_t range_j, size_t range_k, size_t range_l, uint32_t flags);
void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_4d_tile_2d_t task, void* context,
                                        size_t range_i, size_t range_j, size_t range_k, size_t range_l, size_t tile_k,
                                        size_t tile_l, uint32_t flags);
void pthreadpool_parallelize_5d(pthreadpool_t threadpool, pthreadpool_task_5d_t task, void* context, size_t range_i,
                                size_t range_j, size_t range_k, size_t range_l, size_t range_m, uint32_t flags);
void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_5d_tile_2d_t task, void* context,
                                        size_t range_i, size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                        size_t tile_l, size_t tile_m, uint32_t flags);
void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_6d_tile_2d_t task, void* context,
                                        size_t range_i, size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                        size_t range_n, size_t tile_m, size_t tile_n, uint32_t flags);

void pthreadpool_parallelize_1d_with_thread(pthreadpool_t threadpool, pthreadpool_task_1d_with_thread_t task,
                                            void* context, size_t range, uint32_t flags);
void pthreadpool_parallelize_2d_with_thread(pthreadpool_t threadpool, pthreadpool_task_2d_with_thread_t task,
                                            void* context, size_t range_i, size_t range_j, uint32_t flags);
void pthreadpool_parallelize_3d_tile_1d_with_thread(pthreadpool_t threadpool,
                                                    pthreadpool_task_3d_tile_1d_with_thread_t task, void* context,
                                                    size_t range_i, size_t range_j, size_t range_k, size_t tile_k,
                                                    uint32_t flags);

void pthreadpool_parallelize_2d_tile_1d_with_uarch(pthreadpool_t threadpool, pthreadpool_task_2d_tile_1d_with_id_t task,
                                                   void* context, uint32_t default_uarch_index,
                                                   uint32_t max_uarch_index, size_t range_i, size_t range_j,
                                                   size_t tile_j, uint32_t flags);
void pthreadpool_parallelize_2d_tile_2d_with_uarch(pthreadpool_t threadpool, pthreadpool_task_2d_tile_2d_with_id_t task,
                                                   void* context, uint32_t default_uarch_index,
                                                   uint32_t max_uarch_index, size_t range_i, size_t range_j,
                                                   size_t tile_i, size_t tile_j, uint32_t flags);
void pthreadpool_parallelize_3d_tile_1d_with_uarch(pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_with_id_t task,
                                                   void* context, uint32_t default_uarch_index,
                                                   uint32_t max_uarch_index, size_t range_i, size_t range_j,
                                                   size_t range_k, size_t tile_k, uint32_t flags);
void pthreadpool_parallelize_3d_tile_2d_with_uarch(pthreadpool_t threadpool, pthreadpool_task_3d_tile_2d_with_id_t task,
                                                   void* context, uint32_t default_uarch_index,
                                                   uint32_t max_uarch_index, size_t range_i, size_t range_j,
                                                   size_t range_k, size_t tile_j, size_t tile_k, uint32_t flags);
void pthreadpool_parallelize_4d_tile_2d_with_uarch(pthreadpool_t threadpool, pthreadpool_task_4d_tile_2d_with_id_t task,
                                                   void* context, uint32_t default_uarch_index,
                                                   uint32_t max_uarch_index, size_t range_i, size_t range_j,
                                                   size_t range_k, size_t range_l, size_t tile_k, size_t tile_l,
                                                   uint32_t flags);
void pthreadpool_parallelize_3d_tile_1d_with_uarch_with_thread(
    pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_with_id_with_thread_t task, void* context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t tile_k, uint32_t flags);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif
