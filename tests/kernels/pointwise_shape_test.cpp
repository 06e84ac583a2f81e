// Shape/copy kernels (shape_ops.cpp) and indexing/creation kernels
// (indexing.cpp) against naive references: random shapes, strided inputs,
// dim orders, dtype conversion, rank 0, empty, negative dims, and the
// rejections.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <numeric>

#include "pointwise_test_support.h"

using ::testing::HasSubstr;
using namespace pw_test;

namespace {

std::vector<int64_t> random_shape(std::mt19937& rng, int min_rank, int max_rank, int max_size = 5) {
  std::vector<int64_t> s(min_rank + rng() % (max_rank - min_rank + 1));
  for (auto& x : s) x = 1 + static_cast<int64_t>(rng() % max_size);
  return s;
}

TEST(PointwiseShape, PermuteTransposeMatchOnRandomShapes) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    auto shape = trial == 0 ? std::vector<int64_t>{256, 256} : random_shape(rng, 1, 5);
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int64_t> out_shape(shape.size());
    for (size_t i = 0; i < perm.size(); ++i) out_shape[i] = shape[perm[i]];
    TT in(shape, trial % 3 == 0 ? ET_DTYPE_INT64 : ET_DTYPE_FLOAT32, rng(), 0, ET_SHAPE_STATIC, trial % 2);
    TT out(out_shape, in.dtype);
    auto dims = perm;
    if (!dims.empty() && trial % 4 == 1) dims[0] -= static_cast<int64_t>(dims.size());  // a negative dim
    ASSERT_EQ(run("aten::permute_copy.out", {&in.v, &int_list(dims)->v, &out.v}), "");
    for_each_index(out_shape, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i(shape.size());
      for (size_t d = 0; d < perm.size(); ++d) i[perm[d]] = o[d];
      ASSERT_EQ(out.get(o), in.get(i));
    });
  }
  TT a({3, 4, 5}), t({5, 4, 3});
  ASSERT_EQ(run("aten::transpose_copy.int_out", {&a.v, &integer(0)->v, &integer(-1)->v, &t.v}), "");
  for_each_index(a.sizes, [&](const std::vector<int64_t>& i) { ASSERT_EQ(t.get({i[2], i[1], i[0]}), a.get(i)); });
  TT m({3, 7}), mt({7, 3});
  ASSERT_EQ(run("aten::t_copy.out", {&m.v, &mt.v}), "");
  for_each_index(m.sizes, [&](const std::vector<int64_t>& i) { ASSERT_EQ(mt.get({i[1], i[0]}), m.get(i)); });
}

// A multi-head split and merge ([B, T, H, Dh] <-> [B, H, T, Dh]) copies rows of Dh contiguous elements at a stride;
// rows of 16, 32 and 64 bytes take fixed-size moves. Every element lands where the permutation says, for each
// element width, with strided (non-contiguous) input too.
TEST(PointwiseShape, PermuteOfContiguousRowsMatches) {
  std::mt19937 rng(5);
  for (int32_t dtype : {ET_DTYPE_UINT8, ET_DTYPE_INT16, ET_DTYPE_FLOAT32, ET_DTYPE_INT64}) {
    for (int64_t dh : {2, 4, 8, 16, 3}) {
      for (const std::vector<int64_t>& perm : {std::vector<int64_t>{0, 2, 1, 3}, std::vector<int64_t>{2, 0, 1, 3}}) {
        const std::vector<int64_t> shape = {2, 8, 4, dh};
        std::vector<int64_t> out_shape(4);
        for (size_t i = 0; i < 4; ++i) out_shape[i] = shape[static_cast<size_t>(perm[i])];
        for (bool strided : {false, true}) {
          TT in(shape, dtype, rng(), 0, ET_SHAPE_STATIC, strided);
          TT out(out_shape, dtype);
          ASSERT_EQ(run("aten::permute_copy.out", {&in.v, &int_list(perm)->v, &out.v}), "");
          for_each_index(out_shape, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> i(4);
            for (size_t d = 0; d < 4; ++d) i[static_cast<size_t>(perm[d])] = o[d];
            ASSERT_EQ(out.get(o), in.get(i)) << "dtype " << dtype << " dh " << dh << " strided " << strided;
          });
        }
      }
    }
  }
}

TEST(PointwiseShape, ViewUnsqueezeSqueezeKeepRowMajorOrder) {
  TT in({2, 3, 4}, ET_DTYPE_FLOAT32, 3, 0, ET_SHAPE_STATIC, true), out({4, 6});
  ASSERT_EQ(run("aten::view_copy.out", {&in.v, &int_list({4, -1})->v, &out.v}), "");
  for (size_t k = 0; k < in.numel(); ++k) ASSERT_EQ(out.flat(k), in.flat(k));
  TT u({2, 3, 1, 4});
  ASSERT_EQ(run("aten::unsqueeze_copy.out", {&in.v, &integer(-2)->v, &u.v}), "");
  for (size_t k = 0; k < in.numel(); ++k) ASSERT_EQ(u.flat(k), in.flat(k));
  TT s1({2, 3, 4});
  ASSERT_EQ(run("aten::squeeze_copy.dim_out", {&u.v, &integer(2)->v, &s1.v}), "");
  EXPECT_EQ(s1.values(), in.values());
  TT x({1, 3, 1, 2}), s2({3, 2}), s3({3, 1, 2}), s4({1, 3, 1, 2});
  ASSERT_EQ(run("aten::squeeze_copy.out", {&x.v, &s2.v}), "");
  EXPECT_EQ(s2.values(), x.values());
  ASSERT_EQ(run("aten::squeeze_copy.dims_out", {&x.v, &int_list({0, -3})->v, &s3.v}), "");
  EXPECT_EQ(s3.values(), x.values());
  ASSERT_EQ(run("aten::squeeze_copy.dim_out", {&x.v, &integer(1)->v, &s4.v}), "");  // size 3: unchanged
  EXPECT_EQ(s4.values(), x.values());
  TT r0({}), v1({1});
  ASSERT_EQ(run("aten::view_copy.out", {&r0.v, &int_list({1})->v, &v1.v}), "");
  EXPECT_EQ(v1.flat(0), r0.flat(0));
  TT ch({2, 3, 4, 5});
  ch.with_dim_order({0, 2, 3, 1});  // channels-last input
  TT flat({2, 60});
  ASSERT_EQ(run("aten::view_copy.out", {&ch.v, &int_list({2, 60})->v, &flat.v}), "");
  for (size_t k = 0; k < ch.numel(); ++k) ASSERT_EQ(flat.flat(k), ch.flat(k));
}

TEST(PointwiseShape, CopiesConvertDtypesAndDimOrders) {
  TT in({2, 3, 4, 5}, ET_DTYPE_FLOAT32, 9), out({2, 3, 4, 5}, ET_DTYPE_INT64);
  ASSERT_EQ(run("dim_order_ops::_to_dim_order_copy.out", {&in.v, &boolean(false)->v, &none()->v, &out.v}), "");
  for (size_t k = 0; k < in.numel(); ++k) ASSERT_EQ(out.flat(k), std::trunc(static_cast<float>(in.flat(k))));
  TT cl({2, 3, 4, 5});
  cl.with_dim_order({0, 2, 3, 1});
  ASSERT_EQ(run("dim_order_ops::_to_dim_order_copy.out", {&in.v, &boolean(false)->v, &int_list({0, 2, 3, 1})->v, &cl.v}),
            "");
  EXPECT_EQ(cl.values(), in.values());
  EXPECT_EQ(cl.load(1), in.get({0, 1, 0, 0}));  // memory is channels-last
  TT back({2, 3, 4, 5});
  ASSERT_EQ(run("dim_order_ops::_clone_dim_order.out", {&cl.v, &boolean(false)->v, &int_list({0, 1, 2, 3})->v, &back.v}), "");
  EXPECT_EQ(back.values(), in.values());
  TT b({4}, ET_DTYPE_BOOL), bf({4}, ET_DTYPE_FLOAT64);
  b.set_values({1, 0, 0, 1});
  ASSERT_EQ(run("aten::_to_copy.out", {&b.v, &boolean(false)->v, &none()->v, &bf.v}), "");
  EXPECT_EQ(bf.values(), (std::vector<double>{1, 0, 0, 1}));
  TT f({4}), fb({4}, ET_DTYPE_BOOL);
  f.set_values({0, -0.5, NAN, 2});
  ASSERT_EQ(run("aten::_to_copy.out", {&f.v, &boolean(false)->v, &integer(0)->v, &fb.v}), "");
  EXPECT_EQ(fb.values(), (std::vector<double>{0, 1, 1, 1}));
  TT t({3, 4}, ET_DTYPE_FLOAT32, 3, 0, ET_SHAPE_STATIC, true), c({3, 4});
  ASSERT_EQ(run("aten::clone.out", {&t.v, &none()->v, &c.v}), "");
  EXPECT_EQ(c.values(), t.values());
  ASSERT_EQ(run("aten::alias_copy.out", {&t.v, &c.v}), "");
  EXPECT_EQ(c.values(), t.values());
}

TEST(PointwiseShape, CopyInPlaceAndCopyOutBroadcast) {
  TT self({2, 3}), src({3}, ET_DTYPE_INT64, 4);
  ASSERT_EQ(run("aten::copy_", {&self.v, &src.v, &boolean(false)->v, &self.v}, false), "");
  for_each_index(self.sizes, [&](const std::vector<int64_t>& i) { ASSERT_EQ(self.get(i), src.get({i[1]})); });
  TT s2({2, 3}), src2({2, 3}), out({2, 3});
  ASSERT_EQ(run("aten::copy.out", {&s2.v, &src2.v, &boolean(false)->v, &out.v}), "");
  EXPECT_EQ(out.values(), src2.values());
}

TEST(PointwiseShape, ExpandCopy) {
  TT in({4, 1}), out({3, 4, 5});
  ASSERT_EQ(run("aten::expand_copy.out", {&in.v, &int_list({3, -1, 5})->v, &boolean(false)->v, &out.v}), "");
  for_each_index(out.sizes, [&](const std::vector<int64_t>& i) { ASSERT_EQ(out.get(i), in.get({i[1], 0})); });
  TT s({}), so({2, 2});
  ASSERT_EQ(run("aten::expand_copy.out", {&s.v, &int_list({2, 2})->v, &boolean(false)->v, &so.v}), "");
  EXPECT_EQ(so.values(), std::vector<double>(4, s.flat(0)));
}

TEST(PointwiseShape, SliceClampsLikePyTorch) {
  TT in({5, 6}, ET_DTYPE_FLOAT32, 8, 0, ET_SHAPE_STATIC, true);
  struct Case {
    int64_t dim;
    std::optional<int64_t> start, end;
    int64_t step;
  } cases[] = {{1, 1, 4, 1}, {1, std::nullopt, std::nullopt, 2}, {0, -3, std::nullopt, 1}, {-1, -100, 100, 3},
               {0, 4, 2, 1},  {1, 7, 9, 1},                      {0, std::nullopt, -1, 2}};
  for (const Case& c : cases) {
    int64_t dim = (c.dim + 2) % 2, size = in.sizes[dim];
    int64_t s = c.start.value_or(0), e = c.end.value_or(size);
    if (s < 0) s += size;
    if (e < 0) e += size;
    s = std::clamp<int64_t>(s, 0, size);
    e = std::clamp<int64_t>(e, 0, size);
    int64_t len = e > s ? (e - s + c.step - 1) / c.step : 0;
    std::vector<int64_t> shape = in.sizes;
    shape[dim] = len;
    TT out(shape, ET_DTYPE_FLOAT32, 1, 30, ET_SHAPE_DYNAMIC_BOUND);
    auto sv = c.start ? integer(*c.start) : none();
    auto ev = c.end ? integer(*c.end) : none();
    ASSERT_EQ(run("aten::slice_copy.Tensor_out", {&in.v, &integer(c.dim)->v, &sv->v, &ev->v, &integer(c.step)->v, &out.v}), "");
    ASSERT_EQ(out.sizes, shape);
    for_each_index(shape, [&](const std::vector<int64_t>& o) {
      auto i = o;
      i[dim] = s + o[dim] * c.step;
      ASSERT_EQ(out.get(o), in.get(i));
    });
  }
}

TEST(PointwiseShape, SelectNegativeIndex) {
  TT in({3, 4, 2}), out({3, 2});
  ASSERT_EQ(run("aten::select_copy.int_out", {&in.v, &integer(-2)->v, &integer(-1)->v, &out.v}), "");
  for_each_index(out.sizes, [&](const std::vector<int64_t>& o) { ASSERT_EQ(out.get(o), in.get({o[0], 3, o[1]})); });
  TT v({5}), s({});
  ASSERT_EQ(run("aten::select_copy.int_out", {&v.v, &integer(0)->v, &integer(2)->v, &s.v}), "");
  EXPECT_EQ(s.flat(0), v.flat(2));
}

TEST(PointwiseShape, CatStackSplit) {
  TT a({2, 3}), b({2, 1}, ET_DTYPE_FLOAT32, 2, 0, ET_SHAPE_STATIC), c({2, 4}, ET_DTYPE_INT64, 3), e({0}), out({2, 8});
  auto list = tensor_list({&a.t, &e.t, &b.t, &c.t});
  ASSERT_EQ(run("aten::cat.out", {&list->v, &integer(-1)->v, &out.v}), "");
  for_each_index(out.sizes, [&](const std::vector<int64_t>& i) {
    double expected = i[1] < 3 ? a.get({i[0], i[1]}) : i[1] < 4 ? b.get({i[0], 0}) : c.get({i[0], i[1] - 4});
    ASSERT_EQ(out.get(i), expected);
  });
  TT s({2, 2, 3});
  auto two = tensor_list({&a.t, &a.t});
  ASSERT_EQ(run("aten::stack.out", {&two->v, &integer(1)->v, &s.v}), "");
  for_each_index(s.sizes, [&](const std::vector<int64_t>& i) { ASSERT_EQ(s.get(i), a.get({i[0], i[2]})); });
  TT x({7, 2}, ET_DTYPE_FLOAT32, 5, 0, ET_SHAPE_STATIC, true), p({2, 2}), q({0, 2}), r({5, 2});
  auto outs = tensor_list({&p.t, &q.t, &r.t});
  ASSERT_EQ(run("aten::split_with_sizes_copy.out", {&x.v, &int_list({2, 0, 5})->v, &integer(0)->v, &outs->v}, false), "");
  for_each_index(p.sizes, [&](const std::vector<int64_t>& i) { ASSERT_EQ(p.get(i), x.get(i)); });
  for_each_index(r.sizes, [&](const std::vector<int64_t>& i) { ASSERT_EQ(r.get(i), x.get({i[0] + 2, i[1]})); });
  TT y0({7, 1}), y1({7, 1});
  auto halves = tensor_list({&y0.t, &y1.t});
  ASSERT_EQ(run("aten::split_copy.Tensor_out", {&x.v, &integer(1)->v, &integer(1)->v, &halves->v}, false), "");
  for (int64_t k = 0; k < 7; ++k) ASSERT_EQ(y1.get({k, 0}), x.get({k, 1}));
}

TEST(PointwiseShape, ConstantPadAndRepeat) {
  TT in({2, 3}), out({4, 4});
  ASSERT_EQ(run("aten::constant_pad_nd.out", {&in.v, &int_list({2, -1, 1, 1})->v, &real(9)->v, &out.v}), "");
  for_each_index(out.sizes, [&](const std::vector<int64_t>& o) {
    int64_t i = o[0] - 1, j = o[1] - 2;
    double expected = (i >= 0 && i < 2 && j >= 0 && j < 2) ? in.get({i, j}) : 9;
    ASSERT_EQ(out.get(o), expected);
  });
  TT rep({2, 4, 3});
  ASSERT_EQ(run("aten::repeat.out", {&in.v, &int_list({2, 2, 1})->v, &rep.v}), "");
  for_each_index(rep.sizes, [&](const std::vector<int64_t>& o) { ASSERT_EQ(rep.get(o), in.get({o[1] % 2, o[2]})); });
}

TEST(PointwiseShapeRejects, PermuteWithRepeatedDim) {
  TT in({2, 3}), out({3, 2});
  EXPECT_THAT(run("aten::permute_copy.out", {&in.v, &int_list({1, -1})->v, &out.v}), HasSubstr("dim 1 is repeated in dims [1, -1]"));
}

TEST(PointwiseShapeRejects, PermuteWithWrongDimCount) {
  TT in({2, 3}), out({3, 2});
  EXPECT_THAT(run("aten::permute_copy.out", {&in.v, &int_list({1})->v, &out.v}),
              HasSubstr("dims [1] must list each of the 2 dims of the input [2, 3] once"));
}

TEST(PointwiseShapeRejects, ViewOfAnotherSize) {
  TT in({2, 3}), out({4, 2});
  EXPECT_THAT(run("aten::view_copy.out", {&in.v, &int_list({4, 2})->v, &out.v}), HasSubstr("shape [4, 2] is invalid for input of size 6"));
  EXPECT_THAT(run("aten::view_copy.out", {&in.v, &int_list({-1, -1})->v, &out.v}), HasSubstr("only one dimension"));
}

TEST(PointwiseShapeRejects, ExpandToIncompatibleSize) {
  TT in({4, 2}), out({4, 3});
  EXPECT_THAT(run("aten::expand_copy.out", {&in.v, &int_list({4, 3})->v, &boolean(false)->v, &out.v}),
              HasSubstr("the expanded size 3 must match the existing size 2 at dim 1"));
}

TEST(PointwiseShapeRejects, SliceStepMustBePositive) {
  TT in({4}), out({4});
  EXPECT_THAT(run("aten::slice_copy.Tensor_out", {&in.v, &integer(0)->v, &none()->v, &none()->v, &integer(0)->v, &out.v}),
              HasSubstr("slice step must be positive, got 0"));
}

TEST(PointwiseShapeRejects, SelectIndexOutOfRange) {
  TT in({3, 4}), out({3});
  EXPECT_THAT(run("aten::select_copy.int_out", {&in.v, &integer(1)->v, &integer(4)->v, &out.v}),
              HasSubstr("index 4 is out of range for dim 1 of size 4"));
}

TEST(PointwiseShapeRejects, CatSizeMismatch) {
  TT a({2, 3}), b({3, 3}), out({5, 3});
  auto list = tensor_list({&a.t, &b.t});
  EXPECT_THAT(run("aten::cat.out", {&list->v, &integer(1)->v, &out.v}),
              HasSubstr("sizes of tensors must match except in dim 1: [2, 3] vs [3, 3]"));
}

TEST(PointwiseShapeRejects, SplitSizesMustSum) {
  TT x({5}), p({2}), q({2});
  auto outs = tensor_list({&p.t, &q.t});
  EXPECT_THAT(run("aten::split_with_sizes_copy.out", {&x.v, &int_list({2, 2})->v, &integer(0)->v, &outs->v}, false),
              HasSubstr("split sizes [2, 2] must sum to the size 5 of dim 0"));
}

TEST(PointwiseShapeRejects, DimOrderArgumentDiffersFromOutput) {
  TT in({1, 2, 3, 4}), out({1, 2, 3, 4});
  EXPECT_THAT(run("dim_order_ops::_clone_dim_order.out", {&in.v, &boolean(false)->v, &int_list({0, 2, 3, 1})->v, &out.v}),
              HasSubstr("dim_order [0, 2, 3, 1] does not match the output's dim order (0, 1, 2, 3)"));
}

TEST(PointwiseShapeRejects, CloneChangesDtype) {
  TT in({3}), out({3}, ET_DTYPE_INT64);
  EXPECT_THAT(run("aten::clone.out", {&in.v, &none()->v, &out.v}), HasSubstr("output dtype int64 must match the input dtype float32"));
}

TEST(PointwiseShapeRejects, PadOddLength) {
  TT in({3}), out({4});
  EXPECT_THAT(run("aten::constant_pad_nd.out", {&in.v, &int_list({1})->v, &real(0)->v, &out.v}), HasSubstr("pad length must be even"));
}

TEST(PointwiseShapeRejects, CopySourceDoesNotBroadcast) {
  TT self({2, 3}), src({2});
  EXPECT_THAT(run("aten::copy_", {&self.v, &src.v, &boolean(false)->v, &self.v}, false),
              HasSubstr("src of shape [2] does not broadcast to self's shape [2, 3]"));
}

// ------------------------------------------------------------------ indexing

TEST(PointwiseIndex, EmbeddingAnyIndexShape) {
  TT w({10, 4}), ids({2, 3}, ET_DTYPE_INT64), out({2, 3, 4});
  ids.set_values({1, 0, 9, 3, 3, 7});
  ASSERT_EQ(run("aten::embedding.out", {&w.v, &ids.v, &integer(-1)->v, &boolean(false)->v, &boolean(false)->v, &out.v}), "");
  for_each_index(out.sizes, [&](const std::vector<int64_t>& i) {
    ASSERT_EQ(out.get(i), w.get({static_cast<int64_t>(ids.get({i[0], i[1]})), i[2]}));
  });
  TT id0({}, ET_DTYPE_INT64), o0({4});
  id0.store(0, 5);
  ASSERT_EQ(run("aten::embedding.out", {&w.v, &id0.v, &integer(-1)->v, &boolean(false)->v, &boolean(false)->v, &o0.v}), "");
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(o0.get({j}), w.get({5, j}));
}

TEST(PointwiseIndex, IndexSelectAndIndexTensor) {
  TT x({4, 5, 3}), idx({3}, ET_DTYPE_INT64), out({4, 3, 3});
  idx.set_values({4, 0, 4});
  ASSERT_EQ(run("aten::index_select.out", {&x.v, &integer(1)->v, &idx.v, &out.v}), "");
  for_each_index(out.sizes, [&](const std::vector<int64_t>& i) {
    ASSERT_EQ(out.get(i), x.get({i[0], static_cast<int64_t>(idx.flat(static_cast<size_t>(i[1]))), i[2]}));
  });
  // x[:, idx2d] -> [4, 2, 2, 3]; negative indices wrap.
  TT i2({2, 2}, ET_DTYPE_INT64), o2({4, 2, 2, 3});
  i2.set_values({-1, 0, 2, 3});
  auto l2 = tensor_list({nullptr, &i2.t}, true);
  ASSERT_EQ(run("aten::index.Tensor_out", {&x.v, &l2->v, &o2.v}), "");
  for_each_index(o2.sizes, [&](const std::vector<int64_t>& i) {
    int64_t j = static_cast<int64_t>(i2.get({i[1], i[2]}));
    ASSERT_EQ(o2.get(i), x.get({i[0], j < 0 ? j + 5 : j, i[3]}));
  });
  // Two non-adjacent index tensors broadcast together: result dims go first.
  TT a({2}, ET_DTYPE_INT64), c({1}, ET_DTYPE_INT64), o3({2, 5});
  a.set_values({3, 1});
  c.set_values({2});
  auto l3 = tensor_list({&a.t, nullptr, &c.t}, true);
  ASSERT_EQ(run("aten::index.Tensor_out", {&x.v, &l3->v, &o3.v}), "");
  for_each_index(o3.sizes, [&](const std::vector<int64_t>& i) {
    ASSERT_EQ(o3.get(i), x.get({static_cast<int64_t>(a.flat(static_cast<size_t>(i[0]))), i[1], 2}));
  });
  // A bool mask over the first dim.
  TT m({4}, ET_DTYPE_BOOL), o4({2, 5, 3}, ET_DTYPE_FLOAT32, 1, 60, ET_SHAPE_DYNAMIC_BOUND);
  m.set_values({0, 1, 0, 1});
  auto l4 = tensor_list({&m.t}, true);
  ASSERT_EQ(run("aten::index.Tensor_out", {&x.v, &l4->v, &o4.v}), "");
  EXPECT_EQ(o4.sizes, (std::vector<int64_t>{2, 5, 3}));
  for_each_index(o4.sizes, [&](const std::vector<int64_t>& i) { ASSERT_EQ(o4.get(i), x.get({i[0] * 2 + 1, i[1], i[2]})); });
}

TEST(PointwiseIndex, FullArangeTriuScalarTensor) {
  TT f({2, 3}), b({2, 3}, ET_DTYPE_BOOL), i({}, ET_DTYPE_INT64);
  ASSERT_EQ(run("aten::full.out", {&int_list({2, 3})->v, &real(1.5)->v, &f.v}), "");
  EXPECT_EQ(f.values(), std::vector<double>(6, 1.5));
  ASSERT_EQ(run("aten::full.out", {&int_list({2, 3})->v, &boolean(true)->v, &b.v}), "");
  EXPECT_EQ(b.values(), std::vector<double>(6, 1));
  ASSERT_EQ(run("aten::scalar_tensor.out", {&integer(-4)->v, &i.v}), "");
  EXPECT_EQ(i.flat(0), -4);
  TT zl({2, 3});
  ASSERT_EQ(run("aten::zeros_like.out", {&f.v, &none()->v, &zl.v}), "");
  EXPECT_EQ(zl.values(), std::vector<double>(6, 0));
  ASSERT_EQ(run("aten::full_like.out", {&f.v, &integer(7)->v, &none()->v, &zl.v}), "");
  EXPECT_EQ(zl.values(), std::vector<double>(6, 7));
  TT ar({8}, ET_DTYPE_INT64, 1, 16, ET_SHAPE_DYNAMIC_BOUND);
  ASSERT_EQ(run("aten::arange.start_out", {&integer(2)->v, &integer(-7)->v, &integer(-3)->v, &ar.v}), "");
  EXPECT_EQ(ar.values(), (std::vector<double>{2, -1, -4}));
  TT af({4}, ET_DTYPE_FLOAT32, 1, 16, ET_SHAPE_DYNAMIC_BOUND);
  ASSERT_EQ(run("aten::arange.start_out", {&real(0.5)->v, &real(2.0)->v, &real(0.25)->v, &af.v}), "");
  EXPECT_EQ(af.values(), (std::vector<double>{0.5, 0.75, 1.0, 1.25, 1.5, 1.75}));
  TT a5({5}, ET_DTYPE_INT64);
  ASSERT_EQ(run("aten::arange.out", {&integer(5)->v, &a5.v}), "");
  EXPECT_EQ(a5.values(), (std::vector<double>{0, 1, 2, 3, 4}));
  TT m({2, 4, 5}), up({2, 4, 5}), lo({2, 4, 5});
  ASSERT_EQ(run("aten::triu.out", {&m.v, &integer(1)->v, &up.v}), "");
  ASSERT_EQ(run("aten::tril.out", {&m.v, &integer(-1)->v, &lo.v}), "");
  for_each_index(m.sizes, [&](const std::vector<int64_t>& i) {
    ASSERT_EQ(up.get(i), i[2] - i[1] >= 1 ? m.get(i) : 0);
    ASSERT_EQ(lo.get(i), i[2] - i[1] <= -1 ? m.get(i) : 0);
  });
  TT bm({3, 3}, ET_DTYPE_BOOL, 4), bu({3, 3}, ET_DTYPE_BOOL);
  ASSERT_EQ(run("aten::triu.out", {&bm.v, &integer(0)->v, &bu.v}), "");
  for_each_index(bm.sizes, [&](const std::vector<int64_t>& i) { ASSERT_EQ(bu.get(i), i[1] >= i[0] ? bm.get(i) : 0); });
}

TEST(PointwiseIndexRejects, EmbeddingIndexOutOfRange) {
  TT w({10, 4}), ids({2}, ET_DTYPE_INT64), out({2, 4});
  ids.set_values({1, 10});
  EXPECT_THAT(run("aten::embedding.out", {&w.v, &ids.v, &integer(-1)->v, &boolean(false)->v, &boolean(false)->v, &out.v}),
              HasSubstr("index 10 (at flat position 1) is out of range for a weight of 10 rows"));
}

TEST(PointwiseIndexRejects, EmbeddingIndicesMustBeIntegers) {
  TT w({10, 4}), ids({2}), out({2, 4});
  EXPECT_THAT(run("aten::embedding.out", {&w.v, &ids.v, &integer(-1)->v, &boolean(false)->v, &boolean(false)->v, &out.v}),
              HasSubstr("indices must be an int64 or int32 tensor, got float32"));
}

TEST(PointwiseIndexRejects, IndexOutOfBounds) {
  TT x({3}), i({1}, ET_DTYPE_INT64), out({1});
  i.store(0, -4);
  auto l = tensor_list({&i.t}, true);
  EXPECT_THAT(run("aten::index.Tensor_out", {&x.v, &l->v, &out.v}), HasSubstr("index -4 is out of bounds for dim 0 with size 3"));
}

TEST(PointwiseIndexRejects, IndexTensorsThatDoNotBroadcast) {
  TT x({3, 3}), a({2}, ET_DTYPE_INT64), b({3}, ET_DTYPE_INT64), out({3});
  a.set_values({0, 1});
  b.set_values({0, 1, 2});
  auto l = tensor_list({&a.t, &b.t}, true);
  EXPECT_THAT(run("aten::index.Tensor_out", {&x.v, &l->v, &out.v}),
              HasSubstr("indexing tensors could not be broadcast together"));
}

TEST(PointwiseIndexRejects, ArangeStepSign) {
  TT out({3}, ET_DTYPE_INT64);
  EXPECT_THAT(run("aten::arange.start_out", {&integer(0)->v, &integer(5)->v, &integer(-1)->v, &out.v}),
              HasSubstr("upper bound and larger bound inconsistent with step sign"));
  EXPECT_THAT(run("aten::arange.start_out", {&integer(0)->v, &integer(5)->v, &integer(0)->v, &out.v}),
              HasSubstr("step must be nonzero"));
  // Ranges whose length does not fit (from corrupt programs) are refused, not overflowed.
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_THAT(run("aten::arange.start_out", {&integer(-big)->v, &integer(big)->v, &integer(1)->v, &out.v}),
              HasSubstr("is too long"));
  EXPECT_THAT(run("aten::arange.start_out", {&real(-1e300)->v, &real(1e300)->v, &real(1.0)->v, &out.v}),
              HasSubstr("is too long"));
  // The widest range that fits still gets its exact integer length.
  TT two({2}, ET_DTYPE_INT64);
  ASSERT_EQ(run("aten::arange.start_out", {&integer(-big)->v, &integer(big)->v, &integer(big)->v, &two.v}), "");
}

TEST(PointwiseIndexRejects, TriuNeedsTwoDims) {
  TT in({3}), out({3});
  EXPECT_THAT(run("aten::triu.out", {&in.v, &integer(0)->v, &out.v}), HasSubstr("input must have at least 2 dims, got shape [3]"));
}

TEST(PointwiseIndexRejects, FullWithNegativeSize) {
  TT out({3});
  EXPECT_THAT(run("aten::full.out", {&int_list({-3})->v, &real(1)->v, &out.v}), HasSubstr("size [-3] has a negative dim"));
}

}  // namespace
