/* What the host's "pthreadpool" lease hands out: not a pthreadpool of any
 * pthreadpool library, but the object etrt's pthreadpool shim
 * (plugins/xnnpack/pthreadpool_shim.c, libetrt_pthreadpool_shim.so.1) receives as its
 * `struct pthreadpool`. The shim runs every pthreadpool_parallelize_* call on
 * host->parallel_for, so a library linked against the shim (the XNNPACK
 * plugin's private libXNNPACK) shares the host's one pool. C, so the shim
 * needs no C++ runtime. */
#ifndef ETRT_THREADPOOL_PTHREADPOOL_HANDLE_H
#define ETRT_THREADPOOL_PTHREADPOOL_HANDLE_H

#include <stdint.h>

#include "etrt/plugin_api.h"

/* "etrtPool" in ASCII: a shim given anything else refuses to use it. */
#define ETRT_PTHREADPOOL_HANDLE_MAGIC UINT64_C(0x6c6f6f5074727465)

struct pthreadpool {
  uint64_t magic;
  const et_host_api* host;
};

#endif
