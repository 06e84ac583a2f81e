/* The pthreadpool entry points the current XNNPACK calls beyond those of
 * plugins/xnnpack/pthreadpool_shim.c, built on the shim's own entry points, so
 * every call still runs on the etrt host's one pool, with the shim's handling
 * of NULL pools and of PTHREADPOOL_FLAG_DISABLE_DENORMALS.
 *
 * - 3d_tile_1d and the _with_uarch forms: the shim's 3d_tile_2d / 2d_tile_1d with
 *   an adapter task (a tile of 1 in the untiled dimension; the caller's
 *   default_uarch_index, as the shim's other _with_uarch forms pass).
 * - _with_thread forms: the task needs the index of the thread it runs on, for
 *   per-thread scratch space, and the host's parallel_for does not say which
 *   thread runs a body. So the call becomes pthreadpool_get_threads_count()
 *   "thread slots" run through the shim's 1d form: the 1d form runs each slot
 *   exactly once, each slot takes tiles from a shared counter until none are
 *   left, and passes its slot number as the thread index. No two tasks that run
 *   at the same time share an index, and the slots balance uneven tiles. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pthreadpool.h"

/* --- adapters over the shim's entry points ------------------------------------------ */

typedef struct {
  void* task;
  void* context;
  uint32_t uarch;
} Adapter;

static void run_3d_tile_1d(void* context, size_t i, size_t j, size_t k, size_t tile_j, size_t tile_k) {
  (void)tile_j; /* always 1 */
  const Adapter* a = (const Adapter*)context;
  ((pthreadpool_task_3d_tile_1d_t)a->task)(a->context, i, j, k, tile_k);
}

void pthreadpool_parallelize_3d_tile_1d(pthreadpool_t pool, pthreadpool_task_3d_tile_1d_t task, void* context,
                                        size_t range_i, size_t range_j, size_t range_k, size_t tile_k,
                                        uint32_t flags) {
  Adapter a = {(void*)task, context, 0};
  pthreadpool_parallelize_3d_tile_2d(pool, run_3d_tile_1d, &a, range_i, range_j, range_k, 1, tile_k, flags);
}

static void run_2d_tile_1d_with_uarch(void* context, size_t i, size_t j, size_t tile_j) {
  const Adapter* a = (const Adapter*)context;
  ((pthreadpool_task_2d_tile_1d_with_id_t)a->task)(a->context, a->uarch, i, j, tile_j);
}

void pthreadpool_parallelize_2d_tile_1d_with_uarch(pthreadpool_t pool, pthreadpool_task_2d_tile_1d_with_id_t task,
                                                   void* context, uint32_t default_uarch_index,
                                                   uint32_t max_uarch_index, size_t range_i, size_t range_j,
                                                   size_t tile_j, uint32_t flags) {
  (void)max_uarch_index;
  Adapter a = {(void*)task, context, default_uarch_index};
  pthreadpool_parallelize_2d_tile_1d(pool, run_2d_tile_1d_with_uarch, &a, range_i, range_j, tile_j, flags);
}

static void run_3d_tile_1d_with_uarch(void* context, size_t i, size_t j, size_t k, size_t tile_j, size_t tile_k) {
  (void)tile_j; /* always 1 */
  const Adapter* a = (const Adapter*)context;
  ((pthreadpool_task_3d_tile_1d_with_id_t)a->task)(a->context, a->uarch, i, j, k, tile_k);
}

void pthreadpool_parallelize_3d_tile_1d_with_uarch(pthreadpool_t pool, pthreadpool_task_3d_tile_1d_with_id_t task,
                                                   void* context, uint32_t default_uarch_index,
                                                   uint32_t max_uarch_index, size_t range_i, size_t range_j,
                                                   size_t range_k, size_t tile_k, uint32_t flags) {
  (void)max_uarch_index;
  Adapter a = {(void*)task, context, default_uarch_index};
  pthreadpool_parallelize_3d_tile_2d(pool, run_3d_tile_1d_with_uarch, &a, range_i, range_j, range_k, 1, tile_k,
                                     flags);
}

/* --- _with_thread forms: thread slots over the shim's 1d form ------------------------ */

enum ThreadKind { k1dWithThread, k2dWithThread, k3dTile1dWithThread, k3dTile1dWithUarchWithThread };

/* An index space of up to three dimensions whose last dimension may be tiled. */
typedef struct {
  size_t range[3];
  size_t last_tile;  /* tile of the last dimension (1: untiled) */
  size_t last_tiles; /* tiles in the last dimension */
  size_t total;      /* tiles in the whole space */
  int dims;
  enum ThreadKind kind;
  void* task;
  void* context;
  uint32_t uarch;
  atomic_size_t next; /* the next tile no slot has taken */
} ThreadCall;

static void run_tile_on_thread(const ThreadCall* call, size_t thread, size_t flat) {
  const int last = call->dims - 1;
  size_t start[3] = {0, 0, 0};
  start[last] = (flat % call->last_tiles) * call->last_tile;
  flat /= call->last_tiles;
  for (int d = last - 1; d >= 0; --d) {
    start[d] = flat % call->range[d];
    flat /= call->range[d];
  }
  const size_t remaining = call->range[last] - start[last];
  const size_t extent = remaining < call->last_tile ? remaining : call->last_tile;
  void* c = call->context;
  switch (call->kind) {
    case k1dWithThread: ((pthreadpool_task_1d_with_thread_t)call->task)(c, thread, start[0]); break;
    case k2dWithThread: ((pthreadpool_task_2d_with_thread_t)call->task)(c, thread, start[0], start[1]); break;
    case k3dTile1dWithThread:
      ((pthreadpool_task_3d_tile_1d_with_thread_t)call->task)(c, thread, start[0], start[1], start[2], extent);
      break;
    case k3dTile1dWithUarchWithThread:
      ((pthreadpool_task_3d_tile_1d_with_id_with_thread_t)call->task)(c, call->uarch, thread, start[0], start[1],
                                                                       start[2], extent);
      break;
  }
}

static void run_thread_slot(void* context, size_t slot) {
  ThreadCall* call = (ThreadCall*)context;
  for (;;) {
    size_t flat = atomic_fetch_add_explicit(&call->next, 1, memory_order_relaxed);
    if (flat >= call->total) return;
    run_tile_on_thread(call, slot, flat);
  }
}

static void parallelize_with_thread(pthreadpool_t pool, enum ThreadKind kind, void* task, void* context,
                                    uint32_t uarch, int dims, const size_t* range, size_t last_tile, uint32_t flags) {
  ThreadCall call;
  call.kind = kind;
  call.task = task;
  call.context = context;
  call.uarch = uarch;
  call.dims = dims;
  call.last_tile = last_tile ? last_tile : 1;
  call.total = 1;
  for (int d = 0; d < dims; ++d) {
    if (range[d] == 0) return;
    call.range[d] = range[d];
    call.total *= d == dims - 1 ? (range[d] + call.last_tile - 1) / call.last_tile : range[d];
  }
  call.last_tiles = (range[dims - 1] + call.last_tile - 1) / call.last_tile;
  atomic_init(&call.next, 0);
  size_t slots = pthreadpool_get_threads_count(pool);
  if (slots > call.total) slots = call.total;
  pthreadpool_parallelize_1d(pool, run_thread_slot, &call, slots, flags);
}

void pthreadpool_parallelize_1d_with_thread(pthreadpool_t pool, pthreadpool_task_1d_with_thread_t task,
                                            void* context, size_t range, uint32_t flags) {
  const size_t r[] = {range};
  parallelize_with_thread(pool, k1dWithThread, (void*)task, context, 0, 1, r, 1, flags);
}

void pthreadpool_parallelize_2d_with_thread(pthreadpool_t pool, pthreadpool_task_2d_with_thread_t task,
                                            void* context, size_t range_i, size_t range_j, uint32_t flags) {
  const size_t r[] = {range_i, range_j};
  parallelize_with_thread(pool, k2dWithThread, (void*)task, context, 0, 2, r, 1, flags);
}

void pthreadpool_parallelize_3d_tile_1d_with_thread(pthreadpool_t pool,
                                                    pthreadpool_task_3d_tile_1d_with_thread_t task, void* context,
                                                    size_t range_i, size_t range_j, size_t range_k, size_t tile_k,
                                                    uint32_t flags) {
  const size_t r[] = {range_i, range_j, range_k};
  parallelize_with_thread(pool, k3dTile1dWithThread, (void*)task, context, 0, 3, r, tile_k, flags);
}

void pthreadpool_parallelize_3d_tile_1d_with_uarch_with_thread(
    pthreadpool_t pool, pthreadpool_task_3d_tile_1d_with_id_with_thread_t task, void* context,
    uint32_t default_uarch_index, uint32_t max_uarch_index, size_t range_i, size_t range_j, size_t range_k,
    size_t tile_k, uint32_t flags) {
  (void)max_uarch_index;
  const size_t r[] = {range_i, range_j, range_k};
  parallelize_with_thread(pool, k3dTile1dWithUarchWithThread, (void*)task, context, default_uarch_index, 3, r, tile_k,
                          flags);
}
