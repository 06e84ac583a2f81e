// core/src/program/prim_ops.cpp: the built-in ops' load-time operand checks, and
// et_view's size arithmetic on requested sizes of the run (issue 32 D8).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/src/error.h"
#include "core/src/program/prim_ops.h"

namespace etrt {
namespace {

using ::testing::HasSubstr;

struct TensorValue {
  int64_t sizes[ET_MAX_RANK]{};
  int64_t strides[ET_MAX_RANK]{};
  uint8_t order[ET_MAX_RANK]{};
  std::vector<float> data;
  et_tensor tensor{};
  et_value value{};
  TensorValue(std::vector<int64_t> shape, int32_t dtype = ET_DTYPE_FLOAT32) {
    size_t numel = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      sizes[i] = shape[i];
      order[i] = static_cast<uint8_t>(i);
      numel *= static_cast<size_t>(shape[i]);
    }
    data.assign(numel, 1.0f);
    tensor.struct_size = sizeof tensor;
    tensor.dtype = dtype;
    tensor.rank = static_cast<int32_t>(shape.size());
    tensor.sizes = sizes;
    tensor.strides = strides;
    tensor.dim_order = order;
    tensor.data = data.data();
    tensor.nbytes = tensor.capacity_bytes = numel * sizeof(float);
    value.struct_size = sizeof value;
    value.tag = ET_VALUE_TENSOR;
    value.tensor = &tensor;
  }
};

struct IntListValue {
  std::vector<int64_t> items;
  et_value value{};
  explicit IntListValue(std::vector<int64_t> list) : items(std::move(list)) {
    value.struct_size = sizeof value;
    value.tag = ET_VALUE_INT_LIST;
    value.items = items.data();
    value.count = items.size();
  }
};

et_value scalar(int32_t tag, int64_t i = 0) {
  et_value v{};
  v.struct_size = sizeof v;
  v.tag = tag;
  v.as_int = i;
  return v;
}

constexpr const char* kView = "executorch_prim::et_view.default";

// Runs et_view(self, sizes, out) as a method would, after its load-time check.
std::string view(TensorValue& self, IntListValue& sizes, TensorValue& out) {
  et_value* args[] = {&self.value, &sizes.value, &out.value};
  std::string problem = check_prim_operands(kView, args, 3);
  if (!problem.empty()) return "load: " + problem;
  et_error* error = find_prim_op(kView)(args, 3);
  std::string message = error ? error->message : "";
  delete error;
  return message;
}

TEST(EtView, InfersOneSizeAndAliasesSelf) {
  TensorValue self({2, 12}), out({1, 1});
  IntListValue sizes({-1, 4});
  ASSERT_EQ(view(self, sizes, out), "");
  EXPECT_EQ(out.sizes[0], 6);
  EXPECT_EQ(out.sizes[1], 4);
  EXPECT_EQ(out.strides[0], 4);
  EXPECT_EQ(out.strides[1], 1);
  EXPECT_EQ(out.tensor.nbytes, 96u);
  EXPECT_EQ(out.tensor.data, self.tensor.data);
}

// issue 32 D8: the product of the requested sizes wrapped to self's element count.
TEST(EtView, RefusesSizesWhoseProductWraps) {
  TensorValue self({24}), out({1, 1});
  IntListValue sizes({1084, 68069166323651482});
  EXPECT_THAT(view(self, sizes, out), HasSubstr("size [1084, 68069166323651482]: byte size overflows"));
  EXPECT_EQ(out.tensor.data, out.data.data()) << "out must be left as it was";
  EXPECT_EQ(out.sizes[1], 1);
}

TEST(EtView, RefusesAnInferredSizeBesideSizesThatOverflow) {
  TensorValue self({24}), out({1, 1, 1});
  IntListValue sizes({-1, int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_THAT(view(self, sizes, out), HasSubstr("overflows"));
}

// Nothing to read, but the strides of [0, 2^62, 4] would not fit int64.
TEST(EtView, RefusesAnEmptyViewWhoseStridesOverflow) {
  TensorValue self({0}), out({1, 1, 1});
  IntListValue sizes({0, int64_t{1} << 62, 4});
  EXPECT_THAT(view(self, sizes, out), HasSubstr("sizes overflow 64-bit strides"));
}

TEST(EtView, RefusesANegativeSizeAndAMismatch) {
  TensorValue self({24}), out({1, 1});
  IntListValue negative({-2, -12}), wrong({5, 5}), two_inferred({-1, -1});
  EXPECT_THAT(view(self, negative, out), HasSubstr("negative size -2 at dim 0"));
  EXPECT_THAT(view(self, wrong, out), HasSubstr("does not match the 24 elements of self"));
  EXPECT_THAT(view(self, two_inferred, out), HasSubstr("more than one -1"));
}

TEST(PrimOperands, EtViewNeedsATensorAListAsLongAsOutsRankAndOneDtype) {
  TensorValue self({24}), out({4, 6}), other_dtype({4, 6}, ET_DTYPE_INT32);
  IntListValue three({2, 3, 4});
  et_value number = scalar(ET_VALUE_INT, 4);
  const et_value* int_size[] = {&self.value, &number, &out.value};
  EXPECT_EQ(check_prim_operands(kView, int_size, 3), "operand 1 is an int, expected an int list");
  const et_value* long_list[] = {&self.value, &three.value, &out.value};
  EXPECT_EQ(check_prim_operands(kView, long_list, 3), "the size (operand 1) has 3 items for an out tensor of rank 2");
  IntListValue two({4, 6});
  const et_value* dtypes[] = {&self.value, &two.value, &other_dtype.value};
  EXPECT_THAT(check_prim_operands(kView, dtypes, 3), HasSubstr("a view keeps the dtype"));
  EXPECT_THAT(check_prim_operands(kView, dtypes, 2), HasSubstr("takes 3 operands (tensor, int list, out tensor), the program gives 2"));
  const et_value* fits[] = {&self.value, &two.value, &out.value};
  EXPECT_EQ(check_prim_operands(kView, fits, 3), "");
  out.tensor.is_const = 1;
  EXPECT_EQ(check_prim_operands(kView, fits, 3), "out (operand 2) is a constant: the view would replace the program's data");
}

TEST(PrimOperands, ScalarResultsMustBeDeclaredAsTheirKind) {
  et_value i = scalar(ET_VALUE_INT, 3), d = scalar(ET_VALUE_DOUBLE), b = scalar(ET_VALUE_BOOL);
  TensorValue t({2});
  const et_value* int_sum[] = {&i, &i, &i};
  EXPECT_EQ(check_prim_operands("executorch_prim::add.Scalar", int_sum, 3), "");
  const et_value* mixed_sum[] = {&i, &d, &i};
  EXPECT_EQ(check_prim_operands("executorch_prim::add.Scalar", mixed_sum, 3),
            "operand 2 (out) is an int, but the result is a double");
  EXPECT_EQ(check_prim_operands("executorch_prim::truediv.Scalar", int_sum, 3),
            "operand 2 (out) is an int, but the result is a double");
  const et_value* compare[] = {&i, &d, &b};
  EXPECT_EQ(check_prim_operands("executorch_prim::lt.Scalar", compare, 3), "");
  const et_value* into_tensor[] = {&t.value, &i, &t.value};
  EXPECT_EQ(check_prim_operands("aten::sym_size.int", into_tensor, 3),
            "operand 2 (out) is a float32 tensor of rank 1, but the result is an int");
  const et_value* tensor_operand[] = {&t.value, &i, &i};
  EXPECT_EQ(check_prim_operands("executorch_prim::mul.Scalar", tensor_operand, 3),
            "operand 0 is a float32 tensor of rank 1, expected a number (int, double or bool)");
  const et_value* round[] = {&d, &i};
  EXPECT_EQ(check_prim_operands("executorch_prim::round.Scalar", round, 2), "");
}

TEST(PrimOperands, LocalScalarDenseReadsOnlyDtypesItKnows) {
  TensorValue floats({1}), halves({1}, ET_DTYPE_FLOAT16);
  et_value d = scalar(ET_VALUE_DOUBLE), i = scalar(ET_VALUE_INT);
  const et_value* ok[] = {&floats.value, &d};
  EXPECT_EQ(check_prim_operands("aten::_local_scalar_dense", ok, 2), "");
  const et_value* wrong_out[] = {&floats.value, &i};
  EXPECT_EQ(check_prim_operands("aten::_local_scalar_dense", wrong_out, 2),
            "operand 1 (out) is an int, but the result is a double");
  const et_value* half[] = {&halves.value, &d};
  EXPECT_THAT(check_prim_operands("aten::_local_scalar_dense", half, 2), HasSubstr("whose dtype it cannot read"));
}

TEST(PrimOps, RoundingADoubleBeyondInt64IsAnError) {
  et_value huge = scalar(ET_VALUE_DOUBLE), out = scalar(ET_VALUE_INT);
  huge.as_double = 1e300;
  et_value* args[] = {&huge, &out};
  ASSERT_EQ(check_prim_operands("executorch_prim::ceil.Scalar", args, 2), "");
  et_error* error = find_prim_op("executorch_prim::ceil.Scalar")(args, 2);
  ASSERT_NE(error, nullptr);
  EXPECT_THAT(error->message, HasSubstr("does not fit an int"));
  delete error;
}

}  // namespace
}  // namespace etrt
