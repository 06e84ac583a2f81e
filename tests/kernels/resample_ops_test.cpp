// pixel_shuffle/unshuffle, the reflection/replication pads and upsample_nearest2d
// (resample_ops.cpp) against naive index arithmetic, on strided inputs too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pointwise_test_support.h"

using ::testing::HasSubstr;
using namespace pw_test;

namespace {

TEST(PixelShuffle, MovesChannelsIntoSpaceAndBackOnAnyLayout) {
  TT in({1, 8, 2, 3}, ET_DTYPE_FLOAT32, 3, 0, ET_SHAPE_STATIC, true), out({1, 2, 4, 6}), back({1, 8, 2, 3});
  ASSERT_EQ(run("aten::pixel_shuffle.out", {&in.v, &integer(2)->v, &out.v}), "");
  for_each_index({1, 2, 4, 6}, [&](const std::vector<int64_t>& i) {
    EXPECT_EQ(out.get(i), in.get({0, i[1] * 4 + (i[2] % 2) * 2 + i[3] % 2, i[2] / 2, i[3] / 2}));
  });
  ASSERT_EQ(run("aten::pixel_unshuffle.out", {&out.v, &integer(2)->v, &back.v}), "");
  for_each_index({1, 8, 2, 3}, [&](const std::vector<int64_t>& i) { EXPECT_EQ(back.get(i), in.get(i)); });
  TT odd({1, 3, 2, 2}), odd_out({1, 3, 2, 2});
  EXPECT_THAT(run("aten::pixel_shuffle.out", {&odd.v, &integer(2)->v, &odd_out.v}),
              HasSubstr("channels 3 must be divisible by the square of upscale_factor 2"));
}

TEST(Pads, ReflectAndReplicateTheBorder) {
  TT in({1, 4}, ET_DTYPE_INT64), reflect({1, 7}, ET_DTYPE_INT64), replicate({1, 7}, ET_DTYPE_INT64);
  in.set_values({1, 2, 3, 4});
  ASSERT_EQ(run("aten::reflection_pad1d.out", {&in.v, &int_list({2, 1})->v, &reflect.v}), "");
  EXPECT_EQ(reflect.values(), (std::vector<double>{3, 2, 1, 2, 3, 4, 3}));
  ASSERT_EQ(run("aten::replication_pad1d.out", {&in.v, &int_list({2, 1})->v, &replicate.v}), "");
  EXPECT_EQ(replicate.values(), (std::vector<double>{1, 1, 1, 2, 3, 4, 4}));
  TT too_far({1, 9}, ET_DTYPE_INT64);
  EXPECT_THAT(run("aten::reflection_pad1d.out", {&in.v, &int_list({4, 1})->v, &too_far.v}),
              HasSubstr("padding (4, 1) must be smaller than dim 1 of size 4 for reflection"));
  TT img({1, 2, 3}), img_out({1, 4, 5});
  ASSERT_EQ(run("aten::replication_pad2d.out", {&img.v, &int_list({1, 1, 0, 2})->v, &img_out.v}), "");
  for_each_index({1, 4, 5}, [&](const std::vector<int64_t>& i) {
    EXPECT_EQ(img_out.get(i), img.get({0, std::min<int64_t>(i[1], 1), std::clamp<int64_t>(i[2] - 1, 0, 2)}));
  });
}

TEST(UpsampleNearest, RepeatsPixelsForOutputSizeAndChannelsLastInput) {
  TT in({1, 2, 2, 3}), out({1, 2, 4, 6});
  in.with_dim_order({0, 2, 3, 1});  // channels last
  in.randomize(4);
  ASSERT_EQ(run("aten::upsample_nearest2d.vec_out", {&in.v, &int_list({4, 6})->v, &none()->v, &out.v}), "");
  for_each_index({1, 2, 4, 6}, [&](const std::vector<int64_t>& i) {
    EXPECT_EQ(out.get(i), in.get({0, i[1], i[2] / 2, i[3] / 2}));
  });
  EXPECT_THAT(run("aten::upsample_nearest2d.vec_out", {&in.v, &none()->v, &none()->v, &out.v}),
              HasSubstr("exactly one of output_size and scale_factors must be given"));
}

}  // namespace
