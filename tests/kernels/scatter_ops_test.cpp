// index_put (indexing.cpp) and scatter/scatter_add/select_scatter/slice_scatter/
// masked_select/masked_scatter/nonzero (scatter_ops.cpp) against naive references:
// KV-cache updates, duplicates, broadcasting, dynamic outputs, out-of-range indices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pointwise_test_support.h"

using ::testing::HasSubstr;
using namespace pw_test;

namespace {

TEST(IndexPut, UpdatesAKvCacheAlongTheSequenceDim) {
  TT cache({1, 2, 6, 3}, ET_DTYPE_FLOAT32, 1), pos({2}, ET_DTYPE_INT64), values({1, 2, 2, 3}, ET_DTYPE_FLOAT32, 2),
      out({1, 2, 6, 3});
  pos.set_values({4, -1});  // -1 wraps to 5
  auto indices = tensor_list({nullptr, nullptr, &pos.t}, true);
  ASSERT_EQ(run("aten::index_put.out", {&cache.v, &indices->v, &values.v, &boolean(false)->v, &out.v}), "");
  for_each_index({1, 2, 6, 3}, [&](const std::vector<int64_t>& i) {
    const double want = i[2] == 4 ? values.get({0, i[1], 0, i[3]}) : i[2] == 5 ? values.get({0, i[1], 1, i[3]}) : cache.get(i);
    EXPECT_EQ(out.get(i), want);
  });
}

TEST(IndexPut, AccumulatesDuplicatesAndBroadcastsValues) {
  TT self({4, 2}, ET_DTYPE_INT64, 3), idx({3}, ET_DTYPE_INT64), values({2}, ET_DTYPE_INT64, 4), out({4, 2}, ET_DTYPE_INT64);
  idx.set_values({1, 1, 3});
  auto indices = tensor_list({&idx.t}, true);
  ASSERT_EQ(run("aten::index_put.out", {&self.v, &indices->v, &values.v, &boolean(true)->v, &out.v}), "");
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 2; ++c) {
      const int hits = r == 1 ? 2 : r == 3 ? 1 : 0;
      EXPECT_EQ(out.get({r, c}), self.get({r, c}) + hits * values.get({c}));
    }
}

TEST(IndexPut, InPlaceFormWritesSelf) {
  TT self({3}, ET_DTYPE_FLOAT32, 5), idx({1}, ET_DTYPE_INT64), values({}, ET_DTYPE_FLOAT32);
  idx.set_values({2});
  values.set_values({9.5});
  auto indices = tensor_list({&idx.t}, true);
  const double first = self.get({0});
  ASSERT_EQ(run("aten::index_put_", {&self.v, &indices->v, &values.v, &boolean(false)->v, &self.v}, false), "");
  EXPECT_EQ(self.get({2}), 9.5);
  EXPECT_EQ(self.get({0}), first);
}

TEST(IndexPut, RejectsOutOfRangeIndicesAndUnbroadcastableValues) {
  TT self({2, 8}), idx({1}, ET_DTYPE_INT64), values({3}), out({2, 8});
  idx.set_values({8});
  auto indices = tensor_list({nullptr, &idx.t}, true);
  EXPECT_THAT(run("aten::index_put.out", {&self.v, &indices->v, &values.v, &boolean(false)->v, &out.v}),
              HasSubstr("aten::index_put.out: index 8 is out of bounds for dim 1 with size 8"));
  idx.set_values({1});
  EXPECT_THAT(run("aten::index_put.out", {&self.v, &indices->v, &values.v, &boolean(false)->v, &out.v}),
              HasSubstr("values of shape [3] cannot be broadcast to the indexing result of shape [2, 1]"));
}

TEST(Scatter, WritesAndAddsAlongTheDimOnStridedInputs) {
  TT self({3, 4}, ET_DTYPE_FLOAT64, 1, 0, ET_SHAPE_STATIC, true), index({2, 4}, ET_DTYPE_INT64),
      src({2, 4}, ET_DTYPE_FLOAT64, 2), out({3, 4}, ET_DTYPE_FLOAT64), added({3, 4}, ET_DTYPE_FLOAT64);
  index.set_values({0, 1, 2, 0, 2, 1, 2, -3});  // column 3 hits row 0 twice
  ASSERT_EQ(run("aten::scatter.src_out", {&self.v, &integer(0)->v, &index.v, &src.v, &out.v}), "");
  ASSERT_EQ(run("aten::scatter_add.out", {&self.v, &integer(0)->v, &index.v, &src.v, &added.v}), "");
  std::vector<std::vector<double>> want = {self.values()}, sums = {self.values()};
  std::vector<double> w = self.values(), a = self.values();
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      int64_t r = static_cast<int64_t>(index.get({i, j}));
      if (r < 0) r += 3;
      w[static_cast<size_t>(r * 4 + j)] = src.get({i, j});
      a[static_cast<size_t>(r * 4 + j)] += src.get({i, j});
    }
  EXPECT_EQ(out.values(), w);
  for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(added.values()[k], a[k], 1e-12);
}

TEST(Scatter, ValueFormAndErrors) {
  TT self({2, 3}), index({2, 1}, ET_DTYPE_INT64), out({2, 3});
  index.set_values({2, 0});
  ASSERT_EQ(run("aten::scatter.value_out", {&self.v, &integer(1)->v, &index.v, &real(-4.0)->v, &out.v}), "");
  EXPECT_EQ(out.get({0, 2}), -4.0);
  EXPECT_EQ(out.get({1, 0}), -4.0);
  EXPECT_EQ(out.get({0, 0}), self.get({0, 0}));
  index.set_values({3, 0});
  EXPECT_THAT(run("aten::scatter.value_out", {&self.v, &integer(1)->v, &index.v, &real(1.0)->v, &out.v}),
              HasSubstr("aten::scatter.value_out: index 3 is out of range for dim 1 of size 3"));
  TT empty_index({0, 0}, ET_DTYPE_INT64);
  ASSERT_EQ(run("aten::scatter.value_out", {&self.v, &integer(1)->v, &empty_index.v, &real(1.0)->v, &out.v}), "");
  EXPECT_EQ(out.values(), self.values());
}

TEST(SelectAndSliceScatter, EmbedSrcAndRejectBadIndices) {
  TT self({3, 4}), src({3}), out({3, 4}), slice_src({3, 2}), slice_out({3, 4});
  ASSERT_EQ(run("aten::select_scatter.out", {&self.v, &src.v, &integer(1)->v, &integer(-1)->v, &out.v}), "");
  for (int64_t r = 0; r < 3; ++r) {
    EXPECT_EQ(out.get({r, 3}), src.get({r}));
    EXPECT_EQ(out.get({r, 0}), self.get({r, 0}));
  }
  EXPECT_THAT(run("aten::select_scatter.out", {&self.v, &src.v, &integer(1)->v, &integer(4)->v, &out.v}),
              HasSubstr("index 4 is out of range for dim 1 of size 4"));
  ASSERT_EQ(run("aten::slice_scatter.out",
                {&self.v, &slice_src.v, &integer(1)->v, &integer(1)->v, &none()->v, &integer(2)->v, &slice_out.v}),
            "");
  for (int64_t r = 0; r < 3; ++r) {
    EXPECT_EQ(slice_out.get({r, 1}), slice_src.get({r, 0}));
    EXPECT_EQ(slice_out.get({r, 3}), slice_src.get({r, 1}));
    EXPECT_EQ(slice_out.get({r, 2}), self.get({r, 2}));
  }
}

TEST(MaskedSelectAndNonzero, ResizeDynamicOutputsToTheirCounts) {
  TT self({2, 3}), mask({3}, ET_DTYPE_BOOL), out({6}, ET_DTYPE_FLOAT32, 1, 6, ET_SHAPE_DYNAMIC_BOUND);
  mask.set_values({1, 0, 1});
  ASSERT_EQ(run("aten::masked_select.out", {&self.v, &mask.v, &out.v}), "");
  EXPECT_EQ(out.t.sizes[0], 4);
  EXPECT_EQ(out.values(), (std::vector<double>{self.get({0, 0}), self.get({0, 2}), self.get({1, 0}), self.get({1, 2})}));
  TT x({2, 2}, ET_DTYPE_INT32), coords({4, 2}, ET_DTYPE_INT64, 1, 8, ET_SHAPE_DYNAMIC_BOUND);
  x.set_values({0, 7, -1, 0});
  ASSERT_EQ(run("aten::nonzero.out", {&x.v, &coords.v}), "");
  EXPECT_EQ(coords.t.sizes[0], 2);
  EXPECT_EQ(coords.values(), (std::vector<double>{0, 1, 1, 0}));
  TT none_set({3}, ET_DTYPE_BOOL), none_out({3, 1}, ET_DTYPE_INT64, 1, 3, ET_SHAPE_DYNAMIC_BOUND);
  none_set.set_values({0, 0, 0});
  ASSERT_EQ(run("aten::nonzero.out", {&none_set.v, &none_out.v}), "");
  EXPECT_EQ(none_out.t.sizes[0], 0);
}

TEST(MaskedScatter, TakesSourceElementsInOrderAndChecksTheirCount) {
  TT self({2, 2}), mask({2, 2}, ET_DTYPE_BOOL), source({3}), out({2, 2});
  mask.set_values({0, 1, 1, 0});
  source.set_values({10, 20, 30});
  ASSERT_EQ(run("aten::masked_scatter.out", {&self.v, &mask.v, &source.v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{self.get({0, 0}), 10, 20, self.get({1, 1})}));
  TT small({1});
  EXPECT_THAT(run("aten::masked_scatter.out", {&self.v, &mask.v, &small.v, &out.v}),
              HasSubstr("mask selects 2 elements but source [1] has only 1"));
}

// (indexing.cpp; torch.export cannot export it with a data-dependent size, so no parity program.)
TEST(RepeatInterleave, RepeatsEachIndexAndChecksOutputSize) {
  TT repeats({4}, ET_DTYPE_INT64), out({6}, ET_DTYPE_INT64, 1, 8, ET_SHAPE_DYNAMIC_BOUND);
  repeats.set_values({2, 0, 3, 1});
  ASSERT_EQ(run("aten::repeat_interleave.Tensor_out", {&repeats.v, &none()->v, &out.v}), "");
  EXPECT_EQ(out.values(), (std::vector<double>{0, 0, 2, 2, 2, 3}));
  EXPECT_THAT(run("aten::repeat_interleave.Tensor_out", {&repeats.v, &integer(5)->v, &out.v}),
              HasSubstr("output_size 5 does not match the sum of repeats 6"));
  repeats.set_values({1, -1, 0, 0});
  EXPECT_THAT(run("aten::repeat_interleave.Tensor_out", {&repeats.v, &none()->v, &out.v}),
              HasSubstr("repeats must be non-negative, got -1 at 1"));
}

}  // namespace
