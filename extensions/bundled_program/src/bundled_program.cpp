// Reading a bundled program (.bpte) with etrt's own schema
// (schema/bundled_program.fbs), running its test cases and checking outputs.
#include "etrt/bundled_program.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "bundled_program_generated.h"
#include "etrt/plugin.hpp"

namespace etrt::bundled {
namespace {

constexpr size_t kIdentifierOffset = 4;

[[noreturn]] void fail(int32_t code, const std::string& message) { throw ::etrt::Error(code, message); }

using ::etrt::plugin::dtype_name;
using ::etrt::plugin::element_size;

const char* tag_name(int32_t tag) {
  switch (tag) {
    case ET_VALUE_TENSOR: return "tensor";
    case ET_VALUE_INT: return "int";
    case ET_VALUE_BOOL: return "bool";
    case ET_VALUE_DOUBLE: return "double";
    case ET_VALUE_NULL: return "None";
    default: return "list or string";
  }
}

std::string shape_text(const int64_t* sizes, size_t rank) {
  std::string out = "[";
  for (size_t i = 0; i < rank; ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ffu;
  if (exponent == 0x1f) {
    uint32_t bits = sign | 0x7f800000u | (mantissa << 13);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  float value = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                              : std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  return sign ? -value : value;
}

// Element `i` of tensor data of `dtype` as a double.
double element(const void* data, int32_t dtype, size_t i) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  switch (dtype) {
    case ET_DTYPE_UINT8: return bytes[i];
    case ET_DTYPE_BOOL: return bytes[i] != 0;
    case ET_DTYPE_INT8: return static_cast<int8_t>(bytes[i]);
    case ET_DTYPE_INT16: { int16_t v; std::memcpy(&v, bytes + 2 * i, 2); return v; }
    case ET_DTYPE_INT32: { int32_t v; std::memcpy(&v, bytes + 4 * i, 4); return v; }
    case ET_DTYPE_INT64: { int64_t v; std::memcpy(&v, bytes + 8 * i, 8); return static_cast<double>(v); }
    case ET_DTYPE_FLOAT32: { float v; std::memcpy(&v, bytes + 4 * i, 4); return v; }
    case ET_DTYPE_FLOAT64: { double v; std::memcpy(&v, bytes + 8 * i, 8); return v; }
    case ET_DTYPE_FLOAT16: { uint16_t v; std::memcpy(&v, bytes + 2 * i, 2); return half_to_float(v); }
    case ET_DTYPE_BFLOAT16: {
      uint16_t v;
      std::memcpy(&v, bytes + 2 * i, 2);
      uint32_t bits = static_cast<uint32_t>(v) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default: return 0;
  }
}

bool close(double actual, double expected, double rtol, double atol) {
  if (std::isnan(actual) || std::isnan(expected)) return std::isnan(actual) && std::isnan(expected);
  if (actual == expected) return true;  // equal infinities too
  return std::fabs(actual - expected) <= atol + rtol * std::fabs(expected);
}

TestValue read_value(const bpte::ValueHolder* holder, const std::string& where) {
  TestValue out;
  if (holder == nullptr || holder->value_type() == bpte::Value::NONE) fail(ET_ERR_INVALID_FILE, where + " has no value");
  switch (holder->value_type()) {
    case bpte::Value::IntValue:
      out.tag = ET_VALUE_INT;
      out.as_int = holder->value_as_IntValue()->value();
      return out;
    case bpte::Value::BoolValue:
      out.tag = ET_VALUE_BOOL;
      out.as_int = holder->value_as_BoolValue()->value() ? 1 : 0;
      return out;
    case bpte::Value::DoubleValue:
      out.tag = ET_VALUE_DOUBLE;
      out.as_double = holder->value_as_DoubleValue()->value();
      return out;
    case bpte::Value::TensorValue: break;
    default: fail(ET_ERR_INVALID_FILE, where + " has a value kind this reader does not know");
  }
  const bpte::TensorValue* tensor = holder->value_as_TensorValue();
  out.tag = ET_VALUE_TENSOR;
  out.dtype = tensor->dtype();
  size_t item = element_size(out.dtype);
  if (item == 0) fail(ET_ERR_NOT_SUPPORTED, where + " is a tensor of dtype " + std::to_string(out.dtype) + ", which etrt does not run");
  size_t rank = tensor->sizes() ? tensor->sizes()->size() : 0;
  if (rank > ET_MAX_RANK) fail(ET_ERR_INVALID_FILE, where + " has " + std::to_string(rank) + " dimensions (at most " + std::to_string(ET_MAX_RANK) + ")");
  size_t numel = 1;
  for (size_t d = 0; d < rank; ++d) {
    int32_t size = tensor->sizes()->Get(static_cast<flatbuffers::uoffset_t>(d));
    if (size < 0) fail(ET_ERR_INVALID_FILE, where + " has a negative size " + std::to_string(size));
    out.sizes.push_back(size);
    if (size != 0 && numel > SIZE_MAX / static_cast<size_t>(size) / item)
      fail(ET_ERR_INVALID_FILE, where + " has a shape whose byte count overflows");
    numel *= static_cast<size_t>(size);
  }
  size_t have = tensor->data() ? tensor->data()->size() : 0;
  out.nbytes = numel * item;
  if (have != out.nbytes)
    fail(ET_ERR_INVALID_FILE, where + " holds " + std::to_string(have) + " bytes for a " + dtype_name(out.dtype) + " tensor of shape " +
                                  shape_text(out.sizes.data(), rank) + " (" + std::to_string(out.nbytes) + " bytes)");
  out.data = tensor->data() ? tensor->data()->data() : nullptr;
  if (tensor->dim_order() && tensor->dim_order()->size() > 0) {
    if (tensor->dim_order()->size() != rank) fail(ET_ERR_INVALID_FILE, where + "'s dim_order does not match its rank");
    std::vector<bool> seen(rank, false);
    for (uint8_t d : *tensor->dim_order()) {
      if (d >= rank || seen[d]) fail(ET_ERR_INVALID_FILE, where + "'s dim_order is not a permutation of its dimensions");
      seen[d] = true;
      out.dim_order.push_back(d);
    }
  } else {
    for (size_t d = 0; d < rank; ++d) out.dim_order.push_back(static_cast<uint8_t>(d));
  }
  return out;
}

std::vector<TestValue> read_values(const flatbuffers::Vector<flatbuffers::Offset<bpte::ValueHolder>>* values,
                                   const std::string& where) {
  std::vector<TestValue> out;
  if (values == nullptr) return out;
  for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i)
    out.push_back(read_value(values->Get(i), where + " " + std::to_string(i)));
  return out;
}

// A method's output as a TestValue (borrowing its data).
TestValue from_output(const et_value& value) {
  TestValue out;
  out.tag = value.tag;
  out.as_int = value.as_int;
  out.as_double = value.as_double;
  if (value.tag == ET_VALUE_TENSOR && value.tensor != nullptr) {
    const et_tensor& t = *value.tensor;
    out.dtype = t.dtype;
    out.sizes.assign(t.sizes, t.sizes + t.rank);
    out.dim_order.assign(t.dim_order, t.dim_order + t.rank);
    out.data = t.data;
    out.nbytes = t.nbytes;
  }
  return out;
}

}  // namespace

OutputCheck compare_value(const TestValue& actual, const TestValue& expected, size_t output, double rtol, double atol) {
  OutputCheck check;
  check.output = output;
  if (actual.tag != expected.tag) {
    check.problem = std::string("is a ") + tag_name(actual.tag) + ", expected a " + tag_name(expected.tag);
    return check;
  }
  if (expected.tag != ET_VALUE_TENSOR) {
    double got = expected.tag == ET_VALUE_DOUBLE ? actual.as_double : static_cast<double>(actual.as_int);
    double want = expected.tag == ET_VALUE_DOUBLE ? expected.as_double : static_cast<double>(expected.as_int);
    check.elements = 1;
    check.max_abs_diff = std::fabs(got - want);
    check.passed = close(got, want, rtol, atol);
    if (!check.passed) {
      check.mismatched = 1;
      std::ostringstream text;
      text << "is " << got << ", expected " << want;
      check.problem = text.str();
    }
    return check;
  }
  if (actual.dtype != expected.dtype) {
    check.problem = std::string("is ") + dtype_name(actual.dtype) + ", expected " + dtype_name(expected.dtype);
    return check;
  }
  if (actual.sizes != expected.sizes) {
    check.problem = "has shape " + shape_text(actual.sizes.data(), actual.sizes.size()) + ", expected " +
                    shape_text(expected.sizes.data(), expected.sizes.size());
    return check;
  }
  check.elements = expected.nbytes / element_size(expected.dtype);
  if (actual.nbytes < expected.nbytes) {
    check.problem = "holds " + std::to_string(actual.nbytes) + " bytes, expected " + std::to_string(expected.nbytes);
    return check;
  }
  size_t first = 0;
  double first_got = 0, first_want = 0;
  for (size_t i = 0; i < check.elements; ++i) {
    double got = element(actual.data, actual.dtype, i), want = element(expected.data, expected.dtype, i);
    double diff = std::fabs(got - want);
    if (!std::isnan(diff) && diff > check.max_abs_diff) check.max_abs_diff = diff;
    if (!close(got, want, rtol, atol) && check.mismatched++ == 0) first = i, first_got = got, first_want = want;
  }
  check.passed = check.mismatched == 0;
  if (!check.passed) {
    std::ostringstream text;
    text << check.mismatched << " of " << check.elements << " elements differ beyond rtol=" << rtol << " atol=" << atol
         << " (max |diff| " << check.max_abs_diff << "; first at element " << first << ": got " << first_got
         << ", expected " << first_want << ")";
    check.problem = text.str();
  }
  return check;
}

bool is_bundled_program(const void* data, size_t size) {
  return data != nullptr && size >= kIdentifierOffset + 4 &&
         std::memcmp(static_cast<const uint8_t*>(data) + kIdentifierOffset, bpte::BundledProgramIdentifier(), 4) == 0;
}

bool is_bundled_program_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char head[8] = {};
  return file.read(head, sizeof head) && is_bundled_program(head, sizeof head);
}

BundledProgram BundledProgram::load_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(ET_ERR_NOT_FOUND, "cannot open bundled program '" + path + "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) fail(ET_ERR_INVALID_FILE, "cannot read bundled program '" + path + "'");
  return load_bytes(bytes.data(), bytes.size(), path);
}

BundledProgram BundledProgram::load_bytes(const void* data, size_t size, const std::string& origin) {
  if (data == nullptr && size > 0) fail(ET_ERR_INVALID_ARGUMENT, "bundled program bytes are null");
  const auto* head = static_cast<const uint8_t*>(data);
  if (!is_bundled_program(data, size)) {
    if (size >= 8 && std::memcmp(head + kIdentifierOffset, "ET12", 4) == 0)
      fail(ET_ERR_INVALID_FILE, origin + " is a plain program (.pte, identifier ET12), not a bundled program "
                                          "(.bpte, identifier BP08): load it as a program");
    fail(ET_ERR_INVALID_FILE, origin + " is not a bundled program (no BP08 identifier at byte 4)");
  }
  BundledProgram out;
  out.origin_ = origin;
  auto bytes = std::make_shared<std::vector<uint8_t>>(head, head + size);
  flatbuffers::Verifier verifier(bytes->data(), bytes->size());
  if (!bpte::VerifyBundledProgramBuffer(verifier))
    fail(ET_ERR_INVALID_FILE, origin + " is a corrupt bundled program (its flatbuffer fails verification)");
  const bpte::BundledProgram* root = bpte::GetBundledProgram(bytes->data());
  if (root->program() == nullptr || root->program()->size() == 0)
    fail(ET_ERR_INVALID_FILE, origin + " is a bundled program without a program");
  out.program_offset_ = static_cast<size_t>(root->program()->data() - bytes->data());
  out.program_size_ = root->program()->size();
  out.program_ = std::make_shared<::etrt::Program>(::etrt::Program::load_bytes(
      root->program()->data(), root->program()->size(), origin + " (its program)"));

  out.suites_ = std::make_shared<std::vector<TestSuite>>();
  std::vector<std::string> methods = out.program_->method_names();
  if (root->test_suites() != nullptr) {
    for (const bpte::TestSuite* suite : *root->test_suites()) {
      TestSuite read;
      read.method_name = suite->method_name() ? suite->method_name()->str() : "";
      if (std::find(methods.begin(), methods.end(), read.method_name) == methods.end())
        fail(ET_ERR_INVALID_FILE, origin + " has a test suite for '" + read.method_name + "', which its program does not have");
      if (suite->test_cases() != nullptr) {
        for (flatbuffers::uoffset_t i = 0; i < suite->test_cases()->size(); ++i) {
          const bpte::TestCase* test_case = suite->test_cases()->Get(i);
          std::string where = read.method_name + " test case " + std::to_string(i);
          read.cases.push_back({read_values(test_case->inputs(), where + " input"),
                                read_values(test_case->expected_outputs(), where + " expected output")});
        }
      }
      out.suites_->push_back(std::move(read));
    }
  }
  out.bytes_ = std::move(bytes);
  return out;
}

const TestSuite& BundledProgram::suite(const std::string& method_name) const {
  std::string known;
  for (const TestSuite& suite : *suites_) {
    if (suite.method_name == method_name) return suite;
    known += (known.empty() ? "" : ", ") + suite.method_name;
  }
  fail(ET_ERR_NOT_FOUND, origin_ + " has no test suite for method '" + method_name + "' (it has: " +
                             (known.empty() ? "none" : known) + ")");
}

const TestCase& BundledProgram::test_case(const std::string& method_name, size_t index) const {
  const TestSuite& found = suite(method_name);
  if (index >= found.cases.size())
    fail(ET_ERR_INVALID_ARGUMENT, "test case " + std::to_string(index) + " of " + method_name + " is out of range (" +
                                      std::to_string(found.cases.size()) + " cases)");
  return found.cases[index];
}

void BundledProgram::load_inputs(::etrt::Method& method, const std::string& method_name, size_t index) const {
  const TestCase& chosen = test_case(method_name, index);
  if (chosen.inputs.size() != method.num_inputs())
    fail(ET_ERR_INVALID_ARGUMENT, method_name + " test case " + std::to_string(index) + " has " +
                                      std::to_string(chosen.inputs.size()) + " inputs; the method takes " +
                                      std::to_string(method.num_inputs()));
  for (size_t i = 0; i < chosen.inputs.size(); ++i) {
    const TestValue& input = chosen.inputs[i];
    et_value value{};
    value.struct_size = sizeof value;
    value.tag = input.tag;
    value.as_int = input.as_int;
    value.as_double = input.as_double;
    et_tensor tensor{};
    std::vector<int64_t> strides(input.sizes.size(), 1);
    if (input.tag == ET_VALUE_TENSOR) {
      int64_t step = 1;
      for (size_t d = input.dim_order.size(); d-- > 0;) {
        strides[input.dim_order[d]] = step;
        step *= input.sizes[input.dim_order[d]];
      }
      tensor.struct_size = sizeof tensor;
      tensor.dtype = input.dtype;
      tensor.rank = static_cast<int32_t>(input.sizes.size());
      tensor.sizes = input.sizes.data();
      tensor.dim_order = input.dim_order.data();
      tensor.strides = strides.data();
      tensor.data = const_cast<void*>(input.data);  // the method only reads its inputs
      tensor.nbytes = input.nbytes;
      tensor.capacity_bytes = input.nbytes;
      tensor.dynamism = ET_SHAPE_STATIC;
      tensor.is_const = 0;
      value.tensor = &tensor;
    }
    method.set_input(i, value);
  }
}

CaseReport BundledProgram::check_outputs(const ::etrt::Method& method, const std::string& method_name, size_t index,
                                         double rtol, double atol) const {
  const TestCase& chosen = test_case(method_name, index);
  CaseReport report;
  report.method_name = method_name;
  report.case_index = index;
  if (chosen.expected_outputs.size() != method.num_outputs()) {
    report.error = "the test case expects " + std::to_string(chosen.expected_outputs.size()) + " outputs; the method has " +
                   std::to_string(method.num_outputs());
    return report;
  }
  report.passed = true;
  for (size_t i = 0; i < chosen.expected_outputs.size(); ++i) {
    report.outputs.push_back(compare_value(from_output(method.output(i)), chosen.expected_outputs[i], i, rtol, atol));
    report.passed = report.passed && report.outputs.back().passed;
  }
  return report;
}

VerifyReport BundledProgram::verify_all(double rtol, double atol) const {
  VerifyReport report;
  report.rtol = rtol;
  report.atol = atol;
  for (const TestSuite& suite : *suites_) run_cases(suite, 0, suite.cases.size(), rtol, atol, &report);
  return report;
}

VerifyReport BundledProgram::verify_method(const std::string& method_name, double rtol, double atol,
                                           std::optional<size_t> case_index) const {
  const TestSuite& chosen = suite(method_name);
  if (case_index) test_case(method_name, *case_index);  // throws when out of range
  VerifyReport report;
  report.rtol = rtol;
  report.atol = atol;
  run_cases(chosen, case_index.value_or(0), case_index ? *case_index + 1 : chosen.cases.size(), rtol, atol, &report);
  return report;
}

void BundledProgram::run_cases(const TestSuite& suite, size_t first, size_t last, double rtol, double atol,
                               VerifyReport* report) const {
  std::optional<::etrt::Method> method;
  std::string load_error;
  try {
    method.emplace(program_->load_method(suite.method_name));
  } catch (const ::etrt::Error& error) {
    load_error = std::string("loading the method failed: ") + error.what();
  }
  for (size_t i = first; i < last; ++i) {
    if (!method) {
      report->cases.push_back({suite.method_name, i, false, load_error, {}});
      continue;
    }
    try {
      load_inputs(*method, suite.method_name, i);
      method->execute();
      report->cases.push_back(check_outputs(*method, suite.method_name, i, rtol, atol));
    } catch (const ::etrt::Error& error) {
      report->cases.push_back({suite.method_name, i, false, error.what(), {}});
    }
  }
}

std::string CaseReport::describe() const {
  std::string head = method_name + " test case " + std::to_string(case_index);
  if (!error.empty()) return head + ": FAILED: " + error;
  if (passed) return head + ": passed (" + std::to_string(outputs.size()) + " outputs)";
  std::string out;
  for (const OutputCheck& check : outputs)
    if (!check.passed) out += (out.empty() ? "" : "\n") + head + ": FAILED: output " + std::to_string(check.output) + " " + check.problem;
  return out;
}

bool VerifyReport::passed() const { return failed_count() == 0; }

size_t VerifyReport::failed_count() const {
  size_t failed = 0;
  for (const CaseReport& c : cases) failed += c.passed ? 0 : 1;
  return failed;
}

std::string VerifyReport::describe() const {
  std::string out;
  for (const CaseReport& c : cases) out += c.describe() + "\n";
  std::ostringstream summary;
  summary << (passed() ? "verification passed: " : "verification FAILED: ") << cases.size() - failed_count() << " of "
          << cases.size() << " test cases match (rtol=" << rtol << ", atol=" << atol << ")";
  return out + summary.str();
}

}  // namespace etrt::bundled
