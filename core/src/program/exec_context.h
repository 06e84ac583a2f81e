// What a kernel or delegate call may ask the host about; plugins see it as the
// opaque et_exec_context and read it through the host table (scratch_alloc,
// trace_span).
#pragma once

#include <cstddef>

#include "etrt/plugin_api.h"
#include "scratch_arena.h"

namespace etrt {
struct TracedCall;
}

struct et_exec_context {
  const char* method_name;
  size_t instruction;
  etrt::ScratchArena* scratch;  // reset by the executor after every instruction
  etrt::TracedCall* traced = nullptr;  // the running call when its method is traced
};
