// The clock of traced runs: the CPU's tick counter (x86 TSC, aarch64 virtual
// counter) read at each instruction's start and end, turned into CLOCK_MONOTONIC
// nanoseconds with a calibration, so an instruction's span costs two counter
// reads instead of two clock_gettime calls (~50 instructions each).
//
// Calibration: a (ticks, ns) pair read when the first session opens is the
// origin; a run that starts more than 1 ms after the last anchor reads another
// pair, which anchors the readings after it and gives the rate (ns per tick
// over the time since the origin; the error of a reading is the rate's error,
// parts per million, times the time since its anchor). Spans are therefore on
// the time base of trace_clock_ns, which delegates read for the spans they report: a delegate
// call's own boundaries are exact readings too (they re-anchor), so its events
// nest in it. The first session of a process waits until 1 ms has passed since
// the origin (a run before that would read clock_gettime directly, as does a
// machine without an invariant TSC, cpuid 0x80000007 EDX bit 8, or another
// architecture).
#pragma once

#include <time.h>

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace etrt {

// The tracers' time base: CLOCK_MONOTONIC, read through the vDSO (no system
// call), as std::chrono::steady_clock and delegates' trace_clock_ns read it.
inline uint64_t trace_now_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

// The raw counter; only meaningful where tick_counter_usable().
inline uint64_t read_ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#elif defined(__aarch64__)
  uint64_t ticks;
  asm volatile("mrs %0, cntvct_el0" : "=r"(ticks));
  return ticks;
#else
  return trace_now_ns();
#endif
}

// True when the counter ticks at a constant rate on every core (x86: invariant
// TSC; aarch64: always, by the architecture); false elsewhere.
bool tick_counter_usable();

// A session's clock, used by one run at a time (the session's run lock) except
// worker_now(), which pool threads may call concurrently during a run (it reads
// only what was written before the work was split).
class TraceClock {
 public:
  // A run begins: re-anchors at a fresh (ticks, ns) pair, and re-computes the
  // rate, when the last anchor is more than ~1 ms old (else converts, ~10
  // instructions instead of a clock_gettime); returns the run's start.
  uint64_t start() {
    if (ns_per_tick_ > 0) {
      uint64_t ticks = read_ticks();
      if (ticks - anchor_ticks_ < reanchor_ticks_) return monotone(converted(ticks));
    }
    return reanchor();
  }
  // start() for runs recorded raw (ABI 1.6): the same re-anchoring, but returns
  // the reading itself: ticks, or ns when uncalibrated (conversion() says which;
  // sessions record raw only where the counter is usable, so always ticks).
  uint64_t start_ticks() {
    if (ns_per_tick_ > 0) {
      uint64_t ticks = read_ticks();
      if (ticks - anchor_ticks_ < reanchor_ticks_) return ticks;
    }
    reanchor();
    return ns_per_tick_ > 0 ? anchor_ticks_ : last_ns_;
  }
  // A raw reading of a calibrated clock (the runs of a session with records
  // always are: it opens only where tick_counter_usable()); converted later with
  // conversion(). No test on the hot path: two readings per instruction.
  uint64_t ticks_now() const { return read_ticks(); }
  // What turns raw readings into ns: ns = anchor_ns + (ticks - anchor_ticks) * ns_per_tick
  // (ns_per_tick 0: the readings are ns). Changes only when the clock re-anchors.
  struct Conversion {
    uint64_t anchor_ticks = 0, anchor_ns = 0;
    double ns_per_tick = 0;
  };
  Conversion conversion() const { return {anchor_ticks_, anchor_ns_, ns_per_tick_}; }
  // Now in monotonic ns, never earlier than the previous reading of this run.
  uint64_t now() { return monotone(converted(read_ticks())); }
  // An exact clock_gettime reading that also re-anchors (delegate boundaries).
  uint64_t exact_now();
  // now() for pool threads: converted, not clamped (no shared state written).
  uint64_t worker_now() const { return converted(read_ticks()); }
  bool calibrated() const { return ns_per_tick_ > 0; }

 private:
  uint64_t converted(uint64_t ticks) const {
    if (ns_per_tick_ <= 0) return trace_now_ns();  // uncalibrated: the clock itself
    if (ticks <= anchor_ticks_) return anchor_ns_;
    // Signed conversions: one instruction each (the unsigned ones branch); a delta fits in 63 bits.
    auto delta = static_cast<int64_t>(ticks - anchor_ticks_);
    return anchor_ns_ + static_cast<uint64_t>(static_cast<int64_t>(static_cast<double>(delta) * ns_per_tick_));
  }
  uint64_t monotone(uint64_t ns) {
    if (ns < last_ns_) return last_ns_;
    last_ns_ = ns;
    return ns;
  }

  uint64_t reanchor();

  uint64_t anchor_ticks_ = 0, anchor_ns_ = 0, last_ns_ = 0, reanchor_ticks_ = 0;
  double ns_per_tick_ = 0;  // 0: read clock_gettime directly
};

// Takes the calibration origin if not taken yet.
void trace_clock_origin();
// Takes the origin and waits until a rate can be trusted (at most 1 ms, once per
// process): a session opening calls it, so every traced run is calibrated.
void trace_clock_calibrate();

}  // namespace etrt
