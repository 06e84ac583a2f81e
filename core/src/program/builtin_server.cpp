#include "resolver.h"

#include "etrt/etrt.h"

namespace etrt {

PrimOpFn builtin_server(int32_t kind, std::string_view name) {
  return kind == ET_ENTRY_OPERATOR ? find_prim_op(name) : nullptr;
}

}  // namespace etrt
