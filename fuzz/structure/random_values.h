// Random choices of the structure-aware mutator: one engine per mutation (seeded by
// libFuzzer, so a run is reproducible), and the replacement values that break
// programs: indices next to and just past a table's end, sizes whose products
// overflow, floats that are not numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace etrt_fuzz {

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, n); 0 when n is 0.
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(engine_() % n); }
  bool one_in(size_t n) { return below(n) == 0; }
  uint64_t bits() { return engine_(); }

  template <typename T>
  T& pick(std::vector<T>& items) {
    return items[below(items.size())];
  }

  // An operand index into a table of `count` entries: a neighbour, any entry, or a boundary
  // (-1, the count itself, the type's extremes).
  int64_t index(int64_t current, int64_t count) {
    switch (below(4)) {
      case 0: return current + (one_in(2) ? 1 : -1) * static_cast<int64_t>(1 + below(2));
      case 1: return static_cast<int64_t>(below(static_cast<size_t>(count > 0 ? count : 1)));
      case 2: {
        const int64_t edges[] = {-1, count, count - 1, count + 1, 0, INT32_MAX, INT32_MIN, INT32_MAX / 2 + 1};
        return edges[below(sizeof edges / sizeof edges[0])];
      }
      default: return static_cast<int64_t>(bits() % (static_cast<uint64_t>(count > 0 ? count : 1) * 4 + 4)) - 2;
    }
  }

  // An integer value (a size, a shape entry, a scalar argument): boundaries whose sums and
  // products overflow -- 1084 * 68069166323651482 is 24 modulo 2^64 -- or a small change.
  int64_t int64(int64_t current) {
    static const int64_t edges[] = {0, 1, -1, 2, 3, 1084, 68069166323651482, INT64_MAX, INT64_MIN, INT64_MIN + 1,
                                    INT32_MAX, INT32_MIN, int64_t{1} << 31, int64_t{1} << 32, (int64_t{1} << 32) + 1,
                                    int64_t{1} << 62, -(int64_t{1} << 62), 3037000500, 65536, 46341, 255, 256};
    switch (below(5)) {
      case 0:
      case 1: return edges[below(sizeof edges / sizeof edges[0])];
      case 2: return wrapping_add(current, static_cast<int64_t>(below(5)) - 2);
      case 3: return one_in(2) ? static_cast<int64_t>(static_cast<uint64_t>(current) * 2) : wrapping_neg(current);
      default: return static_cast<int64_t>(bits() >> below(64));
    }
  }

  // A 32-bit signed size (a tensor dimension).
  int32_t int32(int32_t current) {
    static const int32_t edges[] = {0, 1, -1, 2, -2, INT32_MAX, INT32_MIN, 65536, 1 << 20, 46341, 1 << 30, 255, 256};
    switch (below(4)) {
      case 0:
      case 1: return edges[below(sizeof edges / sizeof edges[0])];
      case 2: return static_cast<int32_t>(static_cast<uint32_t>(current) + static_cast<uint32_t>(below(5)) - 2u);
      default: return static_cast<int32_t>(static_cast<uint32_t>(bits()) >> below(32));
    }
  }

  // A 32-bit unsigned field of an XNNPACK blob: value ids, shape entries, kernel parameters.
  uint32_t uint32(uint32_t current, uint32_t count) {
    static const uint32_t edges[] = {0, 1, 2, 3, 0xFFFFFFFFu, 0xFFFFFFFEu, 0x80000000u, 0x7FFFFFFFu, 65536, 46341,
                                     1u << 20, 255, 256};
    switch (below(5)) {
      case 0: return edges[below(sizeof edges / sizeof edges[0])];
      case 1: return count == 0 ? 0 : static_cast<uint32_t>(below(count));
      case 2: return one_in(2) ? count : count - 1;
      case 3: return current + static_cast<uint32_t>(below(5)) - 2u;
      default: return static_cast<uint32_t>(bits()) >> below(32);
    }
  }

  // A 64-bit unsigned offset or size.
  uint64_t uint64(uint64_t current) {
    static const uint64_t edges[] = {0, 1, UINT64_MAX, UINT64_MAX - 15, uint64_t{1} << 32, uint64_t{1} << 63,
                                     0xFFFFFFFFu, 16, 64};
    switch (below(3)) {
      case 0: return edges[below(sizeof edges / sizeof edges[0])];
      case 1: return current + static_cast<uint64_t>(below(129)) - 64u;
      default: return bits() >> below(64);
    }
  }

  double real(double current) {
    static const double edges[] = {0.0,
                                   -0.0,
                                   1.0,
                                   -1.0,
                                   std::numeric_limits<double>::quiet_NaN(),
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::denorm_min(),
                                   std::numeric_limits<double>::max(),
                                   std::numeric_limits<double>::lowest(),
                                   3e38,
                                   -3e38,
                                   1e-45,
                                   9.2233720368547758e18};
    if (one_in(4)) return -current * 2;
    return edges[below(sizeof edges / sizeof edges[0])];
  }

 private:
  static int64_t wrapping_add(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
  static int64_t wrapping_neg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

  std::mt19937_64 engine_;
};

}  // namespace etrt_fuzz
