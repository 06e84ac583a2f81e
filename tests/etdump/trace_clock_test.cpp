// The traced runs' clock (core/src/program/trace_clock.h): tick counter
// readings converted to CLOCK_MONOTONIC nanoseconds must land where the clock
// itself reads, never go back, and stay exact at the readings that anchor them.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "trace_clock.h"

namespace {

using etrt::TraceClock;
using etrt::trace_now_ns;

// A converted reading lies within `slack` of the clock read just before and after it.
void expect_between(uint64_t before, uint64_t reading, uint64_t after, uint64_t slack) {
  EXPECT_GE(reading + slack, before);
  EXPECT_LE(reading, after + slack);
}

TEST(TraceClock, AnUncalibratedClockReadsTheMonotonicClock) {
  etrt::trace_clock_origin();
  TraceClock clock;
  uint64_t before = trace_now_ns();
  uint64_t start = clock.start();
  uint64_t reading = clock.now();
  uint64_t after = trace_now_ns();
  EXPECT_LE(before, start);
  EXPECT_LE(start, reading);
  expect_between(before, reading, after, clock.calibrated() ? 50'000 : 0);  // exact unless (shuffled) calibrated
}

TEST(TraceClock, CalibrationWaitsUntilARateCanBeTrusted) {
  etrt::trace_clock_calibrate();
  TraceClock clock;
  clock.start();
  EXPECT_EQ(clock.calibrated(), etrt::tick_counter_usable());
}

TEST(TraceClock, CalibratedReadingsFollowTheMonotonicClock) {
  etrt::trace_clock_origin();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // past the 1 ms a rate needs
  TraceClock clock;
  uint64_t before_start = trace_now_ns();
  uint64_t start = clock.start();
  EXPECT_EQ(clock.calibrated(), etrt::tick_counter_usable());
  EXPECT_GE(start, before_start);
  uint64_t previous = start;
  // 50 us: the rate is known to parts per million; the slack is for a preempted pair.
  constexpr uint64_t kSlack = 50'000;
  for (int i = 0; i < 2000; ++i) {
    uint64_t before = trace_now_ns();
    uint64_t reading = clock.now();
    uint64_t worker = clock.worker_now();
    uint64_t after = trace_now_ns();
    expect_between(before, reading, after, kSlack);
    expect_between(before, worker, after, kSlack);
    EXPECT_GE(reading, previous) << "a run's clock went back";
    previous = reading;
    if (i % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  uint64_t before = trace_now_ns();
  uint64_t exact = clock.exact_now();
  uint64_t after = trace_now_ns();
  EXPECT_GE(exact, previous);
  expect_between(before, exact, after, 0);
}

// ABI 1.6 runs keep raw readings (start_ticks, ticks_now) and the tracer converts
// them later with conversion(): the result must land where the clock read.
TEST(TraceClock, RawReadingsConvertToTheMonotonicClock) {
  if (!etrt::tick_counter_usable())  // sessions send spans in ns there (TraceSession::create)
    GTEST_SKIP() << "no usable tick counter: no session records raw readings on this machine";
  etrt::trace_clock_calibrate();
  TraceClock clock;
  uint64_t before_start = trace_now_ns();
  uint64_t start = clock.start_ticks();
  uint64_t before = trace_now_ns();
  uint64_t reading = clock.ticks_now();
  uint64_t after = trace_now_ns();
  TraceClock::Conversion c = clock.conversion();
  auto ns = [&](uint64_t raw) -> uint64_t {
    if (c.ns_per_tick <= 0) return raw;  // uncalibrated: the readings are ns
    if (raw <= c.anchor_ticks) return c.anchor_ns;
    return c.anchor_ns + static_cast<uint64_t>(static_cast<double>(raw - c.anchor_ticks) * c.ns_per_tick);
  };
  EXPECT_GT(c.ns_per_tick, 0);
  constexpr uint64_t kSlack = 50'000;
  expect_between(before_start, ns(start), before, kSlack);
  expect_between(before, ns(reading), after, kSlack);
  EXPECT_LE(ns(start), ns(reading));
}

}  // namespace
