// etrt/half.hpp's float16 conversions compiled with F16C (this file only), so the test binary can check the
// hardware path against the portable one on a baseline build.
#include <cstdint>

#include "etrt/half.hpp"

#if !defined(__F16C__)
#error "compile this file with -mf16c"
#endif

uint16_t f16c_half_from_float(float f) { return etrt::plugin::half_from_float(f).bits; }
float f16c_half_to_float(uint16_t h) { return etrt::plugin::to_float(etrt::plugin::Half{h}); }
void f16c_half_from_float_bulk(const float* in, uint16_t* out, size_t n) {
  etrt::plugin::half_from_float(in, reinterpret_cast<etrt::plugin::Half*>(out), n);
}
