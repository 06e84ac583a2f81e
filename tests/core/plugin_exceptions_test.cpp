// Exceptions stop at the plugin ABI (the fences of plugin_loader.cpp,
// method.cpp (kernel prepare/release), method_execute.cpp, fenced_backend.cpp and tracing*.cpp): a plugin that throws
// from its entry, its init, a kernel, its backend or its tracer gives an error
// naming the plugin, the call and what(); a plugin that failed to load stays
// failed with the reason (its init is not run again); the process stays usable.
// The plugins are tests/plugins/throwing_plugin.cpp, each behind a manifest
// directory of its own; the tests run in order, each adding what it needs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "etdump_generated.h"
#include "etrt/etrt.hpp"
#include "float_input.h"
#include "test_support.h"

using ::testing::HasSubstr;
using ::testing::Not;
using namespace etrt_test;

namespace {

const std::string kThrowing = ETRT_TEST_THROWING_MANIFEST_DIR;
const std::string kModels = ETRT_TEST_MODELS_DIR;

etrt::Error error_of_load(const std::string& path) {
  try {
    etrt::Runtime::get().load_plugin(path);
  } catch (const etrt::Error& error) {
    return error;
  }
  ADD_FAILURE() << path << " loaded";
  return etrt::Error(ET_OK, "");
}

// Runs `method` once on a zero input; the error, or an error with ET_OK when it ran.
etrt::Error error_of_run(etrt::Program& program, etrt::Method& method) {
  FloatInput input(program, "forward");
  try {
    method.set_input(0, input.tensor);
    method.execute();
  } catch (const etrt::Error& error) {
    return error;
  }
  return etrt::Error(ET_OK, "");
}

std::vector<float> run_relu(float value) {
  etrt::Program program = etrt::Program::load(kModels + "/op_relu/portable.pte");
  etrt::Method method = program.load_method("forward");
  FloatInput input(program, "forward");
  for (float& x : input.data) x = value;
  method.set_input(0, input.tensor);
  method.execute();
  const et_tensor& out = *method.output(0).tensor;
  const auto* f = static_cast<const float*>(out.data);
  return std::vector<float>(f, f + out.nbytes / sizeof(float));
}

TEST(PluginExceptions, AnEntryThatThrowsFailsItsLoadOnceWithTheReason) {
  const std::string manifest = kThrowing + "/entry/test_throws_in_entry.json";
  etrt::Error first = error_of_load(manifest);
  EXPECT_EQ(first.code(), ET_ERR_LOAD_FAILED);
  EXPECT_THAT(first.what(), HasSubstr("et_plugin_entry threw std::runtime_error: entry boom"));
  etrt::PluginInfo plugin = plugin_named("test_throws_in_entry");
  EXPECT_EQ(plugin.state, ET_PLUGIN_FAILED);
  EXPECT_THAT(plugin.failure, HasSubstr("entry boom"));
  // Loading again answers with the recorded failure: the plugin's code does not run again.
  EXPECT_STREQ(error_of_load(manifest).what(), first.what());
}

TEST(PluginExceptions, AnInitThatThrowsFailsItsLoadAndKeepsNothingItRegistered) {
  const std::string manifest = kThrowing + "/init/test_throws_in_init.json";
  etrt::Error first = error_of_load(manifest);
  EXPECT_EQ(first.code(), ET_ERR_LOAD_FAILED);
  EXPECT_THAT(first.what(), HasSubstr("init threw std::logic_error: init boom"));
  etrt::PluginInfo plugin = plugin_named("test_throws_in_init");
  EXPECT_EQ(plugin.state, ET_PLUGIN_FAILED);
  EXPECT_EQ(plugin.load_count, 0u);
  EXPECT_THAT(plugin.failure, HasSubstr("init boom"));
  for (const etrt::RegistryEntry& entry : etrt::Runtime::get().operators())
    EXPECT_NE(entry.plugin, "test_throws_in_init") << entry.name << " stayed registered";
  EXPECT_STREQ(error_of_load(manifest).what(), first.what());
}

TEST(PluginExceptions, ThePluginsThatFailedToLoadLeaveTheProcessUsable) {
  // Both declare relu at priority 300; lazily loading relu skips them (failed) and reaches kernels_optimized.
  etrt::Runtime::get().add_manifest(kThrowing + "/entry");
  etrt::Runtime::get().add_manifest(kThrowing + "/init");
  EXPECT_THAT(run_relu(-2.0f), ::testing::Each(0.0f));
  EXPECT_THAT(run_relu(3.0f), ::testing::Each(3.0f));
}

TEST(PluginExceptions, AKernelThatThrowsFailsTheRunWithANamedError) {
  etrt::Runtime::get().add_manifest(kThrowing + "/run");
  etrt::Program program = etrt::Program::load(kModels + "/op_relu/portable.pte");
  etrt::Method method = program.load_method("forward");
  for (int attempt = 0; attempt < 3; ++attempt) {
    etrt::Error error = error_of_run(program, method);
    EXPECT_EQ(error.code(), ET_ERR_INTERNAL);
    EXPECT_THAT(error.what(), HasSubstr("kernel 'aten::relu.out' of plugin 'test_throws_at_run' threw "
                                        "std::runtime_error: kernel boom"));
    EXPECT_EQ(error.plugin(), "test_throws_at_run");
  }
  etrt::PluginInfo plugin = plugin_named("test_throws_at_run");
  EXPECT_EQ(plugin.state, ET_PLUGIN_LOADED);
  EXPECT_THAT(plugin.warnings, HasSubstr("broke the ABI at run time: kernel 'aten::relu.out'"));
}

TEST(PluginExceptions, AKernelPrepareThatThrowsFailsTheMethodLoadWithANamedError) {
  setenv("ETRT_TEST_THROW_KERNEL", "prepare", 1);
  etrt::Program program = etrt::Program::load(kModels + "/op_relu/portable.pte");
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      program.load_method("forward");
      ADD_FAILURE() << "the method loaded";
    } catch (const etrt::Error& error) {
      EXPECT_EQ(error.code(), ET_ERR_INTERNAL);
      EXPECT_THAT(error.what(), HasSubstr("preparing the kernel failed: kernel 'aten::relu.out' prepare of plugin "
                                          "'test_throws_at_run' threw std::runtime_error: prepare boom"));
      EXPECT_EQ(error.plugin(), "test_throws_at_run");
    }
  }
  unsetenv("ETRT_TEST_THROW_KERNEL");
}

TEST(PluginExceptions, AKernelReleaseThatThrowsIsNotedAndTheMethodStillGoes) {
  setenv("ETRT_TEST_THROW_KERNEL", "release", 1);
  {
    etrt::Program program = etrt::Program::load(kModels + "/op_relu/portable.pte");
    auto method = std::make_unique<etrt::Method>(program.load_method("forward"));
    EXPECT_THAT(error_of_run(program, *method).what(), HasSubstr("kernel boom"));
    ::testing::internal::CaptureStderr();
    method.reset();  // the destructor releases the state: the exception must stop there
    EXPECT_THAT(::testing::internal::GetCapturedStderr(),
                HasSubstr("kernel 'aten::relu.out' release of plugin 'test_throws_at_run' threw std::runtime_error: "
                          "release boom"));
  }
  unsetenv("ETRT_TEST_THROW_KERNEL");
  etrt::Program program = etrt::Program::load(kModels + "/op_relu/portable.pte");
  EXPECT_NO_THROW(program.load_method("forward"));
}

TEST(PluginExceptions, ABackendThatThrowsFromInitFailsTheMethodLoad) {
  setenv("ETRT_TEST_THROW_BACKEND", "init", 1);
  etrt::Program program = etrt::Program::load(kModels + "/mlp/xnnpack.pte");
  try {
    program.load_method("forward");
    ADD_FAILURE() << "the method loaded";
  } catch (const etrt::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("backend 'XnnpackBackend' init of plugin 'test_throws_at_run' threw "
                                        "std::invalid_argument: backend init boom"));
    EXPECT_EQ(error.plugin(), "test_throws_at_run");
  }
  unsetenv("ETRT_TEST_THROW_BACKEND");
}

TEST(PluginExceptions, ABackendThatThrowsFromExecuteFailsTheRun) {
  etrt::Program program = etrt::Program::load(kModels + "/mlp/xnnpack.pte");
  etrt::Method method = program.load_method("forward");
  for (int attempt = 0; attempt < 2; ++attempt) {
    etrt::Error error = error_of_run(program, method);
    EXPECT_EQ(error.code(), ET_ERR_INTERNAL);
    EXPECT_THAT(error.what(), HasSubstr("backend 'XnnpackBackend' execute of plugin 'test_throws_at_run' threw "
                                        "std::out_of_range: backend execute boom"));
  }
}

TEST(PluginExceptions, ATracerThatThrowsFromSessionCreateGivesNoSession) {
  setenv("ETRT_TEST_THROW_TRACER", "create", 1);
  try {
    etrt::TraceSession session("test_throwing_tracer");
    ADD_FAILURE() << "a session was created";
  } catch (const etrt::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("tracer 'test_throwing_tracer' session_create of plugin "
                                        "'test_throws_at_run' threw std::runtime_error: session_create boom"));
  }
  unsetenv("ETRT_TEST_THROW_TRACER");
}

TEST(PluginExceptions, ATracerThatThrowsStopsRecordingNotTheRun) {
  etrt::Program program = etrt::Program::load(kModels + "/op_add/portable.pte");
  etrt::Method method = program.load_method("forward");
  etrt::TraceSession session("test_throwing_tracer");
  method.set_trace_session(&session);
  for (int run = 0; run < 3; ++run) {
    std::vector<std::unique_ptr<FloatInput>> inputs;
    for (size_t i = 0; i < method.num_inputs(); ++i) {
      inputs.push_back(std::make_unique<FloatInput>(program, "forward", i));
      method.set_input(i, inputs.back()->tensor);
    }
    EXPECT_NO_THROW(method.execute());
  }
  try {
    session.result("etdump");
    ADD_FAILURE() << "the session gave a result";
  } catch (const etrt::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("the session stopped recording: tracer 'test_throwing_tracer'"));
    EXPECT_THAT(error.what(), HasSubstr("threw std::runtime_error: tracer boom"));
    EXPECT_EQ(error.plugin(), "test_throws_at_run");
  }
}

// With relu served by the throwing kernel (AKernelThatThrows... added its manifest), every run of this
// method fails at its relu: each run block still holds the failing run's spans.
TEST(PluginExceptions, ATracedRunThatThrowsLeavesNoEmptyRunBlockInTheEtdump) {
  etrt::Program program = etrt::Program::load(kModels + "/mlp/portable.pte");
  etrt::Method method = program.load_method("forward");
  etrt::TraceSession session("etdump", 0, "mlp");
  method.set_trace_session(&session);
  for (int run = 0; run < 2; ++run)
    EXPECT_THAT(error_of_run(program, method).what(), HasSubstr("kernel boom"));
  std::string bytes = session.result("etdump");
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  ASSERT_TRUE(etrt::etdump::VerifySizePrefixedETDumpBuffer(verifier));
  const etrt::etdump::ETDump* dump = etrt::etdump::GetSizePrefixedETDump(bytes.data());
  ASSERT_NE(dump->run_data(), nullptr);
  ASSERT_EQ(dump->run_data()->size(), 2u);
  for (const etrt::etdump::RunData* run : *dump->run_data()) {
    ASSERT_NE(run->events(), nullptr);
    std::vector<std::string> names;
    for (const auto* event : *run->events())
      if (event->profile_event() != nullptr) names.push_back(event->profile_event()->name()->str());
    EXPECT_THAT(names, ::testing::Contains("aten::relu.out")) << "the failing instruction's span is missing";
    EXPECT_THAT(names, ::testing::Contains("Method::execute")) << "the run's own span is missing";
  }
}

}  // namespace
