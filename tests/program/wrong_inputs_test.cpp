// Wrong inputs to good programs: wrong dtype, rank, shape, index, data or
// method name is a clear error naming the method and input, never a crash, and
// the method still runs with good inputs afterwards.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "etrt/etrt.h"
#include "program_test_support.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace program_test;

class WrongInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    add_ = std::make_unique<Program>(Program::file(model("op_add")));
    ASSERT_EQ(add_->status, ET_OK) << add_->error;
    std::vector<std::string> missing = missing_kernels(add_->p);
    if (!missing.empty()) GTEST_SKIP() << "no plugin provides " << ::testing::PrintToString(missing);
  }
  std::unique_ptr<Program> add_;
};

TEST_F(WrongInputs, OpAddForward) {
  Method method(add_->p, "forward");
  ASSERT_EQ(method.status, ET_OK) << method.error;
  ASSERT_EQ(et_method_input_count(method.m), 2u);
  int32_t code = 0;

  // Executing before any input is set.
  EXPECT_THAT(execute(method.m, &code), HasSubstr("method 'forward': input 0 was not set"));
  EXPECT_EQ(code, ET_ERR_INVALID_STATE);

  Input i32(ET_DTYPE_INT32, {3, 5}, 4);
  EXPECT_THAT(set_input(method.m, 0, &i32.value, &code), HasSubstr("input 0: expected dtype float32, got int32"));
  EXPECT_EQ(code, ET_ERR_INVALID_ARGUMENT);
  Input f64(ET_DTYPE_FLOAT64, {3, 5}, 8);
  EXPECT_THAT(set_input(method.m, 1, &f64.value), HasSubstr("input 1: expected dtype float32, got float64"));

  Input rank1 = Input::f32({15});
  EXPECT_THAT(set_input(method.m, 0, &rank1.value), HasSubstr("input 0: expected rank 2 [3, 5], got rank 1 [15]"));
  Input rank3 = Input::f32({1, 3, 5});
  EXPECT_THAT(set_input(method.m, 1, &rank3.value), HasSubstr("expected rank 2 [3, 5], got rank 3 [1, 3, 5]"));

  Input transposed = Input::f32({5, 3});
  EXPECT_THAT(set_input(method.m, 0, &transposed.value),
              HasSubstr("input 0: shape [5, 3] does not fit the program's static shape [3, 5]"));
  Input bigger = Input::f32({3, 6});
  EXPECT_THAT(set_input(method.m, 0, &bigger.value), HasSubstr("shape [3, 6] does not fit the program's static shape [3, 5]"));
  Input negative = Input::f32({3, -5});
  EXPECT_THAT(set_input(method.m, 0, &negative.value), HasSubstr("input 0: negative size in [3, -5]"));

  // Input count: index out of range.
  Input good_a = Input::f32({3, 5});
  EXPECT_THAT(set_input(method.m, 2, &good_a.value, &code), HasSubstr("input 2: out of range (the method has 2 inputs)"));
  EXPECT_EQ(code, ET_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(set_input(method.m, SIZE_MAX, &good_a.value), HasSubstr("out of range (the method has 2 inputs)"));

  // Null data, null value, not a tensor.
  Input null_data = Input::f32({3, 5});
  null_data.tensor.data = nullptr;
  EXPECT_THAT(set_input(method.m, 0, &null_data.value), HasSubstr("input 0: tensor has no data"));
  EXPECT_THAT(set_input(method.m, 0, nullptr, &code), HasSubstr("method or value is null"));
  EXPECT_EQ(code, ET_ERR_INVALID_ARGUMENT);
  et_value scalar{};
  scalar.struct_size = sizeof scalar;
  scalar.tag = ET_VALUE_INT;
  scalar.as_int = 1;
  EXPECT_THAT(set_input(method.m, 0, &scalar), HasSubstr("input 0: expected a tensor"));
  et_value tensor_without_tensor{};
  tensor_without_tensor.struct_size = sizeof tensor_without_tensor;
  tensor_without_tensor.tag = ET_VALUE_TENSOR;
  EXPECT_THAT(set_input(method.m, 0, &tensor_without_tensor), HasSubstr("input 0: expected a tensor"));

  // Strided data the method cannot take.
  Input strided = Input::f32({3, 5});
  strided.strides = {1, 3};  // column-major
  strided.tensor.strides = strided.strides.data();
  EXPECT_THAT(set_input(method.m, 0, &strided.value), HasSubstr("data must be dense in the input's dim order"));

  // Only one input given: still not runnable.
  ASSERT_EQ(set_input(method.m, 0, &good_a.value), "");
  EXPECT_THAT(execute(method.m), HasSubstr("input 1 was not set"));

  // After all of that the method still works.
  Input good_b = Input::f32({3, 5});
  for (int i = 0; i < 15; ++i) {
    good_a.floats()[i] = static_cast<float>(i);
    good_b.floats()[i] = 100.0f * static_cast<float>(i);
  }
  ASSERT_EQ(set_input(method.m, 0, &good_a.value), "");
  ASSERT_EQ(set_input(method.m, 1, &good_b.value), "");
  ASSERT_EQ(execute(method.m), "");
  const et_value* out = et_method_output(method.m, 0);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->tag, ET_VALUE_TENSOR);
  ASSERT_EQ(out->tensor->nbytes, 60u);
  const float* result = static_cast<const float*>(out->tensor->data);
  for (int i = 0; i < 15; ++i) EXPECT_FLOAT_EQ(result[i], 101.0f * static_cast<float>(i)) << i;
  EXPECT_EQ(et_method_output(method.m, 1), nullptr);
}

TEST_F(WrongInputs, OpAddBroadcastAndRank0) {
  Method broadcast(add_->p, "broadcast");
  ASSERT_EQ(broadcast.status, ET_OK) << broadcast.error;
  Input b_wide = Input::f32({3, 4});
  EXPECT_THAT(set_input(broadcast.m, 1, &b_wide.value),
              HasSubstr("method 'broadcast', input 1: shape [3, 4] does not fit the program's static shape [3, 1]"));
  Input a_rank2 = Input::f32({3, 4});
  EXPECT_THAT(set_input(broadcast.m, 0, &a_rank2.value), HasSubstr("expected rank 3 [2, 3, 4], got rank 2 [3, 4]"));

  Method rank0(add_->p, "rank0");
  ASSERT_EQ(rank0.status, ET_OK) << rank0.error;
  Input one = Input::f32({1});
  EXPECT_THAT(set_input(rank0.m, 0, &one.value), HasSubstr("method 'rank0', input 0: expected rank 0 [], got rank 1 [1]"));
  Input i64(ET_DTYPE_INT64, {}, 8);
  EXPECT_THAT(set_input(rank0.m, 1, &i64.value), HasSubstr("expected dtype float32, got int64"));
  Input scalar_a = Input::f32({}), scalar_b = Input::f32({});
  scalar_a.floats()[0] = 2.5f;
  scalar_b.floats()[0] = 4.0f;
  ASSERT_EQ(set_input(rank0.m, 0, &scalar_a.value), "");
  EXPECT_THAT(execute(rank0.m), HasSubstr("input 1 was not set"));
  ASSERT_EQ(set_input(rank0.m, 1, &scalar_b.value), "");
  ASSERT_EQ(execute(rank0.m), "");
  EXPECT_FLOAT_EQ(*static_cast<const float*>(et_method_output(rank0.m, 0)->tensor->data), 6.5f);
}

TEST_F(WrongInputs, MethodNamesAndNullArguments) {
  Method nope(add_->p, "no_such_method");
  EXPECT_NE(nope.status, ET_OK);
  EXPECT_THAT(nope.error, HasSubstr("no method named 'no_such_method' (methods: "));
  EXPECT_THAT(nope.error, HasSubstr("op_add/portable.pte"));
  EXPECT_EQ(et_method_load(nullptr, "forward", nullptr, nullptr), ET_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(et_method_set_input(nullptr, 0, nullptr, nullptr), ET_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(et_method_execute(nullptr, nullptr), ET_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(et_method_output(nullptr, 0), nullptr);
  et_value_info info{};
  info.struct_size = sizeof info;
  et_error* e = nullptr;
  EXPECT_NE(et_program_io_info(add_->p, "forward", 0, 2, &info, &e), ET_OK);
  EXPECT_THAT(etrt_pte::take_message(e), HasSubstr("input 2 out of range"));
}

// ExecuTorch's exporter plans graph inputs and outputs into buffer 1 by default.
TEST_F(WrongInputs, IoInfoReportsPlacementAndAcceptsTheShorterStruct) {
  et_value_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(et_program_io_info(add_->p, "forward", 0, 0, &info, nullptr), ET_OK);
  EXPECT_EQ(info.memory_id, 1);
  ASSERT_EQ(et_program_io_info(add_->p, "forward", 1, 0, &info, nullptr), ET_OK);
  EXPECT_EQ(info.memory_id, 1);

  // A caller built before memory_id existed: everything else is filled, nothing past its struct is written.
  struct { et_value_info info; } guarded{};
  std::memset(&guarded.info, 0xAB, sizeof guarded.info);
  guarded.info.struct_size = offsetof(et_value_info, memory_id);
  ASSERT_EQ(et_program_io_info(add_->p, "forward", 0, 0, &guarded.info, nullptr), ET_OK);
  EXPECT_EQ(guarded.info.struct_size, offsetof(et_value_info, memory_id));
  EXPECT_EQ(guarded.info.tag, ET_VALUE_TENSOR);
  EXPECT_EQ(guarded.info.dtype, ET_DTYPE_FLOAT32);
  int32_t untouched;
  std::memset(&untouched, 0xAB, sizeof untouched);
  EXPECT_EQ(guarded.info.memory_id, untouched);

  info.struct_size = offsetof(et_value_info, nbytes);
  et_error* e = nullptr;
  EXPECT_EQ(et_program_io_info(add_->p, "forward", 0, 0, &info, &e), ET_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(etrt_pte::take_message(e), HasSubstr("et_value_info is null or too small"));
}

TEST(WrongInputsDynamic, DynamicMlpBound) {
  Program program = Program::file(model("dynamic_mlp"));
  ASSERT_EQ(program.status, ET_OK) << program.error;
  std::vector<std::string> missing = missing_kernels(program.p);
  if (!missing.empty()) GTEST_SKIP() << "dynamic_mlp needs kernels no plugin provides: " << ::testing::PrintToString(missing);
  Method method(program.p, "forward");
  ASSERT_EQ(method.status, ET_OK) << method.error;

  EXPECT_THAT(execute(method.m), HasSubstr("input 0 was not set"));
  Input too_big = Input::f32({17, 16});
  EXPECT_THAT(set_input(method.m, 0, &too_big.value),
              HasSubstr("input 0: shape [17, 16] does not fit the program's bound [16, 16]"));
  Input too_big_rank = Input::f32({17, 16, 1});
  EXPECT_THAT(set_input(method.m, 0, &too_big_rank.value), HasSubstr("expected rank 2 [16, 16], got rank 3"));
  Input wrong_dtype(ET_DTYPE_FLOAT64, {4, 16}, 8);
  EXPECT_THAT(set_input(method.m, 0, &wrong_dtype.value), HasSubstr("expected dtype float32, got float64"));
  Input null_data = Input::f32({4, 16});
  null_data.tensor.data = nullptr;
  EXPECT_THAT(set_input(method.m, 0, &null_data.value), HasSubstr("tensor has no data"));
  EXPECT_THAT(set_input(method.m, 1, &null_data.value), HasSubstr("out of range (the method has 1 inputs)"));

  // Within the bound: runs, and the output takes the batch size.
  for (int64_t batch : {5, 16, 1}) {
    Input x = Input::f32({batch, 16});
    ASSERT_EQ(set_input(method.m, 0, &x.value), "") << batch;
    ASSERT_EQ(execute(method.m), "") << batch;
    const et_value* out = et_method_output(method.m, 0);
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(out->tensor->rank, 2);
    EXPECT_EQ(out->tensor->sizes[0], batch);
    EXPECT_EQ(out->tensor->sizes[1], 8);
  }
}

TEST(WrongInputsDynamic, DynamicMlpStaticDimensionChanged) {
  // [4, 15] and [1, 256] fit the input's byte capacity but not the program:
  // dim 1 is 16 in every shape the program accepts. Rejected at set_input or
  // at execute -- never a crash, never a read past the input.
  Program program = Program::file(model("dynamic_mlp"));
  ASSERT_EQ(program.status, ET_OK) << program.error;
  std::vector<std::string> missing = missing_kernels(program.p);
  if (!missing.empty()) GTEST_SKIP() << "dynamic_mlp needs kernels no plugin provides: " << ::testing::PrintToString(missing);
  Method method(program.p, "forward");
  ASSERT_EQ(method.status, ET_OK) << method.error;
  for (std::vector<int64_t> shape : {std::vector<int64_t>{4, 15}, std::vector<int64_t>{1, 256}, std::vector<int64_t>{0, 16}}) {
    Input x = Input::f32(shape);
    std::string message = set_input(method.m, 0, &x.value);
    if (message.empty()) message = execute(method.m);
    std::printf("[ dynamic_mlp ] input shape %s: %s\n", ::testing::PrintToString(shape).c_str(),
                message.empty() ? "accepted and ran" : message.c_str());
    if (shape[0] != 0) {
      EXPECT_NE(message, "") << ::testing::PrintToString(shape) << " was accepted";
    }
  }
}

}  // namespace
