#include "trace_clock.h"

#include <chrono>
#include <mutex>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace etrt {
namespace {

// Less than this since the origin and a rate is not trusted. A pair is known to
// ~25 ns, so after 1 ms the rate is within 5e-5: a 10 ms run's last reading is
// within 0.5 us, and each run starts exact (it re-anchors).
constexpr uint64_t kMinCalibrationNs = 1'000'000;
// A run starting later than this after the last anchor re-anchors.
constexpr uint64_t kReanchorNs = 1'000'000;

struct TickPair {
  uint64_t ticks = 0, ns = 0;
};

// A (ticks, ns) pair: the clock read between two counter reads, the pair taken
// at their midpoint; read twice when the first was interrupted (a wide bracket).
TickPair read_pair() {
  TickPair best;
  uint64_t best_width = UINT64_MAX;
  for (int attempt = 0; attempt < 2; ++attempt) {
    uint64_t before = read_ticks();
    uint64_t ns = trace_now_ns();
    uint64_t after = read_ticks();
    uint64_t width = after >= before ? after - before : UINT64_MAX;
    if (width < best_width) {
      best = {before + width / 2, ns};
      best_width = width;
    }
    if (best_width < 4096) break;  // ~1-2 us at TSC rates: not interrupted
  }
  return best;
}

std::once_flag g_origin_once;
TickPair g_origin;

}  // namespace

bool tick_counter_usable() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool usable = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) return false;
    if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
    return (edx & (1u << 8)) != 0;  // invariant TSC: constant rate, ticks in every C-state
  }();
  return usable;
#elif defined(__aarch64__)
  return true;  // the generic timer's virtual counter runs at a fixed frequency
#else
  return false;
#endif
}

void trace_clock_origin() {
  std::call_once(g_origin_once, [] {
    if (tick_counter_usable()) g_origin = read_pair();
  });
}

void trace_clock_calibrate() {
  trace_clock_origin();
  if (!tick_counter_usable()) return;
  while (trace_now_ns() < g_origin.ns + kMinCalibrationNs)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

uint64_t TraceClock::reanchor() {
  trace_clock_origin();
  ns_per_tick_ = 0;
  if (!tick_counter_usable()) return monotone(trace_now_ns());
  TickPair pair = read_pair();
  anchor_ticks_ = pair.ticks;
  anchor_ns_ = pair.ns;
  if (pair.ns >= g_origin.ns + kMinCalibrationNs && pair.ticks > g_origin.ticks) {
    ns_per_tick_ = static_cast<double>(pair.ns - g_origin.ns) / static_cast<double>(pair.ticks - g_origin.ticks);
    reanchor_ticks_ = static_cast<uint64_t>(static_cast<double>(kReanchorNs) / ns_per_tick_);
  }
  return monotone(pair.ns);
}

uint64_t TraceClock::exact_now() {
  if (ns_per_tick_ <= 0) return monotone(trace_now_ns());
  TickPair pair = read_pair();
  anchor_ticks_ = pair.ticks;
  anchor_ns_ = pair.ns;
  return monotone(pair.ns);
}

}  // namespace etrt
