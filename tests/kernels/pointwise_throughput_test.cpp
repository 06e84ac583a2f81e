// Throughput of the hot pointwise paths against a naive single-threaded loop
// (printed, not asserted: timings depend on the machine), with the results
// checked against the naive loop's.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "pointwise_test_support.h"

using namespace pw_test;

namespace {

template <typename F>
double best_ms(F&& f, int reps = 7) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

float* fdata(TT& t) { return reinterpret_cast<float*>(t.bytes()); }

void report(const char* what, double kernel, double naive) {
  std::printf("[throughput] %-34s kernel %8.3f ms   naive %8.3f ms   speedup %5.2fx\n", what, kernel, naive, naive / kernel);
}

TEST(PointwiseThroughput, Add1MFloats) {
  const int64_t n = 1 << 20;
  TT a({n}), b({n}), out({n});
  std::vector<float> ref(n);
  auto one = integer(1);
  double k = best_ms([&] { ASSERT_EQ(run("aten::add.out", {&a.v, &b.v, &one->v, &out.v}), ""); });
  volatile float sink = 0;
  double naive = best_ms([&] {
    const float* x = fdata(a);
    const float* y = fdata(b);
    for (int64_t i = 0; i < n; ++i) {
      // A plain element loop through strides, as a generic kernel would do.
      int64_t ox = i * a.strides[0], oy = i * b.strides[0];
      ref[i] = x[ox] + y[oy];
    }
    sink = ref[n - 1];
  });
  report("add.out [1M] float32", k, naive);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(fdata(out)[i], ref[i]);
}

TEST(PointwiseThroughput, Softmax64x1024) {
  TT in({64, 1024}), out({64, 1024});
  std::vector<float> ref(64 * 1024);
  auto dim = integer(-1);
  auto h = boolean(false);
  double k = best_ms([&] { ASSERT_EQ(run("aten::_softmax.out", {&in.v, &dim->v, &h->v, &out.v}), ""); });
  double naive = best_ms([&] {
    const float* x = fdata(in);
    for (int r = 0; r < 64; ++r) {
      float m = -INFINITY;
      for (int c = 0; c < 1024; ++c) m = std::max(m, x[r * 1024 + c]);
      float s = 0;
      for (int c = 0; c < 1024; ++c) s += (ref[r * 1024 + c] = std::exp(x[r * 1024 + c] - m));
      for (int c = 0; c < 1024; ++c) ref[r * 1024 + c] /= s;
    }
  });
  report("_softmax.out [64, 1024] dim -1", k, naive);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(fdata(out)[i], ref[i], 1e-6 + 1e-5 * ref[i]);
}

TEST(PointwiseThroughput, Permute256x256) {
  TT in({256, 256}), out({256, 256});
  std::vector<float> ref(256 * 256);
  auto dims = int_list({1, 0});
  double k = best_ms([&] { ASSERT_EQ(run("aten::permute_copy.out", {&in.v, &dims->v, &out.v}), ""); });
  double naive = best_ms([&] {
    const float* x = fdata(in);
    for (int i = 0; i < 256; ++i)
      for (int j = 0; j < 256; ++j) ref[i * 256 + j] = x[j * 256 + i];
  });
  report("permute_copy.out [256, 256]", k, naive);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(fdata(out)[i], ref[i]);
  TT big({2048, 2048}), bo({2048, 2048});
  std::vector<float> bref(2048 * 2048);
  double kb = best_ms([&] { ASSERT_EQ(run("aten::permute_copy.out", {&big.v, &dims->v, &bo.v}), ""); }, 3);
  double nb = best_ms([&] {
    const float* x = fdata(big);
    for (int i = 0; i < 2048; ++i)
      for (int j = 0; j < 2048; ++j) bref[i * 2048 + j] = x[j * 2048 + i];
  }, 3);
  report("permute_copy.out [2048, 2048]", kb, nb);
  for (size_t i = 0; i < bref.size(); i += 97) ASSERT_EQ(fdata(bo)[i], bref[i]);
}

TEST(PointwiseThroughput, Gelu1MFloats) {
  const int64_t n = 1 << 20;
  TT in({n}), out({n});
  std::vector<float> ref(n);
  auto mode = string("none");
  double k = best_ms([&] { ASSERT_EQ(run("aten::gelu.out", {&in.v, &mode->v, &out.v}), ""); });
  double naive = best_ms([&] {
    const float* x = fdata(in);
    for (int64_t i = 0; i < n; ++i) ref[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678f));
  });
  report("gelu.out [1M] float32", k, naive);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(fdata(out)[i], ref[i], 1e-5 + 1e-5 * std::abs(ref[i]));
}

}  // namespace
