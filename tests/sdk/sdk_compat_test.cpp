// Plugins written against earlier SDK minors (tests/sdk/sdk_<minor>_plugin.cpp),
// built unchanged against today's headers at several ABI minors, load and work:
// each registers its operator, speaks the minor it was built for, computes the
// right result, and words its argument errors as it did.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "kernel_test_support.h"
#include "test_support.h"

using ::testing::HasSubstr;
using namespace etrt_test;

namespace {

// One build of an SDK source: "sdk_1_4_at_1_5" is sdk_1_4_plugin.cpp built with ET_ABI_TARGET_MINOR 5.
struct SdkBuild {
  std::string name, source;
  uint32_t minor = 0;
};

std::vector<SdkBuild> sdk_builds() {
  std::vector<SdkBuild> builds;
  std::istringstream names(ETRT_SDK_PLUGINS);
  std::string name;
  while (names >> name) {
    size_t at = name.find("_at_1_");
    builds.push_back({name, name.substr(0, at), static_cast<uint32_t>(std::stoul(name.substr(at + 6)))});
  }
  return builds;
}

std::vector<SdkBuild> builds_of(const std::string& source) {
  std::vector<SdkBuild> found;
  for (const SdkBuild& build : sdk_builds())
    if (build.source == source) found.push_back(build);
  return found;
}

et_kernel_descriptor load_kernel(const SdkBuild& build, const std::string& op) {
  etrt::Runtime::get().load_plugin(std::string(ETRT_SDK_MANIFEST_DIR) + "/" + build.name + ".json");
  return etrt::Runtime::get().find_kernel(build.name + "::" + op);
}

// A contiguous float32 tensor (kernel_test_support.h) holding `values`.
struct FloatTensor : Tensor {
  FloatTensor(std::vector<int64_t> shape, const std::vector<float>& values) : Tensor(std::move(shape)) {
    std::copy(values.begin(), values.end(), data.begin());
  }
};

et_value value_of(int32_t tag) {
  et_value value{};
  value.struct_size = sizeof value;
  value.tag = tag;
  return value;
}

// The error's message, released; "" for success.
std::string message_of(et_error* error) {
  if (error == nullptr) return "";
  std::string message = et_error_message(error);
  et_error_destroy(error);
  return message;
}

TEST(SdkCompat, EveryEarlierMinorHasABuildAndEachLoadsSpeakingItsMinor) {
  std::vector<SdkBuild> builds = sdk_builds();
  ASSERT_EQ(builds.size(), 9u);  // 1.1 at 1.0/1.1/1.2/today, 1.3 at 1.3/today, 1.4 at 1.4/1.5/today
  for (uint32_t minor = 0; minor < ET_ABI_MINOR; ++minor) {
    bool built = false;
    for (const SdkBuild& build : builds) built = built || build.minor == minor;
    EXPECT_TRUE(built) << "no SDK compatibility build at ABI 1." << minor;
  }
  for (const SdkBuild& build : builds) {
    etrt::Runtime::get().load_plugin(std::string(ETRT_SDK_MANIFEST_DIR) + "/" + build.name + ".json");
    etrt::PluginInfo info = plugin_named(build.name);
    EXPECT_TRUE(info.loaded()) << build.name << ": " << info.failure;
    EXPECT_EQ(info.built_abi_minor, build.minor) << build.name;
    EXPECT_EQ(info.abi_minor, build.minor) << build.name;
  }
}

TEST(SdkCompat, Sdk11BoxedKernelComputesAndChecksItsArguments) {
  for (const SdkBuild& build : builds_of("sdk_1_1")) {
    SCOPED_TRACE(build.name);
    et_kernel_descriptor kernel = load_kernel(build, "scale.out");
    FloatTensor x({2, 3}, {1, 2, 3, 4, 5, 6}), out({2, 3}, std::vector<float>(6, 0));
    et_value factor = scalar_double(2.5);
    et_value* args[] = {&x.v, &factor, &out.v, &out.v};
    ASSERT_EQ(message_of(kernel.fn(kernel.user_data, nullptr, args, 4)), "");
    EXPECT_EQ(out.data, (std::vector<float>{2.5f, 5, 7.5f, 10, 12.5f, 15}));

    // expect_args and expect_tensor (deprecated, restored) still word the error naming the operator.
    EXPECT_EQ(message_of(kernel.fn(kernel.user_data, nullptr, args, 3)),
              build.name + "::scale.out: expected 4 arguments, got 3");
    et_value* swapped[] = {&factor, &factor, &out.v, &out.v};
    EXPECT_EQ(message_of(kernel.fn(kernel.user_data, nullptr, swapped, 4)),
              build.name + "::scale.out: argument 0 must be a Tensor, got double");
  }
}

TEST(SdkCompat, Sdk13TypedKernelUnboxesListsScalarsAndOptionals) {
  for (const SdkBuild& build : builds_of("sdk_1_3")) {
    SCOPED_TRACE(build.name);
    et_kernel_descriptor kernel = load_kernel(build, "weighted_sum.out");
    FloatTensor a({3}, {1, 2, 3}), b({3}, {10, 20, 30}), out({3}, {0, 0, 0});
    et_tensor* items[] = {&a.t, &b.t};
    et_value xs = value_of(ET_VALUE_TENSOR_LIST);
    xs.items = items;
    xs.count = 2;
    double weight_values[] = {2, 0.5};
    et_value weights = value_of(ET_VALUE_DOUBLE_LIST);
    weights.items = weight_values;
    weights.count = 2;
    et_value bias = scalar(1);
    et_value no_limit = value_of(ET_VALUE_NULL);
    et_value* args[] = {&xs, &weights, &bias, &no_limit, &out.v, &out.v};
    ASSERT_EQ(message_of(kernel.fn(kernel.user_data, nullptr, args, 6)), "");
    EXPECT_EQ(out.data, (std::vector<float>{8, 15, 22}));  // 1 + 2 a + 0.5 b

    et_value limit = scalar(1);
    et_value* limited[] = {&xs, &weights, &bias, &limit, &out.v, &out.v};
    ASSERT_EQ(message_of(kernel.fn(kernel.user_data, nullptr, limited, 6)), "");
    EXPECT_EQ(out.data, (std::vector<float>{3, 5, 7}));

    et_value* wrong[] = {&xs, &bias, &bias, &limit, &out.v, &out.v};
    EXPECT_EQ(message_of(kernel.fn(kernel.user_data, nullptr, wrong, 6)),
              build.name + "::weighted_sum.out: argument 1 'weights' must be a float list, got int");
  }
}

TEST(SdkCompat, Sdk14PreparedKernelRunsPreparedAndPlain) {
  for (const SdkBuild& build : builds_of("sdk_1_4")) {
    SCOPED_TRACE(build.name);
    et_kernel_descriptor kernel = load_kernel(build, "axpy.out");
    ASSERT_NE(kernel.prepare, nullptr);
    ASSERT_NE(kernel.run_prepared, nullptr);
    ASSERT_NE(kernel.release, nullptr);
    FloatTensor x({4}, {1, 2, 3, 4}), y({4}, {10, 10, 10, 10}), out({4}, {0, 0, 0, 0});
    et_value a = scalar_double(3);
    et_value* args[] = {&x.v, &y.v, &a, &out.v, &out.v};
    ASSERT_EQ(message_of(kernel.fn(kernel.user_data, nullptr, args, 5)), "");
    EXPECT_EQ(out.data, (std::vector<float>{13, 16, 19, 22}));

    void* state = nullptr;
    ASSERT_EQ(message_of(kernel.prepare(kernel.user_data, args, 5, &state)), "");
    ASSERT_NE(state, nullptr);
    x.data = {0, 1, 0, 1};
    x.t.data = x.data.data();
    ASSERT_EQ(message_of(kernel.run_prepared(kernel.user_data, state, nullptr, args, 5)), "");
    EXPECT_EQ(out.data, (std::vector<float>{10, 13, 10, 13}));
    kernel.release(kernel.user_data, state);

    FloatTensor longer({5}, {1, 1, 1, 1, 1});
    et_value* mismatched[] = {&x.v, &longer.v, &a, &out.v, &out.v};
    EXPECT_THAT(message_of(kernel.fn(kernel.user_data, nullptr, mismatched, 5)),
                HasSubstr(build.name + "::axpy.out: x float32[4], y [5], out [4]"));
  }
}

}  // namespace
