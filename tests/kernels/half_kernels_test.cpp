// float16 and bfloat16 through kernels_optimized: each operator family run on half tensors gives exactly its
// float32 result on the same values rounded to the half type (arithmetic in float32, round-to-nearest-even on
// store), dtype conversions to and from every dtype round like PyTorch, outputs resize, and operators without
// half support name the operator and the dtype.
#include <cmath>
#include <functional>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pointwise_test_support.h"

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace pw_test;

namespace {

double round_to(int32_t half, double v) {
  if (half == ET_DTYPE_FLOAT16) return etrt::plugin::to_float(etrt::plugin::half_from_float(static_cast<float>(v)));
  return etrt::plugin::to_float(etrt::plugin::bfloat16_from_float(static_cast<float>(v)));
}

// The tensors of one run of a case: floating inputs and outputs in `dtype` (float32, or the half type under
// test), holding values the half type represents, so both runs see the same numbers.
struct HalfRun {
  int32_t dtype, half;
  std::vector<std::unique_ptr<TT>> tensors;
  std::vector<ValPtr> values;
  std::vector<TT*> outs;

  TT& make(std::vector<int64_t> shape, int32_t dt, unsigned seed, size_t capacity = 0, int32_t dynamism = ET_SHAPE_STATIC) {
    tensors.push_back(std::make_unique<TT>(std::move(shape), dt, seed, capacity, dynamism));
    return *tensors.back();
  }
  // A floating input with random values in [lo, hi].
  et_value* in(std::vector<int64_t> shape, unsigned seed, double lo = -3, double hi = 3) {
    TT& t = make(std::move(shape), dtype, seed);
    t.randomize(seed, lo, hi);
    for (size_t i = 0; i < t.numel(); ++i) t.set_flat(i, round_to(half, t.flat(i)));
    return &t.v;
  }
  // An input of a fixed dtype (indices, masks) with the given values.
  et_value* fixed(std::vector<int64_t> shape, int32_t dt, std::vector<double> vals) {
    TT& t = make(std::move(shape), dt, 1);
    t.set_values(vals);
    return &t.v;
  }
  // An output in the run's dtype (or `dt`).
  et_value* out(std::vector<int64_t> shape, int32_t dt = -1, size_t capacity = 0, int32_t dynamism = ET_SHAPE_STATIC) {
    TT& t = make(std::move(shape), dt < 0 ? dtype : dt, 99, capacity, dynamism);
    outs.push_back(&t);
    return &t.v;
  }
  et_value* keep(ValPtr v) {
    values.push_back(std::move(v));
    return &values.back()->v;
  }
  et_value* outs_list() {
    std::vector<et_tensor*> items;
    for (TT* t : outs) items.push_back(&t->t);
    return keep(tensor_list(items));
  }
};
using Case = std::function<std::string(HalfRun&)>;

void expect_half_is_rounded_float(const Case& c, int32_t half) {
  HalfRun f{ET_DTYPE_FLOAT32, half, {}, {}, {}}, h{half, half, {}, {}, {}};
  ASSERT_EQ(c(f), "");
  ASSERT_EQ(c(h), "");
  ASSERT_EQ(f.outs.size(), h.outs.size());
  for (size_t k = 0; k < f.outs.size(); ++k) {
    const TT& fo = *f.outs[k];
    const TT& ho = *h.outs[k];
    ASSERT_EQ(fo.sizes, ho.sizes) << "output " << k;
    const bool floating = ho.dtype == half;
    for (size_t i = 0; i < fo.numel(); ++i) {
      const double want = floating ? round_to(half, fo.flat(i)) : fo.flat(i);
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(ho.flat(i))) << "output " << k << " element " << i;
      else ASSERT_EQ(ho.flat(i), want) << "output " << k << " element " << i << " (float32 " << fo.flat(i) << ")";
    }
  }
}

class HalfKernels : public ::testing::TestWithParam<int32_t> {
 protected:
  void check(const Case& c) { expect_half_is_rounded_float(c, GetParam()); }
};

TEST_P(HalfKernels, BinaryElementwiseWithBroadcastAndScalars) {
  check([](HalfRun& r) { return run("aten::add.out", {r.in({3, 4, 5}, 1), r.in({4, 1}, 2), r.keep(real(0.5)), r.out({3, 4, 5})}); });
  check([](HalfRun& r) { return run("aten::sub.out", {r.in({6, 7}, 3), r.in({7}, 4), r.keep(integer(1)), r.out({6, 7})}); });
  check([](HalfRun& r) { return run("aten::mul.out", {r.in({40, 33}, 5), r.in({40, 33}, 6), r.out({40, 33})}); });
  check([](HalfRun& r) { return run("aten::div.out", {r.in({5, 6}, 7), r.in({5, 6}, 8, 0.5, 3), r.out({5, 6})}); });
  check([](HalfRun& r) { return run("aten::mul.Scalar_out", {r.in({9, 5}, 9), r.keep(real(0.1)), r.out({9, 5})}); });
  check([](HalfRun& r) { return run("aten::pow.Tensor_Scalar_out", {r.in({30}, 10, 0, 4), r.keep(real(2.5)), r.out({30})}); });
  check([](HalfRun& r) { return run("aten::maximum.out", {r.in({8, 3}, 11), r.in({3}, 12), r.out({8, 3})}); });
  check([](HalfRun& r) { return run("aten::lt.Tensor_out", {r.in({8, 3}, 13), r.in({3}, 14), r.out({8, 3}, ET_DTYPE_BOOL)}); });
  check([](HalfRun& r) { return run("aten::eq.Scalar_out", {r.in({50}, 15), r.keep(real(0.25)), r.out({50}, ET_DTYPE_BOOL)}); });
}

TEST_P(HalfKernels, UnaryActivationsAndWhere) {
  for (const char* op : {"aten::exp.out", "aten::tanh.out", "aten::sigmoid.out", "aten::relu.out", "aten::rsqrt.out",
                         "aten::neg.out", "aten::sqrt.out", "aten::erf.out", "aten::silu.out", "aten::sin.out"})
    check([op](HalfRun& r) { return run(op, {r.in({7, 9}, 21, 0.01, 3), r.out({7, 9})}); });
  check([](HalfRun& r) { return run("aten::gelu.out", {r.in({64}, 22), r.keep(string("tanh")), r.out({64})}); });
  check([](HalfRun& r) {
    return run("aten::where.self_out", {r.fixed({2, 3}, ET_DTYPE_BOOL, {1, 0, 1, 0, 0, 1}), r.in({2, 3}, 23), r.in({3}, 24),
                                        r.out({2, 3})});
  });
  check([](HalfRun& r) {
    return run("aten::masked_fill.Scalar_out", {r.in({2, 3}, 25), r.fixed({3}, ET_DTYPE_BOOL, {1, 0, 1}),
                                                r.keep(real(-INFINITY)), r.out({2, 3})});
  });
  check([](HalfRun& r) { return run("aten::clamp.out", {r.in({20}, 26), r.keep(real(-1.1)), r.keep(real(1.3)), r.out({20})}); });
}

TEST_P(HalfKernels, ReductionsSoftmaxAndNorms) {
  check([](HalfRun& r) {
    return run("aten::sum.IntList_out", {r.in({6, 50}, 31), r.keep(int_list({1})), r.keep(boolean(false)), r.keep(none()), r.out({6})});
  });
  check([](HalfRun& r) {
    return run("aten::mean.out", {r.in({4, 5, 6}, 32), r.keep(int_list({0, 2})), r.keep(boolean(true)), r.keep(none()), r.out({1, 5, 1})});
  });
  check([](HalfRun& r) { return run("aten::amax.out", {r.in({4, 9}, 33), r.keep(int_list({-1})), r.keep(boolean(false)), r.out({4})}); });
  check([](HalfRun& r) {
    return run("aten::argmax.out", {r.in({4, 9}, 34), r.keep(integer(1)), r.keep(boolean(false)), r.out({4}, ET_DTYPE_INT64)});
  });
  check([](HalfRun& r) { return run("aten::_softmax.out", {r.in({3, 17}, 35), r.keep(integer(-1)), r.keep(boolean(false)), r.out({3, 17})}); });
  check([](HalfRun& r) { return run("aten::_log_softmax.out", {r.in({3, 17}, 36), r.keep(integer(1)), r.keep(boolean(false)), r.out({3, 17})}); });
  check([](HalfRun& r) {
    r.out({4, 16});
    r.out({4, 1});
    r.out({4, 1});
    return run("aten::native_layer_norm.out",
               {r.in({4, 16}, 37), r.keep(int_list({16})), r.in({16}, 38), r.in({16}, 39), r.keep(real(1e-5)),
                &r.outs[0]->v, &r.outs[1]->v, &r.outs[2]->v, r.outs_list()}, false);
  });
}

TEST_P(HalfKernels, MatrixProducts) {
  check([](HalfRun& r) { return run("aten::mm.out", {r.in({5, 40}, 41), r.in({40, 7}, 42), r.out({5, 7})}); });
  check([](HalfRun& r) { return run("aten::bmm.out", {r.in({3, 4, 24}, 43), r.in({3, 24, 5}, 44), r.out({3, 4, 5})}); });
  check([](HalfRun& r) {
    return run("aten::addmm.out", {r.in({6}, 45), r.in({3, 20}, 46), r.in({20, 6}, 47), r.keep(integer(1)), r.keep(integer(1)), r.out({3, 6})});
  });
  check([](HalfRun& r) { return run("aten::linear.out", {r.in({2, 3, 32}, 48), r.in({8, 32}, 49), r.in({8}, 50), r.out({2, 3, 8})}); });
}

TEST_P(HalfKernels, MovementAndIndexing) {
  check([](HalfRun& r) { return run("aten::embedding.out", {r.in({10, 6}, 51), r.fixed({4}, ET_DTYPE_INT64, {3, 0, 9, 3}),
                                                        r.keep(integer(-1)), r.keep(boolean(false)), r.keep(boolean(false)), r.out({4, 6})}); });
  check([](HalfRun& r) { return run("aten::permute_copy.out", {r.in({2, 3, 4}, 52), r.keep(int_list({2, 0, 1})), r.out({4, 2, 3})}); });
  check([](HalfRun& r) { return run("aten::view_copy.out", {r.in({2, 6}, 53), r.keep(int_list({3, -1})), r.out({3, 4})}); });
  check([](HalfRun& r) { return run("aten::clone.out", {r.in({5, 5}, 54), r.keep(none()), r.out({5, 5})}); });
  check([](HalfRun& r) {
    return run("aten::cat.out", {r.keep(tensor_list({r.in({2, 3}, 55)->tensor, r.in({1, 3}, 56)->tensor})), r.keep(integer(0)), r.out({3, 3})});
  });
  check([](HalfRun& r) {
    return run("aten::slice_copy.Tensor_out", {r.in({6, 4}, 57), r.keep(integer(0)), r.keep(integer(1)), r.keep(integer(5)),
                                               r.keep(integer(2)), r.out({2, 4})});
  });
  check([](HalfRun& r) { return run("aten::expand_copy.out", {r.in({3, 1}, 58), r.keep(int_list({3, 4})), r.keep(boolean(false)), r.out({3, 4})}); });
  check([](HalfRun& r) {
    r.out({2, 3});
    r.out({2, 3});
    return run("aten::split_with_sizes_copy.out", {r.in({4, 3}, 59), r.keep(int_list({2, 2})), r.keep(integer(0)), r.outs_list()}, false);
  });
}

TEST_P(HalfKernels, DynamicOutputsResizeToTheFloatResult) {
  check([](HalfRun& r) {
    return run("aten::add.out", {r.in({3, 5}, 61), r.in({5}, 62), r.keep(integer(1)), r.out({1, 1}, -1, 15, ET_SHAPE_DYNAMIC_BOUND)});
  });
}

INSTANTIATE_TEST_SUITE_P(Dtypes, HalfKernels, ::testing::Values(ET_DTYPE_FLOAT16, ET_DTYPE_BFLOAT16),
                         [](const auto& info) { return std::string(info.param == ET_DTYPE_FLOAT16 ? "float16" : "bfloat16"); });

// _to_copy between every pair of dtypes: through float, like c10 (int -> half rounds once, double -> half
// rounds to float first), NaN stays NaN, out of range saturates to infinity.
TEST(HalfConversions, ToCopyRoundsLikePyTorch) {
  TT d({6}, ET_DTYPE_FLOAT64), h({6}, ET_DTYPE_FLOAT16), b({6}, ET_DTYPE_BFLOAT16), back({6}, ET_DTYPE_FLOAT64);
  d.set_values({1.0 + 1.0 / 2048, 70000, -4e-8, NAN, 1.0 / 3, -65519.9});
  ASSERT_EQ(run("aten::_to_copy.out", {&d.v, &boolean(false)->v, &none()->v, &h.v}), "");
  EXPECT_EQ(h.flat(0), 1.0);  // the tie 1 + 2^-11 goes to even
  EXPECT_EQ(h.flat(1), INFINITY);
  EXPECT_EQ(h.flat(2), -5.9604644775390625e-08);  // the nearest subnormal, sign kept
  EXPECT_TRUE(std::isnan(h.flat(3)));
  EXPECT_EQ(h.flat(4), 0.333251953125);
  EXPECT_EQ(h.flat(5), -65504);
  ASSERT_EQ(run("aten::_to_copy.out", {&h.v, &boolean(false)->v, &none()->v, &b.v}), "");
  EXPECT_EQ(b.flat(4), 0.333984375);  // float16's 1/3 rounded again to bfloat16
  EXPECT_EQ(b.flat(1), INFINITY);
  ASSERT_EQ(run("aten::_to_copy.out", {&b.v, &boolean(false)->v, &none()->v, &back.v}), "");
  EXPECT_EQ(back.flat(5), -65536);
  TT ints({4}, ET_DTYPE_INT64), hi({4}, ET_DTYPE_FLOAT16), i8({4}, ET_DTYPE_INT8), bools({4}, ET_DTYPE_BOOL);
  ints.set_values({2049, -7, 100000, 0});
  ASSERT_EQ(run("aten::_to_copy.out", {&ints.v, &boolean(false)->v, &none()->v, &hi.v}), "");
  EXPECT_EQ(hi.values(), (std::vector<double>{2048, -7, INFINITY, 0}));
  ASSERT_EQ(run("dim_order_ops::_to_dim_order_copy.out", {&hi.v, &boolean(false)->v, &none()->v, &i8.v}), "");
  EXPECT_EQ(i8.flat(0), 127);  // saturates like convert<int8>
  EXPECT_EQ(i8.flat(1), -7);
  ASSERT_EQ(run("aten::_to_copy.out", {&hi.v, &boolean(false)->v, &none()->v, &bools.v}), "");
  EXPECT_EQ(bools.values(), (std::vector<double>{1, 1, 1, 0}));
}

TEST(HalfConversions, FillAndFullRoundTheScalar) {
  TT h({3}, ET_DTYPE_FLOAT16), self({3}, ET_DTYPE_BFLOAT16), b({3}, ET_DTYPE_BFLOAT16);
  ASSERT_EQ(run("aten::full.out", {&int_list({3})->v, &real(0.1)->v, &h.v}), "");
  EXPECT_EQ(h.flat(2), 0.0999755859375);
  ASSERT_EQ(run("aten::fill.Scalar_out", {&self.v, &real(1e6)->v, &b.v}), "");
  EXPECT_EQ(b.flat(0), 999424);
}

TEST(HalfConversions, SumWithAHalfDtypeArgument) {
  TT x({4, 8}, ET_DTYPE_FLOAT32, 3), out({4}, ET_DTYPE_BFLOAT16), ref({4}, ET_DTYPE_FLOAT32);
  ASSERT_EQ(run("aten::sum.IntList_out", {&x.v, &int_list({1})->v, &boolean(false)->v, &integer(ET_DTYPE_BFLOAT16)->v, &out.v}), "");
  ASSERT_EQ(run("aten::sum.IntList_out", {&x.v, &int_list({1})->v, &boolean(false)->v, &none()->v, &ref.v}), "");
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(out.flat(i), round_to(ET_DTYPE_BFLOAT16, ref.flat(i)));
}

TEST(HalfErrors, OperatorsWithoutHalfSupportNameTheOperatorAndDtype) {
  TT a({3}, ET_DTYPE_FLOAT16), b({3}, ET_DTYPE_FLOAT16), out({3}, ET_DTYPE_FLOAT16);
  EXPECT_THAT(run("aten::bitwise_and.Tensor_out", {&a.v, &b.v, &out.v}),
              AllOf(HasSubstr("aten::bitwise_and.Tensor_out"), HasSubstr("float16")));
  TT bf({3}, ET_DTYPE_BFLOAT16), bout({3}, ET_DTYPE_BFLOAT16);
  EXPECT_THAT(run("aten::bitwise_not.out", {&bf.v, &bout.v}),
              AllOf(HasSubstr("aten::bitwise_not.out"), HasSubstr("bfloat16")));
  // An error of the float32 computation still names the operator.
  TT x({2, 3}, ET_DTYPE_BFLOAT16), y({4, 5}, ET_DTYPE_BFLOAT16), mm({2, 5}, ET_DTYPE_BFLOAT16);
  EXPECT_THAT(run("aten::mm.out", {&x.v, &y.v, &mm.v}), HasSubstr("aten::mm.out"));
}

}  // namespace
