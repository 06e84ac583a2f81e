// kernels_optimized's prepared kernels (ABI 1.4) through real programs: the chain of tests/models/dispatch
// (mul, add, relu, exp, view_copy, permute_copy, where) with static shapes, and with a dynamic shape that
// changes between runs, so every prepared kernel must notice the change, take its generic path and plan again.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "test_support.h"

namespace {

const std::string kModels = ETRT_DISPATCH_MODELS_DIR;

struct Input {
  std::vector<int64_t> sizes;
  std::vector<float> x, y;
  et_tensor tx{}, ty{};
  explicit Input(int64_t n) : sizes{n, n}, x(static_cast<size_t>(n * n)), y(x.size(), 0.01f) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i) + 0.3f);  // both signs
    tx = etrt_test::float32_tensor(sizes, x);
    ty = etrt_test::float32_tensor(sizes, y);
  }
};

std::vector<float> run(etrt::Method& method, Input& in) {
  method.set_input(0, in.tx);
  method.set_input(1, in.ty);
  method.execute();
  const et_tensor& out = *method.output(0).tensor;
  EXPECT_EQ(out.rank, 2);
  EXPECT_EQ(out.sizes[0], in.sizes[0]);
  const auto* data = static_cast<const float*>(out.data);
  return std::vector<float>(data, data + out.nbytes / sizeof(float));
}

// export_dispatch.py's Chain in plain C++ (std::exp: equal to the kernels' within a few ulp).
std::vector<float> reference(const Input& in) {
  const size_t n = static_cast<size_t>(in.sizes[0]);
  std::vector<float> t = in.x, next(t.size());
  for (int block = 0; block < 8; ++block) {
    for (size_t i = 0; i < t.size(); ++i) t[i] = std::exp(std::max(t[i] * in.y[i] + in.x[i], 0.0f));
    for (size_t r = 0; r < n; ++r)
      for (size_t c = 0; c < n; ++c) next[r * n + c] = in.x[r * n + c] > 0 ? t[c * n + r] : in.x[r * n + c];
    t = next;
  }
  return t;
}

TEST(PreparedKernels, StaticProgramsMatchTheReferenceOnEveryRun) {
  for (int64_t n : {1, 8}) {
    etrt::Program program = etrt::Program::load(kModels + (n == 1 ? "/static_1.pte" : "/static_64.pte"));
    etrt::Method method = program.load_method("forward");
    Input in(n);
    std::vector<float> expected = reference(in);
    for (int r = 0; r < 3; ++r) {
      std::vector<float> got = run(method, in);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-5f * std::abs(expected[i])) << n << " " << i;
    }
  }
}

TEST(PreparedKernels, ADynamicShapeThatChangesBetweenRunsGivesTheStaticProgramsResults) {
  etrt::Program dynamic = etrt::Program::load(kModels + "/dynamic.pte");
  etrt::Method method = dynamic.load_method("forward");  // prepared at the bound, [8, 8]
  etrt::Method static_1 = etrt::Program::load(kModels + "/static_1.pte").load_method("forward");
  etrt::Method static_64 = etrt::Program::load(kModels + "/static_64.pte").load_method("forward");
  Input one(1), three(3), eight(8);
  const std::vector<float> expect_1 = run(static_1, one), expect_64 = run(static_64, eight);
  // Shapes change (replan), stay (the new plan), change back, and take a size no static program has.
  for (int64_t n : {8, 1, 1, 3, 3, 8, 8, 1}) {
    Input& in = n == 1 ? one : n == 3 ? three : eight;
    std::vector<float> got = run(method, in);
    if (n == 3) {
      std::vector<float> expected = reference(in);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-5f * std::abs(expected[i])) << i;
    } else {
      EXPECT_EQ(got, n == 1 ? expect_1 : expect_64) << "n = " << n;  // the same kernels: bit for bit
    }
  }
}

}  // namespace
