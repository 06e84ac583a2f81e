// etrt::extension::BundledModule: ExecuTorch's BundledModule (extension/module/bundled_module.h) -- a
// Module over a bundled program's (.bpte) program that runs its test cases and checks their outputs.
// Links etrt::bundled_program. Differences: the constructor from memory takes the size too (etrt
// verifies the buffer against it), and throws etrt::Error for bytes that are not a bundled program.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "etrt/bundled_program.h"
#include "etrt/module/module.h"

namespace etrt::extension {

class BundledModule : public Module {
 public:
  // Copies and verifies the bundled program.
  BundledModule(const void* bundled_program, size_t size, std::unique_ptr<EventTracer> event_tracer = nullptr)
      : BundledModule(::etrt::bundled::BundledProgram::load_bytes(bundled_program, size), std::move(event_tracer)) {}

  static Result<std::unique_ptr<BundledModule>> from_file(const std::string& file_path,
                                                          std::unique_ptr<EventTracer> event_tracer = nullptr) {
    try {
      return std::unique_ptr<BundledModule>(
          new BundledModule(::etrt::bundled::BundledProgram::load_file(file_path), std::move(event_tracer)));
    } catch (const ::etrt::Error& error) {
      return Result<std::unique_ptr<BundledModule>>(error_from_status(error.code()), error.what());
    }
  }

  const ::etrt::bundled::BundledProgram& bundled_program() const { return bundled_; }

  using Module::execute;
  // Runs test case `testset_idx` of `method_name` on its inputs.
  Result<std::vector<EValue>> execute(const std::string& method_name, size_t testset_idx) {
    ::etrt::Method* method = loaded_method(method_name);
    if (method == nullptr) return Result<std::vector<EValue>>(Error::InvalidArgument, last_error_message());
    try {
      bundled_.load_inputs(*method, method_name, testset_idx);
    } catch (const ::etrt::Error& error) {
      return Result<std::vector<EValue>>(fail(error_from_status(error.code()), error.what()), error.what());
    }
    return Module::execute(method_name);
  }

  // Checks the outputs of the method's last run against test case `testset_idx`: Error::NotFound (as
  // ExecuTorch's) when one differs, last_error_message() naming each output and by how much.
  Error verify_method_outputs(const std::string& method_name, size_t testset_idx, double rtol = 1e-5,
                              double atol = 1e-8) {
    ::etrt::Method* method = loaded_method(method_name);
    if (method == nullptr) return Error::InvalidArgument;
    try {
      ::etrt::bundled::CaseReport report = bundled_.check_outputs(*method, method_name, testset_idx, rtol, atol);
      if (!report.passed) return fail(Error::NotFound, report.describe());
    } catch (const ::etrt::Error& error) {
      return fail(error_from_status(error.code()), error.what());
    }
    return Error::Ok;
  }

 private:
  BundledModule(::etrt::bundled::BundledProgram bundled, std::unique_ptr<EventTracer> event_tracer)
      : Module(std::make_shared<::etrt::Program>(bundled.program()), std::move(event_tracer)),
        bundled_(std::move(bundled)) {}

  ::etrt::bundled::BundledProgram bundled_;
};

}  // namespace etrt::extension
