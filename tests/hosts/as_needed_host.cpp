// A host linked with -Wl,--as-needed: registration is an explicit call into
// each plugin, so nothing depends on the linker keeping a library around.
// Runs aten::add.out from the default manifests and checks the answer.
#include <cstdio>

#include "etrt/etrt.h"

int main() {
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, out[4] = {};
  int64_t sizes[1] = {4}, strides[1] = {1};
  int64_t out_sizes[1] = {4}, out_strides[1] = {1};
  uint8_t order[1] = {0};
  auto make = [&](float* data, int64_t* s, int64_t* st) {
    et_tensor t{};
    t.struct_size = sizeof t;
    t.dtype = ET_DTYPE_FLOAT32;
    t.rank = 1;
    t.sizes = s;
    t.strides = st;
    t.dim_order = order;
    t.data = data;
    t.nbytes = t.capacity_bytes = 4 * sizeof(float);
    return t;
  };
  et_tensor ta = make(a, sizes, strides), tb = make(b, sizes, strides), tout = make(out, out_sizes, out_strides);
  et_value va{}, vb{}, valpha{}, vout{};
  va.struct_size = vb.struct_size = valpha.struct_size = vout.struct_size = sizeof(et_value);
  va.tag = vb.tag = vout.tag = ET_VALUE_TENSOR;
  va.tensor = &ta, vb.tensor = &tb, vout.tensor = &tout;
  valpha.tag = ET_VALUE_INT;
  valpha.as_int = 2;

  et_kernel_descriptor kernel{};
  kernel.struct_size = sizeof kernel;
  et_error* error = nullptr;
  if (et_find_kernel("aten::add.out", &kernel, &error) != ET_OK) {
    std::fprintf(stderr, "as_needed_host: %s\n", et_error_message(error));
    return 1;
  }
  et_value* args[] = {&va, &vb, &valpha, &vout, &vout};
  if (et_error* failed = kernel.fn(kernel.user_data, nullptr, args, 5)) {
    std::fprintf(stderr, "as_needed_host: %s\n", et_error_message(failed));
    return 1;
  }
  for (int i = 0; i < 4; ++i) {
    if (out[i] != a[i] + 2 * b[i]) {
      std::fprintf(stderr, "as_needed_host: out[%d] = %g, expected %g\n", i, out[i], a[i] + 2 * b[i]);
      return 1;
    }
  }
  std::printf("as_needed_host: aten::add.out served by the default kernels plugin\n");
  return 0;
}
