// Manifest priority decides, whatever is loaded already: a declared plugin
// outranking the loaded provider of an operator is loaded and serves it, even
// when the loaded one (kernels_optimized) came in first for another operator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "etrt/etrt.hpp"
#include "test_support.h"

using namespace etrt_test;

namespace {

TEST(PriorityOrder, HigherPriorityDeclaredProviderWinsOverAnAlreadyLoadedOne) {
  // kernels_optimized (priority 100, default manifests) comes in for add.
  et_kernel_descriptor add{};
  add.struct_size = sizeof add;
  ASSERT_EQ(et_find_kernel("aten::add.out", &add, nullptr), ET_OK);
  ASSERT_TRUE(is_mapped("libetrt_kernels_optimized"));

  // Then a plugin declaring relu at priority 200 becomes known, not loaded.
  etrt::Runtime::get().add_manifest(ETRT_TEST_RELU_MANIFEST);
  ASSERT_FALSE(is_mapped("libetrt_test_relu_200"));
  et_plugin_record planned{};
  planned.struct_size = sizeof planned;
  ASSERT_EQ(et_registry_planned_provider(ET_ENTRY_OPERATOR, "aten::relu.out", &planned), ET_OK);
  EXPECT_STREQ(planned.name, "test_relu_200");

  // The lookup loads it and returns its kernel (it reports its tag, 200).
  EXPECT_EQ(call_reporting_kernel("aten::relu.out"), 200);
  EXPECT_TRUE(is_mapped("libetrt_test_relu_200"));
  // kernels_optimized still serves what nobody outranks it for.
  et_kernel_descriptor again{};
  again.struct_size = sizeof again;
  ASSERT_EQ(et_find_kernel("aten::add.out", &again, nullptr), ET_OK);
  EXPECT_EQ(again.fn, add.fn);
}

}  // namespace
