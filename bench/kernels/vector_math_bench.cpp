// libm against the AVX2 vector math (plugins/common/vector_math.h) on 4096
// floats per call, for each function the kernels use. Inputs are spread over
// the range where each function does its work.
//
//   vector_math_bench [--benchmark_filter=exp]
// Deterministic counts (the machine is shared, wall time is noisy): `--once`
// runs each function once over the 4096 floats in functions named once_libm_<f>
// and once_vector_<f>, whose inclusive instruction counts callgrind reports:
//   valgrind --tool=callgrind --callgrind-out-file=vm.cg vector_math_bench --once
//   callgrind_annotate --inclusive=yes vm.cg | grep once_
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "vector_math.h"

namespace {

constexpr size_t kCount = 4096;

// Kept out of line and out of interprocedural optimisation, so callgrind reports them by name.
#if defined(__clang__)
#define ETRT_BENCH_OPAQUE [[gnu::noinline]]
#else
#define ETRT_BENCH_OPAQUE [[gnu::noipa]]
#endif

std::vector<float> inputs(float lo, float hi) {
  std::vector<float> x(kCount);
  for (size_t i = 0; i < kCount; ++i) x[i] = lo + (hi - lo) * static_cast<float>((i * 2654435761u) % kCount) / kCount;
  return x;
}

template <typename Scalar>
void run_libm(benchmark::State& state, float lo, float hi, Scalar f) {
  std::vector<float> x = inputs(lo, hi), y(kCount);
  for (auto _ : state) {
    for (size_t i = 0; i < kCount; ++i) y[i] = f(x[i]);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kCount));
}

void run_vector(benchmark::State& state, float lo, float hi, void (*f)(const float*, float*, size_t)) {
  std::vector<float> x = inputs(lo, hi), y(kCount);
  for (auto _ : state) {
    f(x.data(), y.data(), kCount);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kCount));
}

std::vector<void (*)()> g_once;  // the --once functions

#define ETRT_VM_BENCH(name, lo, hi, scalar_expr, array_fn)                                                  \
  void BM_libm_##name(benchmark::State& s) { run_libm(s, lo, hi, [](float v) { return (scalar_expr); }); } \
  void BM_vector_##name(benchmark::State& s) { run_vector(s, lo, hi, array_fn); }                          \
  BENCHMARK(BM_libm_##name);                                                                               \
  BENCHMARK(BM_vector_##name);                                                                             \
  ETRT_BENCH_OPAQUE void once_libm_##name(const float* x, float* y) {                                          \
    for (size_t i = 0; i < kCount; ++i) {                                                                   \
      const float v = x[i];                                                                                 \
      y[i] = (scalar_expr);                                                                                 \
    }                                                                                                       \
  }                                                                                                         \
  ETRT_BENCH_OPAQUE void once_vector_##name(const float* x, float* y) {                                        \
    array_fn(x, y, kCount);                                                                                 \
    benchmark::ClobberMemory(); /* no tail call: callgrind keeps the name */                                \
  }                                                                                                         \
  const bool registered_##name = [] {                                                                       \
    g_once.push_back([] {                                                                                   \
      std::vector<float> x = inputs(lo, hi), y(kCount);                                                     \
      once_libm_##name(x.data(), y.data());                                                                 \
      once_vector_##name(x.data(), y.data());                                                               \
      benchmark::DoNotOptimize(y.data());                                                                   \
    });                                                                                                     \
    return true;                                                                                            \
  }();

ETRT_VM_BENCH(exp, -20.0f, 20.0f, std::exp(v), etrt::vm::vexp)
ETRT_VM_BENCH(expm1, -5.0f, 5.0f, std::expm1(v), etrt::vm::vexpm1)
ETRT_VM_BENCH(log, 0.01f, 100.0f, std::log(v), etrt::vm::vlog)
ETRT_VM_BENCH(log1p, -0.9f, 100.0f, std::log1p(v), etrt::vm::vlog1p)
ETRT_VM_BENCH(tanh, -5.0f, 5.0f, std::tanh(v), etrt::vm::vtanh)
ETRT_VM_BENCH(sigmoid, -10.0f, 10.0f, 1.0f / (1.0f + std::exp(-v)), etrt::vm::vsigmoid)
ETRT_VM_BENCH(erf, -4.0f, 4.0f, std::erf(v), etrt::vm::verf)
ETRT_VM_BENCH(gelu_erf, -5.0f, 5.0f, 0.5f * v * (1.0f + std::erf(v * 0.70710678f)), etrt::vm::vgelu_erf)
ETRT_VM_BENCH(gelu_tanh, -5.0f, 5.0f, 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v))),
              etrt::vm::vgelu_tanh)
ETRT_VM_BENCH(sin, -10.0f, 10.0f, std::sin(v), etrt::vm::vsin)
ETRT_VM_BENCH(cos, -10.0f, 10.0f, std::cos(v), etrt::vm::vcos)
ETRT_VM_BENCH(rsqrt, 0.01f, 100.0f, 1.0f / std::sqrt(v), etrt::vm::vrsqrt)

void BM_libm_pow(benchmark::State& state) {
  std::vector<float> x = inputs(0.01f, 10.0f), e = inputs(-3.0f, 3.0f), y(kCount);
  for (auto _ : state) {
    for (size_t i = 0; i < kCount; ++i) y[i] = std::pow(x[i], e[i]);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kCount));
}
void BM_vector_pow(benchmark::State& state) {
  std::vector<float> x = inputs(0.01f, 10.0f), e = inputs(-3.0f, 3.0f), y(kCount);
  for (auto _ : state) {
    etrt::vm::vpow(x.data(), e.data(), y.data(), kCount);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kCount));
}
BENCHMARK(BM_libm_pow);
BENCHMARK(BM_vector_pow);
ETRT_BENCH_OPAQUE void once_libm_pow(const float* x, const float* e, float* y) {
  for (size_t i = 0; i < kCount; ++i) y[i] = std::pow(x[i], e[i]);
}
ETRT_BENCH_OPAQUE void once_vector_pow(const float* x, const float* e, float* y) {
  etrt::vm::vpow(x, e, y, kCount);
  benchmark::ClobberMemory();
}
const bool registered_pow = [] {
  g_once.push_back([] {
    std::vector<float> x = inputs(0.01f, 10.0f), e = inputs(-3.0f, 3.0f), y(kCount);
    once_libm_pow(x.data(), e.data(), y.data());
    once_vector_pow(x.data(), e.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  });
  return true;
}();

}  // namespace

int main(int argc, char** argv) {
  if (!etrt::vm::has_avx2_fma()) std::printf("note: no AVX2+FMA on this CPU, the vector rows run libm\n");
  if (argc > 1 && std::strcmp(argv[1], "--once") == 0) {
    for (auto once : g_once) once();
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
