// Eight threads start at once, each loading its own program and method while
// the plugins they need are loaded for the first time (a fresh process), then
// run them many times. Every run of a thread must give that thread's first
// result, and every result must equal a quiet single-threaded run afterwards.
// ETRT_STRESS_ITERATIONS sets the runs per thread (default 100; the issue's
// sanitizer campaign runs 1,000 under ASan/UBSan and TSan).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "etrt/etrt.hpp"

namespace {

const std::string kModels = ETRT_MODELS_DIR;

struct ProgramCase {
  std::string file;
  std::string method;
};

// Portable and delegated programs, static and dynamic shapes, several methods.
const std::vector<ProgramCase> kCases = {
    {"mlp/portable.pte", "forward"},           {"small_cnn/xnnpack.pte", "forward"},
    {"dynamic_mlp/portable.pte", "forward"},   {"transformer_encoder/portable.pte", "forward"},
    {"two_methods/portable.pte", "encode"},    {"mobilenet_v2_block/xnnpack.pte", "forward"},
    {"resnet_basic/portable.pte", "forward"},  {"dynamic_mlp/xnnpack.pte", "forward"},
};

int iterations() {
  const char* text = std::getenv("ETRT_STRESS_ITERATIONS");
  int n = text ? std::atoi(text) : 0;
  return n > 0 ? n : 100;
}

// Inputs made from the program's declaration: floats from a fixed formula,
// integers zero (they may be indices). Owned storage for one method's inputs.
struct Inputs {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<std::vector<int64_t>> sizes, strides;
  std::vector<std::vector<uint8_t>> dim_orders;
  std::vector<et_tensor> tensors;

  Inputs(const etrt::Program& program, const std::string& method) {
    size_t count = program.method_info(method).num_inputs;
    bytes.resize(count);
    sizes.resize(count);
    strides.resize(count);
    dim_orders.resize(count);
    tensors.resize(count);
    for (size_t i = 0; i < count; ++i) {
      et_value_info info = program.io_info(method, false, i);
      if (info.tag != ET_VALUE_TENSOR) continue;
      sizes[i].assign(info.sizes, info.sizes + info.rank);
      strides[i].assign(info.rank, 1);
      for (int32_t d = info.rank - 1; d > 0; --d) strides[i][d - 1] = strides[i][d] * sizes[i][d];
      dim_orders[i].resize(info.rank);
      for (int32_t d = 0; d < info.rank; ++d) dim_orders[i][d] = static_cast<uint8_t>(d);
      bytes[i].assign(info.nbytes, 0);
      if (info.dtype == ET_DTYPE_FLOAT32)
        for (size_t k = 0; k < info.nbytes / 4; ++k) {
          float v = std::sin(0.37f * static_cast<float>(k + 1) + static_cast<float>(i));
          std::memcpy(bytes[i].data() + 4 * k, &v, 4);
        }
      et_tensor& t = tensors[i];
      t.struct_size = sizeof t;
      t.dtype = info.dtype;
      t.rank = info.rank;
      t.sizes = sizes[i].data();
      t.strides = strides[i].data();
      t.dim_order = dim_orders[i].data();
      t.data = bytes[i].data();
      t.nbytes = info.nbytes;
      t.capacity_bytes = info.nbytes;
    }
  }
};

std::vector<float> run_once(etrt::Method& method, Inputs& inputs) {
  for (size_t i = 0; i < inputs.tensors.size(); ++i)
    if (inputs.tensors[i].struct_size != 0) method.set_input(i, inputs.tensors[i]);
  method.execute();
  const et_tensor* out = method.output(0).tensor;
  if (out == nullptr || out->dtype != ET_DTYPE_FLOAT32) return {};
  const auto* data = static_cast<const float*>(out->data);
  return {data, data + out->nbytes / sizeof(float)};
}

bool close(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::fabs(a[i] - b[i]) > 1e-5f * (1.0f + std::fabs(b[i]))) return false;
  return true;
}

TEST(ConcurrentMethods, EightThreadsLoadLazilyAndAgreeWithAQuietRun) {
  const size_t threads = 8;
  const int runs = iterations();
  std::vector<std::vector<float>> first(threads);
  std::vector<std::string> failures(threads);
  std::atomic<size_t> ready{0};
  std::vector<std::thread> workers;
  for (size_t t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      const ProgramCase& c = kCases[t % kCases.size()];
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();  // every thread loads at once
      try {
        etrt::Program program = etrt::Program::load(kModels + "/" + c.file);
        etrt::Method method = program.load_method(c.method);
        Inputs inputs(program, c.method);
        first[t] = run_once(method, inputs);
        for (int r = 1; r < runs; ++r)
          if (!close(run_once(method, inputs), first[t])) {
            failures[t] = c.file + ": run " + std::to_string(r) + " differs from the thread's first run";
            return;
          }
      } catch (const std::exception& e) {
        failures[t] = c.file + ": " + e.what();
      }
    });
  for (std::thread& w : workers) w.join();
  for (size_t t = 0; t < threads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
  for (size_t t = 0; t < threads; ++t) {
    const ProgramCase& c = kCases[t % kCases.size()];
    etrt::Program program = etrt::Program::load(kModels + "/" + c.file);
    etrt::Method method = program.load_method(c.method);
    Inputs inputs(program, c.method);
    std::vector<float> quiet = run_once(method, inputs);
    ASSERT_FALSE(quiet.empty()) << c.file;
    EXPECT_TRUE(close(first[t], quiet)) << c.file << ": thread " << t << " disagrees with a single-threaded run";
  }
}

}  // namespace
