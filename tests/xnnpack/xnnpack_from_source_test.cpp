// The XNNPACK etrt builds from pinned source (cmake/third_party/EtrtXnnpack.cmake), linked
// statically with etrt's cpuinfo and pthreadpool: it chooses its kernels from what etrt's
// cpuinfo reports, and a subgraph with an fp32 fully connected layer feeding two dynamically
// quantized ones (qd8-f32-qc8w and qd8-f32-qc4w, which the 2022 library cannot express) gives
// the numbers a reference computed here gives, inline and on a multi-threaded pool.
#include <gtest/gtest.h>

#include <cpuinfo.h>
#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "threaded_test_host.h"
// XNNPACK's own view of the CPU and the kernel shapes it chose (internal headers of the pinned source).
#include "xnnpack/config.h"
#include "xnnpack/hardware-config.h"

namespace {

TEST(XnnpackFromSource, ChoosesKernelsForTheCpuEtrtsCpuinfoDescribes) {
  ASSERT_EQ(xnn_initialize(nullptr), xnn_status_success);
  const xnn_hardware_config* hw = xnn_init_hardware_config();
  ASSERT_NE(hw, nullptr);
  std::string isa;
#if defined(__x86_64__)
  EXPECT_EQ(hw->use_x86_avx2, cpuinfo_has_x86_avx2());
  EXPECT_EQ(hw->use_x86_fma3, cpuinfo_has_x86_fma3());
  EXPECT_EQ(hw->use_x86_avx512f, cpuinfo_has_x86_avx512f());
  const bool skx = cpuinfo_has_x86_avx512f() && cpuinfo_has_x86_avx512bw() && cpuinfo_has_x86_avx512dq() &&
                   cpuinfo_has_x86_avx512vl();
  EXPECT_EQ(hw->use_x86_avx512skx, skx);
  EXPECT_EQ(hw->use_x86_avx512vnni, skx && cpuinfo_has_x86_avx512vnni());
  EXPECT_EQ(hw->use_x86_avx512vnnigfni, skx && cpuinfo_has_x86_avx512vnni() && cpuinfo_has_x86_gfni());
  EXPECT_EQ(hw->use_x86_avxvnni, cpuinfo_has_x86_avx2() && cpuinfo_has_x86_avxvnni());
  const std::pair<bool, const char*> flags[] = {
      {hw->use_x86_avx2, "avx2"}, {hw->use_x86_avxvnni, "avxvnni"}, {hw->use_x86_avx256skx, "avx256skx"},
      {hw->use_x86_avx256vnni, "avx256vnni"}, {hw->use_x86_avx512f, "avx512f"},
      {hw->use_x86_avx512skx, "avx512skx"}, {hw->use_x86_avx512vbmi, "avx512vbmi"},
      {hw->use_x86_avx512vnni, "avx512vnni"}, {hw->use_x86_avx512vnnigfni, "avx512vnnigfni"},
      {hw->use_x86_avx512amx, "avx512amx"}, {hw->use_x86_avx512fp16, "avx512fp16"}};
#elif defined(__aarch64__)
  EXPECT_EQ(hw->use_arm_neon_dot, cpuinfo_has_arm_neon_dot());
  EXPECT_EQ(hw->use_arm_neon_i8mm, cpuinfo_has_arm_i8mm());
  EXPECT_EQ(hw->use_arm_neon_fp16_arith, cpuinfo_has_arm_neon_fp16_arith());
  EXPECT_EQ(hw->use_arm_neon_bf16, cpuinfo_has_arm_neon_bf16());
  const std::pair<bool, const char*> flags[] = {
      {hw->use_arm_neon, "neon"}, {hw->use_arm_neon_fp16_arith, "neonfp16arith"}, {hw->use_arm_neon_bf16, "neonbf16"},
      {hw->use_arm_neon_dot, "neondot"}, {hw->use_arm_neon_i8mm, "neoni8mm"}, {hw->use_arm_sve, "sve"},
      {hw->use_arm_sve2, "sve2"}, {hw->use_arm_sme, "sme"}, {hw->use_arm_sme2, "sme2"}};
#endif
  for (const auto& [on, name] : flags)
    if (on) isa += std::string(isa.empty() ? "" : " ") + name;

  // The GEMM shapes show which kernel family was picked (e.g. 14x16c8: avx512vnnigfni for qd8-f32-qc4w).
  struct Named {
    const char* name;
    const xnn_gemm_config* config;
  } gemms[] = {{"f32", xnn_init_f32_gemm_config()},
               {"qd8_f32_qc8w", xnn_init_qd8_f32_qc8w_gemm_config()},
               {"qd8_f32_qc4w", xnn_init_qd8_f32_qc4w_gemm_config()}};
  std::string shapes;
  for (const Named& g : gemms) {
    ASSERT_NE(g.config, nullptr) << g.name;
    EXPECT_GE(g.config->mr, 1) << g.name;
    char shape[96];
    std::snprintf(shape, sizeof shape, "%s%s %ux%uc%u", shapes.empty() ? "" : ", ", g.name, g.config->mr,
                  g.config->nr, 1u << g.config->log2_kr);
    shapes += shape;
  }
  std::printf("XNNPACK uses: %s\nGEMM kernels (MRxNRcKR): %s\nuarch of core 0: %d\n", isa.c_str(), shapes.c_str(),
              static_cast<int>(cpuinfo_get_core(0)->uarch));
  RecordProperty("isa", isa);
  RecordProperty("gemm", shapes);
}

TEST(XnnpackFromSource, IsLinkedInNotDebiansLibrary) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    EXPECT_EQ(line.find("libXNNPACK"), std::string::npos) << line;
    EXPECT_EQ(line.find("libpthreadpool"), std::string::npos) << line;
    EXPECT_EQ(line.find("libcpuinfo"), std::string::npos) << line;
  }
}

// --- a small subgraph and its reference ---------------------------------------------------

constexpr size_t kBatch = 5, kIn = 64, kHidden = 32, kOut = 24;

float wave(size_t i, float phase) { return std::sin(0.37f * static_cast<float>(i) + phase); }

struct Model {
  std::vector<float> w1, b1;          // fp32 [kHidden, kIn], [kHidden]
  std::vector<int8_t> w8;             // qc8w [kOut, kHidden], zero point 0
  std::vector<float> s8, b8;          // its per-channel scales, fp32 bias
  std::vector<uint8_t> w4;            // qc4w [kOut, kHidden], two per byte (low nibble first), zero point 8
  std::vector<float> s4, b4;
  Model() {
    for (size_t i = 0; i < kHidden * kIn; ++i) w1.push_back(0.2f * wave(i, 0.1f));
    for (size_t i = 0; i < kHidden; ++i) b1.push_back(0.1f * wave(i, 1.3f));
    for (size_t n = 0; n < kOut; ++n) {
      s8.push_back(0.002f + 0.0005f * n);
      s4.push_back(0.03f + 0.004f * n);
      b8.push_back(0.05f * wave(n, 2.0f));
      b4.push_back(0.05f * wave(n, 0.7f));
    }
    for (size_t i = 0; i < kOut * kHidden; ++i) w8.push_back(static_cast<int8_t>(std::lround(120 * wave(i, 0.5f))));
    w4.assign(kOut * kHidden / 2, 0);
    for (size_t i = 0; i < kOut * kHidden; ++i) {
      uint8_t q = static_cast<uint8_t>((i * 7 + i / 5) % 16);
      w4[i / 2] |= static_cast<uint8_t>(i % 2 ? q << 4 : q);
    }
  }
  float weight8(size_t n, size_t k) const { return s8[n] * w8[n * kHidden + k]; }
  float weight4(size_t n, size_t k) const {
    size_t i = n * kHidden + k;
    int q = i % 2 ? w4[i / 2] >> 4 : w4[i / 2] & 0xF;
    return s4[n] * static_cast<float>(q - 8);
  }
};

struct Outputs {
  std::vector<float> hidden, out8, out4;
};

// Runs x -> fc(fp32) -> hidden (an output, and dynamically quantized) -> fc(qc8w) -> out8, fc(qc4w) -> out4.
void run_subgraph(const Model& m, const std::vector<float>& x, pthreadpool_t pool, Outputs& o) {
  ASSERT_EQ(xnn_initialize(nullptr), xnn_status_success);
  xnn_subgraph_t subgraph = nullptr;
  ASSERT_EQ(xnn_create_subgraph(4, 0, &subgraph), xnn_status_success);
  const size_t x_dims[] = {kBatch, kIn}, w1_dims[] = {kHidden, kIn}, b1_dims[] = {kHidden};
  const size_t h_dims[] = {kBatch, kHidden}, w_dims[] = {kOut, kHidden}, b_dims[] = {kOut}, o_dims[] = {kBatch, kOut};
  const uint32_t none = XNN_INVALID_VALUE_ID;
  uint32_t x_id, w1_id, b1_id, h_id, dq_id, w8_id, b8_id, o8_id, w4_id, b4_id, o4_id;
  ASSERT_EQ(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 2, x_dims, nullptr, 0, XNN_VALUE_FLAG_EXTERNAL_INPUT,
                                    &x_id), xnn_status_success);
  ASSERT_EQ(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 2, w1_dims, m.w1.data(), none, 0, &w1_id),
            xnn_status_success);
  ASSERT_EQ(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 1, b1_dims, m.b1.data(), none, 0, &b1_id),
            xnn_status_success);
  ASSERT_EQ(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 2, h_dims, nullptr, 1, XNN_VALUE_FLAG_EXTERNAL_OUTPUT,
                                    &h_id), xnn_status_success);
  ASSERT_EQ(xnn_define_dynamically_quantized_tensor_value(subgraph, xnn_datatype_qdint8, 2, 1, h_dims, none, 0, &dq_id),
            xnn_status_success);
  ASSERT_EQ(xnn_define_channelwise_quantized_tensor_value(subgraph, xnn_datatype_qcint8, m.s8.data(), 2, 0, w_dims,
                                                          m.w8.data(), none, 0, &w8_id), xnn_status_success);
  ASSERT_EQ(xnn_define_channelwise_quantized_tensor_value_v2(subgraph, xnn_datatype_qcint4, 8, m.s4.data(), 2, 0,
                                                             w_dims, m.w4.data(), none, 0, &w4_id), xnn_status_success);
  ASSERT_EQ(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 1, b_dims, m.b8.data(), none, 0, &b8_id),
            xnn_status_success);
  ASSERT_EQ(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 1, b_dims, m.b4.data(), none, 0, &b4_id),
            xnn_status_success);
  ASSERT_EQ(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 2, o_dims, nullptr, 2, XNN_VALUE_FLAG_EXTERNAL_OUTPUT,
                                    &o8_id), xnn_status_success);
  ASSERT_EQ(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 2, o_dims, nullptr, 3, XNN_VALUE_FLAG_EXTERNAL_OUTPUT,
                                    &o4_id), xnn_status_success);
  const float lo = -INFINITY, hi = INFINITY;
  ASSERT_EQ(xnn_define_fully_connected(subgraph, lo, hi, x_id, w1_id, b1_id, h_id, 0), xnn_status_success);
  ASSERT_EQ(xnn_define_unary(subgraph, xnn_unary_convert, nullptr, h_id, dq_id, 0), xnn_status_success);
  ASSERT_EQ(xnn_define_fully_connected(subgraph, lo, hi, dq_id, w8_id, b8_id, o8_id, 0), xnn_status_success);
  ASSERT_EQ(xnn_define_fully_connected(subgraph, lo, hi, dq_id, w4_id, b4_id, o4_id, 0), xnn_status_success);

  xnn_runtime_t runtime = nullptr;
  ASSERT_EQ(xnn_create_runtime_v2(subgraph, pool, 0, &runtime), xnn_status_success);
  xnn_delete_subgraph(subgraph);
  o.hidden.assign(kBatch * kHidden, NAN);
  o.out8.assign(kBatch * kOut, NAN);
  o.out4.assign(kBatch * kOut, NAN);
  std::vector<float> input(x);
  input.resize(x.size() + XNN_EXTRA_BYTES / sizeof(float));  // XNNPACK may read past its inputs
  const xnn_external_value external[] = {
      {x_id, input.data()}, {h_id, o.hidden.data()}, {o8_id, o.out8.data()}, {o4_id, o.out4.data()}};
  EXPECT_EQ(xnn_reshape_runtime(runtime), xnn_status_success);
  EXPECT_EQ(xnn_setup_runtime_v2(runtime, 4, external), xnn_status_success);
  EXPECT_EQ(xnn_invoke_runtime(runtime), xnn_status_success);
  xnn_delete_runtime(runtime);
}

// XNNPACK quantizes each row of the hidden values to int8 with its own scale and zero point:
// asymmetric over [min(0, row min), max(0, row max)], 255 steps, values rounded to nearest even.
// The reference does the same to XNNPACK's hidden values, so only float rounding in the sums
// separates the two, and a wrong weight, scale, zero point or bias shows.
std::vector<double> dynamically_quantized(const float* row, size_t n) {
  float lo = 0.0f, hi = 0.0f;
  for (size_t k = 0; k < n; ++k) lo = std::min(lo, row[k]), hi = std::max(hi, row[k]);
  const float inv_step = lo == hi ? 1.0f : 255.0f / (hi - lo);
  const float zero_point = std::clamp(std::nearbyint(-128.0f - lo * inv_step), -128.0f, 127.0f);
  std::vector<double> out(n);
  for (size_t k = 0; k < n; ++k) {
    const float q = std::clamp(std::nearbyint(row[k] * inv_step) + zero_point, -128.0f, 127.0f);
    out[k] = (double(q) - zero_point) / inv_step;
  }
  return out;
}

template <typename Weight>
void check_quantized_layer(const char* what, const float* out, const std::vector<double>& h, const float* bias,
                           Weight weight, size_t row) {
  for (size_t n = 0; n < kOut; ++n) {
    double ref = bias[n], magnitude = std::fabs(bias[n]);
    for (size_t k = 0; k < kHidden; ++k) {
      ref += h[k] * weight(n, k);
      magnitude += std::fabs(h[k] * weight(n, k));
    }
    EXPECT_NEAR(out[row * kOut + n], ref, 1e-5 * magnitude + 1e-6) << what << ", row " << row << " col " << n;
  }
}

void check_against_reference(const Model& m, const std::vector<float>& x, const Outputs& o) {
  for (size_t b = 0; b < kBatch; ++b) {
    for (size_t n = 0; n < kHidden; ++n) {
      double ref = m.b1[n];
      for (size_t k = 0; k < kIn; ++k) ref += double(x[b * kIn + k]) * m.w1[n * kIn + k];
      EXPECT_NEAR(o.hidden[b * kHidden + n], ref, 1e-4 * (1 + std::fabs(ref))) << "fp32 fc, row " << b;
    }
    const std::vector<double> h = dynamically_quantized(&o.hidden[b * kHidden], kHidden);
    check_quantized_layer("qd8-f32-qc8w fc", o.out8.data(), h, m.b8.data(),
                          [&](size_t n, size_t k) { return m.weight8(n, k); }, b);
    check_quantized_layer("qd8-f32-qc4w fc", o.out4.data(), h, m.b4.data(),
                          [&](size_t n, size_t k) { return m.weight4(n, k); }, b);
  }
}

std::vector<float> input_rows() {
  std::vector<float> x(kBatch * kIn);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 2.0f * wave(i, 0.9f) + 0.3f * static_cast<float>(i / kIn);
  return x;
}

TEST(XnnpackFromSource, DynamicallyQuantizedSubgraphMatchesTheReferenceInline) {
  Model m;
  const std::vector<float> x = input_rows();
  Outputs o;
  run_subgraph(m, x, nullptr, o);
  check_against_reference(m, x, o);
}

TEST(XnnpackFromSource, DynamicallyQuantizedSubgraphMatchesTheReferenceOnThreads) {
  Model m;
  const std::vector<float> x = input_rows();
  xnnpack_test::ThreadedHost host;
  Outputs threaded;
  const int before = xnnpack_test::parallel_for_calls().load();
  run_subgraph(m, x, &host.handle, threaded);
  EXPECT_GT(xnnpack_test::parallel_for_calls().load(), before) << "XNNPACK ran its operators on the pool";
  check_against_reference(m, x, threaded);  // outputs start as NaN: a tile the pool skipped fails here
}

}  // namespace
