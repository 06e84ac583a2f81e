// quantized_decomposed::* (quantized_ops.cpp): rounding and clamping, per-channel
// axes, the packed 4-bit embedding's nibble order, and argument errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pointwise_test_support.h"

using ::testing::HasSubstr;
using namespace pw_test;

namespace {

TEST(QuantizePerTensor, RoundsHalfToEvenAndClamps) {
  TT x({5}), q({5}, ET_DTYPE_INT8), back({5});
  x.set_values({0.25, 0.75, -10.0, 10.0, -0.25});  // / 0.5: 0.5 -> 0, 1.5 -> 2, clamped, clamped, -0.5 -> -0
  ASSERT_EQ(run("quantized_decomposed::quantize_per_tensor.out",
                {&x.v, &real(0.5)->v, &integer(1)->v, &integer(-8)->v, &integer(7)->v, &integer(ET_DTYPE_INT8)->v, &q.v}),
            "");
  EXPECT_EQ(q.values(), (std::vector<double>{1, 3, -8, 7, 1}));
  ASSERT_EQ(run("quantized_decomposed::dequantize_per_tensor.out",
                {&q.v, &real(0.5)->v, &integer(1)->v, &integer(-8)->v, &integer(7)->v, &integer(ET_DTYPE_INT8)->v,
                 &none()->v, &back.v}),
            "");
  EXPECT_EQ(back.values(), (std::vector<double>{0, 1, -4.5, 3, 0}));
  TT wrong({5}, ET_DTYPE_UINT8);
  EXPECT_THAT(run("quantized_decomposed::quantize_per_tensor.out",
                  {&x.v, &real(0.5)->v, &integer(1)->v, &integer(-8)->v, &integer(7)->v, &integer(ET_DTYPE_INT8)->v,
                   &wrong.v}),
              HasSubstr("out dtype uint8 must be the dtype argument int8"));
}

TEST(QuantizePerChannel, UsesTheParametersOfEachChannelAlongTheAxis) {
  TT x({2, 3}), scales({3}, ET_DTYPE_FLOAT64), zeros({3}, ET_DTYPE_INT64), q({2, 3}, ET_DTYPE_INT8);
  x.set_values({1, 1, 1, -1, -1, -1});
  scales.set_values({1, 0.5, 0.25});
  zeros.set_values({0, 1, -1});
  ASSERT_EQ(run("quantized_decomposed::quantize_per_channel.out",
                {&x.v, &scales.v, &zeros.v, &integer(1)->v, &integer(-128)->v, &integer(127)->v,
                 &integer(ET_DTYPE_INT8)->v, &q.v}),
            "");
  EXPECT_EQ(q.values(), (std::vector<double>{1, 3, 3, -1, -1, -5}));
  EXPECT_THAT(run("quantized_decomposed::quantize_per_channel.out",
                  {&x.v, &scales.v, &zeros.v, &integer(0)->v, &integer(-128)->v, &integer(127)->v,
                   &integer(ET_DTYPE_INT8)->v, &q.v}),
              HasSubstr("scales [3] must have one entry per channel (2) of axis 0"));
}

TEST(Embedding4Bit, UnpacksHighNibbleFirstAndChecksIndices) {
  TT weight({2, 1}, ET_DTYPE_UINT8), scales({2}), indices({1}, ET_DTYPE_INT64), out({1, 2});
  weight.set_values({0x9F, 0x08});  // row 0: 9 - 8 = 1, 15 - 8 = 7
  scales.set_values({0.5, 1.0});
  indices.set_values({0});
  ASSERT_EQ(run("quantized_decomposed::embedding_4bit.out",
                {&weight.v, &scales.v, &none()->v, &integer(-8)->v, &integer(7)->v, &indices.v, &out.v}),
            "");
  EXPECT_EQ(out.values(), (std::vector<double>{0.5, 3.5}));
  indices.set_values({2});
  EXPECT_THAT(run("quantized_decomposed::embedding_4bit.out",
                  {&weight.v, &scales.v, &none()->v, &integer(-8)->v, &integer(7)->v, &indices.v, &out.v}),
              HasSubstr("index 2 is out of range for 2 embeddings"));
}

}  // namespace
