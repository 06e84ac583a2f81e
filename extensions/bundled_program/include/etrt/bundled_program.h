// Bundled programs (.bpte): a .pte with test suites -- per method, test cases
// of inputs and expected outputs -- as ExecuTorch's devtools.bundled_program
// writes them. BundledProgram reads and verifies one, hands out its program,
// loads a test case's inputs into a method and checks the method's outputs
// against the expected ones at a tolerance, reporting what differs.
//
// libetrt_bundled_program (static): its headers need no flatbuffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"

namespace etrt::bundled {

// True when `data` carries the bundled-program identifier (BP08 at byte 4).
bool is_bundled_program(const void* data, size_t size);
// The same for a file's first bytes (false when it cannot be read).
bool is_bundled_program_file(const std::string& path);

// One input or expected output of a test case. Tensor data is borrowed from
// the BundledProgram that made it.
struct TestValue {
  int32_t tag = ET_VALUE_NULL;  // ET_VALUE_TENSOR, _INT, _BOOL or _DOUBLE
  int32_t dtype = 0;            // tensors: et_dtype
  std::vector<int64_t> sizes;
  std::vector<uint8_t> dim_order;
  const void* data = nullptr;
  size_t nbytes = 0;
  int64_t as_int = 0;           // INT, BOOL (0 or 1)
  double as_double = 0;
};

struct TestCase {
  std::vector<TestValue> inputs;
  std::vector<TestValue> expected_outputs;
};

struct TestSuite {
  std::string method_name;
  std::vector<TestCase> cases;
};

// How one output compared with its expected value.
struct OutputCheck {
  size_t output = 0;
  bool passed = false;
  std::string problem;           // why it failed ("" when it passed)
  size_t mismatched = 0;         // elements beyond the tolerance
  size_t elements = 0;
  double max_abs_diff = 0;
};

// Compares one value with its expected value: |actual - expected| <= atol +
// rtol * |expected| for every element (NaN equals NaN), dtypes and shapes equal.
OutputCheck compare_value(const TestValue& actual, const TestValue& expected, size_t output, double rtol, double atol);

struct CaseReport {
  std::string method_name;
  size_t case_index = 0;
  bool passed = false;
  std::string error;             // the run itself failed (set_input or execute)
  std::vector<OutputCheck> outputs;
  std::string describe() const;  // one line per failed output, or "... passed"
};

struct VerifyReport {
  double rtol = 0, atol = 0;
  std::vector<CaseReport> cases;
  bool passed() const;
  size_t failed_count() const;
  std::string describe() const;  // a line per case, then a summary line
};

// ExecuTorch's defaults (bundled_program.h's verify_method_outputs).
constexpr double kDefaultRtol = 1e-5;
constexpr double kDefaultAtol = 1e-8;

class BundledProgram {
 public:
  // Read and verify a .bpte; throws etrt::Error naming the file and the
  // problem (a plain .pte is refused with a hint to load it as a program).
  static BundledProgram load_file(const std::string& path);
  static BundledProgram load_bytes(const void* data, size_t size, const std::string& origin = "(bundled program bytes)");

  const ::etrt::Program& program() const { return *program_; }
  // The .pte bytes inside the bundle (live as long as this object).
  const uint8_t* program_data() const { return bytes_->data() + program_offset_; }
  size_t program_size() const { return program_size_; }
  const std::vector<TestSuite>& test_suites() const { return *suites_; }
  // The suite of `method_name`; throws etrt::Error (ET_ERR_NOT_FOUND) naming those there are.
  const TestSuite& suite(const std::string& method_name) const;
  const TestCase& test_case(const std::string& method_name, size_t index) const;

  // Sets the inputs of test case `index` of `method_name` on `method`.
  void load_inputs(::etrt::Method& method, const std::string& method_name, size_t index) const;
  // Compares `method`'s current outputs with the case's expected outputs (compare_value).
  CaseReport check_outputs(const ::etrt::Method& method, const std::string& method_name, size_t index,
                           double rtol = kDefaultRtol, double atol = kDefaultAtol) const;
  // Loads every method that has a suite, runs each case and checks it. A
  // case whose run fails is reported failed with the error.
  VerifyReport verify_all(double rtol = kDefaultRtol, double atol = kDefaultAtol) const;
  // The same for one method's suite, or one case of it.
  VerifyReport verify_method(const std::string& method_name, double rtol = kDefaultRtol, double atol = kDefaultAtol,
                             std::optional<size_t> case_index = std::nullopt) const;

 private:
  BundledProgram() = default;
  void run_cases(const TestSuite& suite, size_t first, size_t last, double rtol, double atol, VerifyReport* report) const;
  std::shared_ptr<const std::vector<uint8_t>> bytes_;  // the test data points into it
  size_t program_offset_ = 0, program_size_ = 0;
  std::shared_ptr<::etrt::Program> program_;
  std::shared_ptr<std::vector<TestSuite>> suites_;
  std::string origin_;
};

}  // namespace etrt::bundled
