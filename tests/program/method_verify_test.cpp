// core/src/program/method_verify.cpp through the C API: instructions whose
// operands a method refuses when it loads (issue 32 D6, D7; issue 31's Move),
// and what a verified Move does at run time. The crafted programs come from
// make_corrupt_programs.py (tests/program/corrupt, listed in cases.json).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "etrt/etrt.h"
#include "program_test_support.h"

namespace {

using ::testing::HasSubstr;
using namespace program_test;

const std::string kCorrupt = ETRT_CORRUPT_DIR;

struct Refusal {
  int32_t status = ET_OK;
  int32_t code = ET_OK;
  std::string message;
};

Refusal load_forward(const std::string& file) {
  Program program = Program::file(kCorrupt + "/" + file);
  EXPECT_EQ(program.status, ET_OK) << program.error;
  Refusal refusal;
  if (program.p == nullptr) return refusal;
  et_method* method = nullptr;
  et_error* error = nullptr;
  refusal.status = et_method_load(program.p, "forward", &method, &error);
  refusal.code = error ? et_error_code(error) : ET_OK;
  refusal.message = etrt_pte::take_message(error);
  et_method_destroy(method);
  return refusal;
}

// issue 32 D6: the free cleared a constant's data, then _local_scalar_dense read NULL.
TEST(MethodVerify, FreeOfAConstantIsRefusedAtLoad) {
  Refusal refusal = load_forward("free_constant.pte");
  EXPECT_EQ(refusal.status, ET_ERR_INVALID_PROGRAM);
  EXPECT_EQ(refusal.code, ET_ERR_INVALID_PROGRAM);
  EXPECT_THAT(refusal.message, HasSubstr(kCorrupt + "/free_constant.pte: method 'forward', instruction 0 (FreeCall): "
                                         "value 20 (a float32 tensor of rank 1) is a constant"));
  expect_process_usable();
}

// issue 32 D7 / issue 31: a 64-item list moved into a 2-item one.
TEST(MethodVerify, MoveOfALongerListIsRefusedAtLoad) {
  Refusal refusal = load_forward("move_longer_list_into_shorter.pte");
  EXPECT_EQ(refusal.status, ET_ERR_INVALID_PROGRAM);
  EXPECT_THAT(refusal.message, HasSubstr("instruction 0 (MoveCall): value 5 (an int list of 64 items) cannot move into "
                                         "value 8 (an int list of 2 items): a move keeps the destination's length"));
  expect_process_usable();
}

// issue 31: after Move A -> B a kernel given B reads A's items, refreshed from A's boxed ints (one of which an
// earlier add.Scalar changed from 0 to 5), not B's own declaration nor A's items as they were at load.
TEST(MethodVerify, AMovedListIsTheSourceList) {
  Program program = Program::file(kCorrupt + "/move_list_alias.pte");
  ASSERT_EQ(program.status, ET_OK) << program.error;
  Method method(program.p, "forward");
  ASSERT_EQ(method.status, ET_OK) << method.error;
  Input a = Input::f32({3, 5}), b = Input::f32({3, 5});
  for (int run = 0; run < 2; ++run) {
    ASSERT_EQ(set_input(method.m, 0, &a.value), "");
    ASSERT_EQ(set_input(method.m, 1, &b.value), "");
    ASSERT_EQ(execute(method.m), "") << "run " << run;
    const et_value* view = et_method_output(method.m, 1);
    ASSERT_NE(view, nullptr);
    ASSERT_EQ(view->tag, ET_VALUE_TENSOR);
    ASSERT_EQ(view->tensor->rank, 2);
    EXPECT_EQ(view->tensor->sizes[0], 5) << "run " << run;
    EXPECT_EQ(view->tensor->sizes[1], 3) << "run " << run;
    EXPECT_EQ(view->tensor->nbytes, 60u) << "a view of input 0's 15 floats";
  }
}

}  // namespace
