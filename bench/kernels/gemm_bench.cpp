// Throughput of the linear algebra kernels of the kernels_optimized plugin,
// called the way the executor calls them (found by name in etrt's registry):
//   - aten::mm.out on square matrices (64 .. 1024), 1 and 2 threads;
//   - aten::linear.out with one input row (the matrix-vector case);
//   - aten::convolution.out on MobileNetV2-like 1x1 and depthwise 3x3 layers;
// against a naive i-j-k matrix multiplication (the loop ExecuTorch's portable
// mm kernel runs) and, when built with XNNPACK, XNNPACK's own operators
// (fully connected, NHWC convolution) on the same shapes.
//
// Reports GFLOP/s ("FLOPS" counter) and percent of one core's FP32 FMA peak
// ("pct_peak" = 32 flops/cycle x the measured clock; for N threads the
// percentage is still of ONE core, so 2 threads can reach 200). The clock is
// measured at start-up from a chain of dependent integer adds (1 cycle each),
// and a register-only FMA loop gives the peak this machine actually sustains.
//
//   gemm_bench [--benchmark_filter=Mm] [--benchmark_min_time=0.5s]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#ifdef ETRT_BENCH_WITH_XNNPACK
#include <pthreadpool.h>
#include <xnnpack.h>
#endif

namespace {

double g_clock_hz = 0.0;       // measured core clock
double g_fma_peak = 0.0;       // measured FP32 FMA throughput of one core (flop/s)

// Seconds of CPU time of this thread: other processes on the machine do not count.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Cycles: a chain of 32 dependent adds per iteration (1-cycle latency each).
double measure_clock_hz() {
  double best = 0.0;
  for (int rep = 0; rep < 5; ++rep) {
    uint64_t x = 0;
    const uint64_t iterations = 5'000'000;
    const double t0 = thread_seconds();
    for (uint64_t i = 0; i < iterations; ++i) {
#if defined(__x86_64__)
      __asm__ volatile(
          "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
          "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
          "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
          "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
          : "+r"(x));
#endif
    }
    best = std::max(best, 32.0 * static_cast<double>(iterations) / (thread_seconds() - t0));
  }
  return best;
}

#if defined(__x86_64__)
// Ten independent FMA chains in registers: the sustained FMA throughput.
__attribute__((target("avx2,fma"), noinline)) double measure_fma_peak() {
  double best = 0.0;
  for (int rep = 0; rep < 5; ++rep) {
    __m256 a0 = _mm256_set1_ps(1.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0, a9 = a0;
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    const uint64_t iterations = 10'000'000;
    const double t0 = thread_seconds();
    for (uint64_t i = 0; i < iterations; ++i) {
      a0 = _mm256_fmadd_ps(a0, m, c), a1 = _mm256_fmadd_ps(a1, m, c), a2 = _mm256_fmadd_ps(a2, m, c);
      a3 = _mm256_fmadd_ps(a3, m, c), a4 = _mm256_fmadd_ps(a4, m, c), a5 = _mm256_fmadd_ps(a5, m, c);
      a6 = _mm256_fmadd_ps(a6, m, c), a7 = _mm256_fmadd_ps(a7, m, c), a8 = _mm256_fmadd_ps(a8, m, c);
      a9 = _mm256_fmadd_ps(a9, m, c);
      __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7), "+x"(a8),
                       "+x"(a9));
    }
    best = std::max(best, 10.0 * 16.0 * static_cast<double>(iterations) / (thread_seconds() - t0));
  }
  return best;
}
#else
double measure_fma_peak() { return 0.0; }
#endif

double nominal_peak() { return 32.0 * g_clock_hz; }  // 2 FMA ports x 8 lanes x 2 flops

// A contiguous float32 tensor owned by the benchmark.
struct BenchTensor {
  std::vector<float> data;
  std::vector<int64_t> sizes, strides;
  std::vector<uint8_t> order;
  et_tensor t{};
  et_value v{};
  explicit BenchTensor(std::vector<int64_t> shape, uint32_t seed = 1) : sizes(std::move(shape)) {
    size_t n = 1;
    strides.resize(sizes.size());
    order.resize(sizes.size());
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = static_cast<int64_t>(n);
      n *= static_cast<size_t>(sizes[i]);
      order[i] = static_cast<uint8_t>(i);
    }
    data.resize(n);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float& x : data) x = dist(rng);
    t.struct_size = sizeof t;
    t.dtype = ET_DTYPE_FLOAT32;
    t.rank = static_cast<int32_t>(sizes.size());
    t.sizes = sizes.data();
    t.strides = strides.data();
    t.dim_order = order.data();
    t.data = data.data();
    t.nbytes = t.capacity_bytes = n * sizeof(float);
    t.dynamism = ET_SHAPE_STATIC;
    v.struct_size = sizeof v;
    v.tag = ET_VALUE_TENSOR;
    v.tensor = &t;
  }
};

et_value int_value(int64_t x) {
  et_value v{};
  v.struct_size = sizeof v;
  v.tag = ET_VALUE_INT;
  v.as_int = x;
  return v;
}

struct IntListValue {
  std::vector<int64_t> items;
  et_value v{};
  explicit IntListValue(std::vector<int64_t> values) : items(std::move(values)) {
    v.struct_size = sizeof v;
    v.tag = ET_VALUE_INT_LIST;
    v.items = items.data();
    v.count = items.size();
  }
};

void set_counters(benchmark::State& state, double flops_per_iteration) {
  const double total = flops_per_iteration * static_cast<double>(state.iterations());
  state.counters["FLOPS"] = benchmark::Counter(total, benchmark::Counter::kIsRate);
  state.counters["pct_peak"] = benchmark::Counter(total * 100.0 / nominal_peak(), benchmark::Counter::kIsRate);
}

void use_threads(benchmark::State& state, int64_t threads) {
  etrt::Runtime::get().set_num_threads(static_cast<size_t>(threads));
  state.SetLabel(std::to_string(threads) + (threads == 1 ? " thread" : " threads"));
}

bool call(benchmark::State& state, const et_kernel_descriptor& kernel, std::vector<et_value*> args) {
  et_error* error = kernel.fn(kernel.user_data, nullptr, args.data(), args.size());
  if (error == nullptr) return true;
  state.SkipWithError(et_error_message(error));
  et_error_destroy(error);
  return false;
}

// ------------------------------------------------------------------ etrt
void BM_Mm(benchmark::State& state) {
  const int64_t n = state.range(0);
  use_threads(state, state.range(1));
  const et_kernel_descriptor mm = etrt::Runtime::get().find_kernel("aten::mm.out");
  BenchTensor a({n, n}, 1), b({n, n}, 2), out({n, n}, 3);
  for (auto _ : state)
    if (!call(state, mm, {&a.v, &b.v, &out.v, &out.v})) break;
  set_counters(state, 2.0 * n * n * n);
}

void BM_LinearOneRow(benchmark::State& state) {  // [1, K] x [N, K]^T + bias: matrix-vector
  const int64_t n = state.range(0);
  use_threads(state, state.range(1));
  const et_kernel_descriptor linear = etrt::Runtime::get().find_kernel("aten::linear.out");
  BenchTensor x({1, n}, 1), w({n, n}, 2), bias({n}, 3), out({1, n}, 4);
  for (auto _ : state)
    if (!call(state, linear, {&x.v, &w.v, &bias.v, &out.v, &out.v})) break;
  set_counters(state, 2.0 * n * n);
}

struct ConvShape {
  const char* name;
  int64_t C, H, W, Cout, k, stride, pad, groups;
};
// MobileNetV2-like layers (batch 1).
constexpr ConvShape kConvs[] = {
    {"pw_expand_24to144_56x56", 24, 56, 56, 144, 1, 1, 0, 1},
    {"pw_project_144to24_56x56", 144, 56, 56, 24, 1, 1, 0, 1},
    {"pw_expand_96to576_14x14", 96, 14, 14, 576, 1, 1, 0, 1},
    {"dw3x3_144_56x56_s1", 144, 56, 56, 144, 3, 1, 1, 144},
    {"dw3x3_144_56x56_s2", 144, 56, 56, 144, 3, 2, 1, 144},
    {"dw3x3_576_14x14_s1", 576, 14, 14, 576, 3, 1, 1, 576},
    {"conv3x3_stem_3to32_224x224_s2", 3, 224, 224, 32, 3, 2, 1, 1},
};

double conv_flops(const ConvShape& c) {
  const int64_t oh = (c.H + 2 * c.pad - c.k) / c.stride + 1, ow = (c.W + 2 * c.pad - c.k) / c.stride + 1;
  return 2.0 * c.Cout * oh * ow * (c.C / c.groups) * c.k * c.k;
}

void BM_Conv(benchmark::State& state) {
  const ConvShape& c = kConvs[state.range(0)];
  use_threads(state, state.range(1));
  state.SetLabel(std::string(c.name) + ", " + std::to_string(state.range(1)) + " thr");
  const et_kernel_descriptor conv = etrt::Runtime::get().find_kernel("aten::convolution.out");
  const int64_t oh = (c.H + 2 * c.pad - c.k) / c.stride + 1, ow = (c.W + 2 * c.pad - c.k) / c.stride + 1;
  BenchTensor x({1, c.C, c.H, c.W}, 1), w({c.Cout, c.C / c.groups, c.k, c.k}, 2), bias({c.Cout}, 3),
      out({1, c.Cout, oh, ow}, 4);
  IntListValue stride({c.stride, c.stride}), padding({c.pad, c.pad}), dilation({1, 1}), output_padding({0, 0});
  et_value transposed{}, groups = int_value(c.groups);
  transposed.struct_size = sizeof transposed;
  transposed.tag = ET_VALUE_BOOL;
  for (auto _ : state)
    if (!call(state, conv, {&x.v, &w.v, &bias.v, &stride.v, &padding.v, &dilation.v, &transposed, &output_padding.v,
                            &groups, &out.v, &out.v}))
      break;
  set_counters(state, conv_flops(c));
}

// --------------------------------------------------- naive (portable-style)
// The i-j-k loop of ExecuTorch's portable mm (kernels/portable/cpu/vec_ops.h, vec_matmul).
void BM_MmNaive(benchmark::State& state) {
  const int64_t n = state.range(0);
  BenchTensor a({n, n}, 1), b({n, n}, 2), out({n, n}, 3);
  const float* x = a.data.data();
  const float* y = b.data.data();
  float* z = out.data.data();
  for (auto _ : state) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0;
        for (int64_t k = 0; k < n; ++k) sum += x[i * n + k] * y[k * n + j];
        z[i * n + j] = sum;
      }
    benchmark::DoNotOptimize(z);
    benchmark::ClobberMemory();
  }
  state.SetLabel("1 thread");
  set_counters(state, 2.0 * n * n * n);
}

#ifdef ETRT_BENCH_WITH_XNNPACK
// ---------------------------------------------------------------- XNNPACK
struct XnnPool {
  pthreadpool_t pool = nullptr;
  explicit XnnPool(int64_t threads) {
    if (threads > 1) pool = pthreadpool_create(static_cast<size_t>(threads));
  }
  ~XnnPool() {
    if (pool) pthreadpool_destroy(pool);
  }
};

bool xnn_ready(benchmark::State& state) {
  static const bool ok = xnn_initialize(nullptr) == xnn_status_success;
  if (!ok) state.SkipWithError("xnn_initialize failed");
  return ok;
}

void BM_XnnpackMm(benchmark::State& state) {  // fully connected: [n, n] x [n, n] (weights given as [K, N])
  if (!xnn_ready(state)) return;
  const int64_t n = state.range(0);
  XnnPool pool(state.range(1));
  state.SetLabel(std::to_string(state.range(1)) + (state.range(1) == 1 ? " thread" : " threads"));
  BenchTensor a({n, n}, 1), b({n, n}, 2), out({n, n}, 3);
  xnn_operator_t op = nullptr;
  if (xnn_create_fully_connected_nc_f32(n, n, n, n, b.data.data(), nullptr, -INFINITY, INFINITY,
                                        XNN_FLAG_TRANSPOSE_WEIGHTS, &op) != xnn_status_success ||
      xnn_setup_fully_connected_nc_f32(op, n, a.data.data(), out.data.data(), pool.pool) != xnn_status_success) {
    state.SkipWithError("XNNPACK fully connected setup failed");
    return;
  }
  for (auto _ : state) xnn_run_operator(op, pool.pool);
  xnn_delete_operator(op);
  set_counters(state, 2.0 * n * n * n);
}

void BM_XnnpackConv(benchmark::State& state) {  // the same layer in NHWC, as the XNNPACK delegate runs it
  if (!xnn_ready(state)) return;
  const ConvShape& c = kConvs[state.range(0)];
  XnnPool pool(state.range(1));
  state.SetLabel(std::string(c.name) + ", " + std::to_string(state.range(1)) + " thr");
  const int64_t oh = (c.H + 2 * c.pad - c.k) / c.stride + 1, ow = (c.W + 2 * c.pad - c.k) / c.stride + 1;
  const bool depthwise = c.groups == c.C && c.groups > 1;
  BenchTensor x({1, c.H, c.W, c.C}, 1), w({c.Cout, c.k, c.k, c.C / c.groups}, 2), bias({c.Cout}, 3),
      out({1, oh, ow, c.Cout}, 4);
  xnn_operator_t op = nullptr;
  const uint32_t p = static_cast<uint32_t>(c.pad);
  if (xnn_create_convolution2d_nhwc_f32(p, p, p, p, c.k, c.k, c.stride, c.stride, 1, 1, c.groups, c.C / c.groups,
                                        c.Cout / c.groups, c.C, c.Cout, w.data.data(), bias.data.data(), -INFINITY,
                                        INFINITY, depthwise ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0,
                                        &op) != xnn_status_success ||
      xnn_setup_convolution2d_nhwc_f32(op, 1, c.H, c.W, x.data.data(), out.data.data(), pool.pool) !=
          xnn_status_success) {
    state.SkipWithError("XNNPACK convolution setup failed");
    return;
  }
  for (auto _ : state) xnn_run_operator(op, pool.pool);
  xnn_delete_operator(op);
  set_counters(state, conv_flops(c));
}
#endif

void MmArgs(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2})
    for (int64_t n : {64, 128, 256, 512, 1024}) b->Args({n, threads});
  if (std::getenv("GEMM_BENCH_EXTRA")) for (int64_t n : {96, 200, 384, 1000, 1536}) b->Args({n, 1});
}
void ConvArgs(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2})
    for (int64_t i = 0; i < static_cast<int64_t>(std::size(kConvs)); ++i) b->Args({i, threads});
}

BENCHMARK(BM_Mm)->Apply(MmArgs)->ArgNames({"n", "threads"})->UseRealTime();
BENCHMARK(BM_MmNaive)->Arg(64)->Arg(128)->Arg(256)->ArgNames({"n"})->UseRealTime();
BENCHMARK(BM_LinearOneRow)->Args({1024, 1})->Args({1024, 2})->Args({4096, 1})->Args({4096, 2})
    ->ArgNames({"n", "threads"})->UseRealTime();
BENCHMARK(BM_Conv)->Apply(ConvArgs)->ArgNames({"layer", "threads"})->UseRealTime();
#ifdef ETRT_BENCH_WITH_XNNPACK
BENCHMARK(BM_XnnpackMm)->Apply(MmArgs)->ArgNames({"n", "threads"})->UseRealTime();
BENCHMARK(BM_XnnpackConv)->Apply(ConvArgs)->ArgNames({"layer", "threads"})->UseRealTime();
#endif

}  // namespace

int main(int argc, char** argv) {
  g_clock_hz = measure_clock_hz();
  g_fma_peak = measure_fma_peak();
  std::printf("measured clock: %.3f GHz; nominal FP32 FMA peak of one core (32 flop/cycle): %.1f GFLOP/s; "
              "measured register-only FMA throughput: %.1f GFLOP/s (%.0f%% of nominal)\n",
              g_clock_hz / 1e9, nominal_peak() / 1e9, g_fma_peak / 1e9, 100.0 * g_fma_peak / nominal_peak());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
