/* etrt's pthreadpool shim: the pthreadpool functions Debian's libXNNPACK
 * imports, run on the etrt host's one pool (et_host_api.parallel_for).
 *
 * The XNNPACK plugin's private copy of libXNNPACK names this library instead
 * of libpthreadpool.so.0 (patched at build time, see CMakeLists.txt), so every
 * XNNPACK operator runs on etrt's workers and the process has one pool. The
 * `struct pthreadpool` these functions receive is the host's "pthreadpool"
 * lease handle (threadpool/pthreadpool_handle.h); NULL, or anything without
 * the handle's magic, runs on the calling thread, as pthreadpool does for NULL.
 *
 * Each call flattens its (tiled) index space into one range of tiles and lets
 * parallel_for split that; a body decodes a flat tile number back into the
 * task's arguments.
 *
 * Floating-point "invalid operation" flags raised by a call's tasks, on any
 * worker, are raised on the calling thread when the call returns, as if the
 * tasks had run there (the workers' own flags are left as they were). An
 * invalid operation is how a NaN is born (inf - inf, 0 * inf, 0 / 0) and what
 * a min/max instruction signals when it meets a NaN; the XNNPACK delegate
 * reads the flag after a run to find NaN that Debian's XNNPACK clamped away
 * (delegate.cpp). */
#include <fenv.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define MXCSR_INVALID 0x0001u    /* the invalid-operation flag */
#define MXCSR_FLAGS 0x003Fu      /* every exception flag */
#define MXCSR_FTZ_DAZ 0x8040u
#endif

#include "threadpool/pthreadpool_handle.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define FLAG_DISABLE_DENORMALS 0x00000001u /* PTHREADPOOL_FLAG_DISABLE_DENORMALS */

enum { kMaxDims = 6 };

/* One parallelize call: per dimension its range and tile (tile 0: untiled), and the task. */
typedef struct {
  size_t range[kMaxDims];
  size_t tile[kMaxDims];
  size_t tiles[kMaxDims]; /* tiles per dimension */
  int dims;
  int kind;
  void* task;
  void* context;
  uint32_t flags;
  uint32_t uarch; /* the _with_uarch calls' uarch index */
  int invalid;    /* some task raised an invalid operation (written by any worker, atomically) */
} Call;

enum {
  k1d, k1dTile1d, k2d, k2dTile1d, k2dTile2d, k3d, k3dTile2d, k4d, k4dTile2d, k5d, k5dTile2d, k6dTile2d,
  k2dTile2dUarch, k3dTile2dUarch, k4dTile2dUarch
};

typedef void (*Task1)(void*, size_t);
typedef void (*Task2)(void*, size_t, size_t);
typedef void (*Task3)(void*, size_t, size_t, size_t);
typedef void (*Task4)(void*, size_t, size_t, size_t, size_t);
typedef void (*Task5)(void*, size_t, size_t, size_t, size_t, size_t);
typedef void (*Task6)(void*, size_t, size_t, size_t, size_t, size_t, size_t);
typedef void (*Task7)(void*, size_t, size_t, size_t, size_t, size_t, size_t, size_t);
typedef void (*Task8)(void*, size_t, size_t, size_t, size_t, size_t, size_t, size_t, size_t);
/* The _with_uarch tasks take the uarch index after the context. */
typedef void (*UarchTask4)(void*, uint32_t, size_t, size_t, size_t, size_t);
typedef void (*UarchTask5)(void*, uint32_t, size_t, size_t, size_t, size_t, size_t);
typedef void (*UarchTask6)(void*, uint32_t, size_t, size_t, size_t, size_t, size_t, size_t);

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* Runs flat tile `flat`: start[d] and extent[d] of each dimension, then the task. */
static void run_tile(const Call* call, size_t flat) {
  size_t start[kMaxDims], extent[kMaxDims];
  for (int d = call->dims - 1; d >= 0; --d) {
    size_t index = flat % call->tiles[d];
    flat /= call->tiles[d];
    size_t tile = call->tile[d] ? call->tile[d] : 1;
    start[d] = index * tile;
    extent[d] = min_size(tile, call->range[d] - start[d]);
  }
  void* c = call->context;
  switch (call->kind) {
    case k1d: ((Task1)call->task)(c, start[0]); break;
    case k1dTile1d: ((Task2)call->task)(c, start[0], extent[0]); break;
    case k2d: ((Task2)call->task)(c, start[0], start[1]); break;
    case k2dTile1d: ((Task3)call->task)(c, start[0], start[1], extent[1]); break;
    case k2dTile2d: ((Task4)call->task)(c, start[0], start[1], extent[0], extent[1]); break;
    case k3d: ((Task3)call->task)(c, start[0], start[1], start[2]); break;
    case k3dTile2d: ((Task5)call->task)(c, start[0], start[1], start[2], extent[1], extent[2]); break;
    case k4d: ((Task4)call->task)(c, start[0], start[1], start[2], start[3]); break;
    case k4dTile2d: ((Task6)call->task)(c, start[0], start[1], start[2], start[3], extent[2], extent[3]); break;
    case k5d: ((Task5)call->task)(c, start[0], start[1], start[2], start[3], start[4]); break;
    case k5dTile2d:
      ((Task7)call->task)(c, start[0], start[1], start[2], start[3], start[4], extent[3], extent[4]);
      break;
    case k6dTile2d:
      ((Task8)call->task)(c, start[0], start[1], start[2], start[3], start[4], start[5], extent[4], extent[5]);
      break;
    case k2dTile2dUarch: ((UarchTask4)call->task)(c, call->uarch, start[0], start[1], extent[0], extent[1]); break;
    case k3dTile2dUarch:
      ((UarchTask5)call->task)(c, call->uarch, start[0], start[1], start[2], extent[1], extent[2]);
      break;
    case k4dTile2dUarch:
      ((UarchTask6)call->task)(c, call->uarch, start[0], start[1], start[2], start[3], extent[2], extent[3]);
      break;
  }
}

/* Runs tiles with this thread's exception flags cleared; records an invalid operation in the call and puts the
 * thread's floating-point state back as it was. */
static void run_tiles(void* context, size_t begin, size_t end) {
  Call* call = (Call*)context;
  int invalid;
#if defined(__x86_64__) || defined(__i386__)
  const unsigned saved = _mm_getcsr();
  /* As pthreadpool does for this flag: flush-to-zero and denormals-are-zero while the tasks run. */
  _mm_setcsr((saved & ~MXCSR_FLAGS) | ((call->flags & FLAG_DISABLE_DENORMALS) ? MXCSR_FTZ_DAZ : 0u));
  for (size_t flat = begin; flat < end; ++flat) run_tile(call, flat);
  invalid = (_mm_getcsr() & MXCSR_INVALID) != 0;
  _mm_setcsr(saved);
#else
  fexcept_t saved;
  fegetexceptflag(&saved, FE_INVALID);
  feclearexcept(FE_INVALID);
  for (size_t flat = begin; flat < end; ++flat) run_tile(call, flat);
  invalid = fetestexcept(FE_INVALID) != 0;
  fesetexceptflag(&saved, FE_INVALID);
#endif
  if (invalid) __atomic_store_n(&call->invalid, 1, __ATOMIC_RELAXED);
}

/* The calling thread's flag, raised without a trap (a trap would have fired in the task already). */
static void raise_invalid_here(void) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(_mm_getcsr() | MXCSR_INVALID);
#else
  feraiseexcept(FE_INVALID);
#endif
}

static const et_host_api* host_of(struct pthreadpool* pool) {
  if (pool == NULL || pool->magic != ETRT_PTHREADPOOL_HANDLE_MAGIC || pool->host == NULL) return NULL;
  return pool->host;
}

static void dispatch(struct pthreadpool* pool, Call* call) {
  size_t total = 1;
  for (int d = 0; d < call->dims; ++d) {
    if (call->range[d] == 0) return;
    size_t tile = call->tile[d] ? call->tile[d] : 1;
    call->tiles[d] = (call->range[d] + tile - 1) / tile;
    total *= call->tiles[d];
  }
  const et_host_api* host = host_of(pool);
  call->invalid = 0;
  if (host == NULL || total == 1)
    run_tiles(call, 0, total);
  else
    host->parallel_for(total, 1, run_tiles, call);
  if (__atomic_load_n(&call->invalid, __ATOMIC_RELAXED)) raise_invalid_here();
}

SHIM_EXPORT size_t pthreadpool_get_threads_count(struct pthreadpool* pool) {
  const et_host_api* host = host_of(pool);
  return host != NULL ? host->num_threads() : 1;
}

/* Builds the Call for `kind` from ranges r[] and tiles t[] (0 = untiled) and dispatches it. */
static void parallelize_uarch(struct pthreadpool* pool, int kind, void* task, void* context, uint32_t flags,
                              uint32_t uarch, int dims, const size_t* r, const size_t* t) {
  Call call;
  call.dims = dims;
  call.kind = kind;
  call.task = task;
  call.context = context;
  call.flags = flags;
  call.uarch = uarch;
  for (int d = 0; d < dims; ++d) {
    call.range[d] = r[d];
    call.tile[d] = t[d];
  }
  dispatch(pool, &call);
}

static void parallelize(struct pthreadpool* pool, int kind, void* task, void* context, uint32_t flags, int dims,
                        const size_t* r, const size_t* t) {
  parallelize_uarch(pool, kind, task, context, flags, 0, dims, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_1d(struct pthreadpool* pool, Task1 task, void* context, size_t range,
                                            uint32_t flags) {
  size_t r[] = {range}, t[] = {0};
  parallelize(pool, k1d, (void*)task, context, flags, 1, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_1d_tile_1d(struct pthreadpool* pool, Task2 task, void* context, size_t range,
                                                    size_t tile, uint32_t flags) {
  size_t r[] = {range}, t[] = {tile};
  parallelize(pool, k1dTile1d, (void*)task, context, flags, 1, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_2d(struct pthreadpool* pool, Task2 task, void* context, size_t range_i,
                                            size_t range_j, uint32_t flags) {
  size_t r[] = {range_i, range_j}, t[] = {0, 0};
  parallelize(pool, k2d, (void*)task, context, flags, 2, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_2d_tile_1d(struct pthreadpool* pool, Task3 task, void* context,
                                                    size_t range_i, size_t range_j, size_t tile_j, uint32_t flags) {
  size_t r[] = {range_i, range_j}, t[] = {0, tile_j};
  parallelize(pool, k2dTile1d, (void*)task, context, flags, 2, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_2d_tile_2d(struct pthreadpool* pool, Task4 task, void* context,
                                                    size_t range_i, size_t range_j, size_t tile_i, size_t tile_j,
                                                    uint32_t flags) {
  size_t r[] = {range_i, range_j}, t[] = {tile_i, tile_j};
  parallelize(pool, k2dTile2d, (void*)task, context, flags, 2, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_3d(struct pthreadpool* pool, Task3 task, void* context, size_t range_i,
                                            size_t range_j, size_t range_k, uint32_t flags) {
  size_t r[] = {range_i, range_j, range_k}, t[] = {0, 0, 0};
  parallelize(pool, k3d, (void*)task, context, flags, 3, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_3d_tile_2d(struct pthreadpool* pool, Task5 task, void* context,
                                                    size_t range_i, size_t range_j, size_t range_k, size_t tile_j,
                                                    size_t tile_k, uint32_t flags) {
  size_t r[] = {range_i, range_j, range_k}, t[] = {0, tile_j, tile_k};
  parallelize(pool, k3dTile2d, (void*)task, context, flags, 3, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_4d(struct pthreadpool* pool, Task4 task, void* context, size_t range_i,
                                            size_t range_j, size_t range_k, size_t range_l, uint32_t flags) {
  size_t r[] = {range_i, range_j, range_k, range_l}, t[] = {0, 0, 0, 0};
  parallelize(pool, k4d, (void*)task, context, flags, 4, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_4d_tile_2d(struct pthreadpool* pool, Task6 task, void* context,
                                                    size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                                    size_t tile_k, size_t tile_l, uint32_t flags) {
  size_t r[] = {range_i, range_j, range_k, range_l}, t[] = {0, 0, tile_k, tile_l};
  parallelize(pool, k4dTile2d, (void*)task, context, flags, 4, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_5d(struct pthreadpool* pool, Task5 task, void* context, size_t range_i,
                                            size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                            uint32_t flags) {
  size_t r[] = {range_i, range_j, range_k, range_l, range_m}, t[] = {0, 0, 0, 0, 0};
  parallelize(pool, k5d, (void*)task, context, flags, 5, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_5d_tile_2d(struct pthreadpool* pool, Task7 task, void* context,
                                                    size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                                    size_t range_m, size_t tile_l, size_t tile_m, uint32_t flags) {
  size_t r[] = {range_i, range_j, range_k, range_l, range_m}, t[] = {0, 0, 0, tile_l, tile_m};
  parallelize(pool, k5dTile2d, (void*)task, context, flags, 5, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_6d_tile_2d(struct pthreadpool* pool, Task8 task, void* context,
                                                    size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                                    size_t range_m, size_t range_n, size_t tile_m, size_t tile_n,
                                                    uint32_t flags) {
  size_t r[] = {range_i, range_j, range_k, range_l, range_m, range_n}, t[] = {0, 0, 0, 0, tile_m, tile_n};
  parallelize(pool, k6dTile2d, (void*)task, context, flags, 6, r, t);
}

/* The _with_uarch forms (Debian's arm64 libXNNPACK calls them, to pick micro-kernels per core type
 * on big.LITTLE chips): every task gets default_uarch_index, what pthreadpool itself passes when it
 * cannot tell which core a thread runs on. */
SHIM_EXPORT void pthreadpool_parallelize_2d_tile_2d_with_uarch(struct pthreadpool* pool, UarchTask4 task, void* context,
                                                               uint32_t default_uarch_index, uint32_t max_uarch_index,
                                                               size_t range_i, size_t range_j, size_t tile_i,
                                                               size_t tile_j, uint32_t flags) {
  (void)max_uarch_index;
  size_t r[] = {range_i, range_j}, t[] = {tile_i, tile_j};
  parallelize_uarch(pool, k2dTile2dUarch, (void*)task, context, flags, default_uarch_index, 2, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_3d_tile_2d_with_uarch(struct pthreadpool* pool, UarchTask5 task, void* context,
                                                               uint32_t default_uarch_index, uint32_t max_uarch_index,
                                                               size_t range_i, size_t range_j, size_t range_k,
                                                               size_t tile_j, size_t tile_k, uint32_t flags) {
  (void)max_uarch_index;
  size_t r[] = {range_i, range_j, range_k}, t[] = {0, tile_j, tile_k};
  parallelize_uarch(pool, k3dTile2dUarch, (void*)task, context, flags, default_uarch_index, 3, r, t);
}

SHIM_EXPORT void pthreadpool_parallelize_4d_tile_2d_with_uarch(struct pthreadpool* pool, UarchTask6 task, void* context,
                                                               uint32_t default_uarch_index, uint32_t max_uarch_index,
                                                               size_t range_i, size_t range_j, size_t range_k,
                                                               size_t range_l, size_t tile_k, size_t tile_l,
                                                               uint32_t flags) {
  (void)max_uarch_index;
  size_t r[] = {range_i, range_j, range_k, range_l}, t[] = {0, 0, tile_k, tile_l};
  parallelize_uarch(pool, k4dTile2dUarch, (void*)task, context, flags, default_uarch_index, 4, r, t);
}
