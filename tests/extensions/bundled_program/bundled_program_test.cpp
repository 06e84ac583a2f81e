// Bundled programs (extensions/bundled_program) made by ExecuTorch's
// devtools.bundled_program (make_bundled_programs.py): read, run, verified.
#include "etrt/bundled_program.h"
#include "etrt/module/bundled_module.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using etrt::bundled::BundledProgram;
using testing::HasSubstr;

namespace {

const std::string kDir = ETRT_BUNDLED_DIR;

std::vector<uint8_t> read(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

TEST(BundledProgram, ItsTestCasesVerify) {
  BundledProgram bundled = BundledProgram::load_file(kDir + "/linear_add.bpte");
  ASSERT_EQ(bundled.test_suites().size(), 2u);
  EXPECT_EQ(bundled.suite("forward").cases.size(), 2u);
  EXPECT_EQ(bundled.suite("encode").cases.size(), 1u);
  EXPECT_EQ(bundled.test_case("forward", 0).inputs.size(), 2u);
  EXPECT_EQ(bundled.test_case("forward", 0).expected_outputs[0].sizes, (std::vector<int64_t>{2, 3}));

  etrt::bundled::VerifyReport report = bundled.verify_all();
  EXPECT_TRUE(report.passed()) << report.describe();
  EXPECT_EQ(report.cases.size(), 3u);
  EXPECT_THAT(report.describe(), HasSubstr("verification passed: 3 of 3 test cases match"));
}

TEST(BundledProgram, AWrongExpectedOutputIsReported) {
  BundledProgram bundled = BundledProgram::load_file(kDir + "/linear_add_wrong.bpte");
  etrt::bundled::VerifyReport report = bundled.verify_all();
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.failed_count(), 1u);
  // ExecuTorch writes the suites in method-name order: encode 0, forward 0, forward 1.
  ASSERT_EQ(report.cases.size(), 3u);
  EXPECT_TRUE(report.cases[0].passed && report.cases[1].passed);
  const etrt::bundled::CaseReport& failed = report.cases[2];
  EXPECT_EQ(failed.method_name, "forward");
  EXPECT_EQ(failed.case_index, 1u);
  ASSERT_EQ(failed.outputs.size(), 1u);
  EXPECT_EQ(failed.outputs[0].mismatched, 1u);
  EXPECT_EQ(failed.outputs[0].elements, 6u);
  EXPECT_NEAR(failed.outputs[0].max_abs_diff, 0.5, 1e-5);
  std::string text = report.describe();
  EXPECT_THAT(text, HasSubstr("forward test case 1: FAILED: output 0 1 of 6 elements differ beyond rtol=1e-05 atol=1e-08"));
  EXPECT_THAT(text, HasSubstr("first at element 3"));
  EXPECT_THAT(text, HasSubstr("verification FAILED: 2 of 3 test cases match"));

  // The tolerance is the caller's: 0.6 absolute admits the 0.5 difference.
  EXPECT_TRUE(bundled.verify_all(1e-5, 0.6).passed());
}

TEST(BundledProgram, OneCaseThroughItsProgram) {
  BundledProgram bundled = BundledProgram::load_file(kDir + "/linear_add_wrong.bpte");
  etrt::Method method = bundled.program().load_method("forward");
  bundled.load_inputs(method, "forward", 0);
  method.execute();
  EXPECT_TRUE(bundled.check_outputs(method, "forward", 0).passed);
  EXPECT_FALSE(bundled.check_outputs(method, "forward", 1).passed);  // another case's expectations
  bundled.load_inputs(method, "forward", 1);
  method.execute();
  EXPECT_FALSE(bundled.check_outputs(method, "forward", 1).passed);
}

TEST(BundledProgram, ClearErrors) {
  try {
    BundledProgram::load_file(kDir + "/linear_add.pte");
    FAIL() << "a plain program was read as a bundled one";
  } catch (const etrt::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("is a plain program (.pte, identifier ET12), not a bundled program"));
  }
  EXPECT_TRUE(etrt::bundled::is_bundled_program_file(kDir + "/linear_add.bpte"));
  EXPECT_FALSE(etrt::bundled::is_bundled_program_file(kDir + "/linear_add.pte"));
  EXPECT_FALSE(etrt::bundled::is_bundled_program_file(kDir + "/missing.bpte"));

  std::vector<uint8_t> bytes = read(kDir + "/linear_add.bpte");
  try {
    BundledProgram::load_bytes(bytes.data(), bytes.size() / 2, "half.bpte");
    FAIL() << "a truncated bundled program was read";
  } catch (const etrt::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("half.bpte is a corrupt bundled program"));
  }
  EXPECT_THROW(BundledProgram::load_file(kDir + "/missing.bpte"), etrt::Error);

  BundledProgram bundled = BundledProgram::load_bytes(bytes.data(), bytes.size(), "linear_add.bpte");
  try {
    bundled.suite("decode");
    FAIL();
  } catch (const etrt::Error& error) {
    EXPECT_EQ(error.code(), ET_ERR_NOT_FOUND);
    EXPECT_THAT(error.what(), HasSubstr("no test suite for method 'decode' (it has: encode, forward)"));
  }
  EXPECT_THROW(bundled.test_case("forward", 2), etrt::Error);
  etrt::Method encode = bundled.program().load_method("encode");
  EXPECT_THROW(bundled.load_inputs(encode, "forward", 0), etrt::Error);  // two inputs for a method of one
}

}  // namespace

namespace {

using etrt::extension::BundledModule;
using etrt::extension::Error;

TEST(BundledModule, RunsAndVerifiesTestCasesAsExecuTorchs) {
  auto module = BundledModule::from_file(kDir + "/linear_add_wrong.bpte");
  ASSERT_TRUE(module.ok()) << module.message();
  auto outputs = (*module)->execute("forward", 0);
  ASSERT_TRUE(outputs.ok()) << outputs.message();
  EXPECT_EQ(outputs->at(0).toTensor().numel(), 6);
  EXPECT_EQ((*module)->verify_method_outputs("forward", 0), Error::Ok);

  ASSERT_TRUE((*module)->execute("forward", 1).ok());
  EXPECT_EQ((*module)->verify_method_outputs("forward", 1), Error::NotFound);
  EXPECT_THAT((*module)->last_error_message(), HasSubstr("forward test case 1: FAILED: output 0 1 of 6 elements"));
  EXPECT_EQ((*module)->verify_method_outputs("forward", 1, 1e-5, 0.6), Error::Ok);

  auto missing_case = (*module)->execute("forward", 7);
  EXPECT_EQ(missing_case.error(), Error::InvalidArgument);
  EXPECT_THAT(missing_case.message(), HasSubstr("test case 7 of forward is out of range"));
  auto plain = BundledModule::from_file(kDir + "/linear_add.pte");
  EXPECT_FALSE(plain.ok());
  EXPECT_THAT(plain.message(), HasSubstr("is a plain program"));

  // The Module underneath runs the program with inputs of the caller's too.
  std::vector<uint8_t> bytes = read(kDir + "/linear_add.bpte");
  BundledModule from_memory(bytes.data(), bytes.size());
  auto encoded = from_memory.execute("encode", etrt::extension::zeros({2, 4}));
  ASSERT_TRUE(encoded.ok()) << encoded.message();
  EXPECT_EQ(encoded->at(0).toTensor().size(1), 3);
}

}  // namespace
