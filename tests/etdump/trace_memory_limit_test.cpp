// The etdump tracer's memory limit (ETRT_MAX_TRACE_MEMORY): a session past it
// stops recording, says so when a result is fetched, and leaves the runs alone;
// a debug buffer larger than the limit is refused when the session opens. The
// tracer reads the setting through the host each time a session opens.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "float_input.h"

using ::testing::HasSubstr;

namespace {

const std::string kPlain = std::string(ETRT_TRACING_MODELS) + "/plain.pte";

class TraceMemoryLimit : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("ETRT_MAX_TRACE_MEMORY"); }
};

std::vector<float> output_of(etrt::Method& method) {
  const et_tensor& out = *method.output(0).tensor;
  const auto* f = static_cast<const float*>(out.data);
  return std::vector<float>(f, f + out.nbytes / sizeof(float));
}

// Runs `method` `runs` times on `input`; every output must equal `expected`.
void run_and_compare(etrt::Method& method, et_tensor& input, int runs, const std::vector<float>& expected) {
  for (int run = 0; run < runs; ++run) {
    method.set_input(0, input);
    method.execute();
    ASSERT_EQ(output_of(method), expected) << "run " << run;
  }
}

// The count of events in "... stopped recording after N events ...".
long recorded_events(const std::string& message) {
  std::smatch match;
  if (!std::regex_search(message, match, std::regex("after ([0-9]+) events"))) return -1;
  return std::stol(match[1]);
}

// The error a fetch of `what` fails with ("" when it succeeds).
etrt::Error fetch_error(const etrt::TraceSession& session, const std::string& what) {
  try {
    session.result(what);
  } catch (const etrt::Error& error) {
    return error;
  }
  return etrt::Error(ET_OK, "");
}

TEST_F(TraceMemoryLimit, ASessionPastItsLimitStopsRecordingSaysSoAndLeavesTheRunsAlone) {
  etrt::Program program = etrt::Program::load(kPlain);
  etrt_test::FloatInput input(program, "forward");
  for (size_t i = 0; i < input.data.size(); ++i) input.data[i] = 0.01f * static_cast<float>(i % 89) - 0.4f;
  etrt::Method untraced = program.load_method("forward");
  untraced.set_input(0, input.tensor);
  untraced.execute();
  const std::vector<float> expected = output_of(untraced);

  // 1 MiB: a little more than a session holds when it opens, so a few thousand events fill it.
  setenv("ETRT_MAX_TRACE_MEMORY", "1M", 1);
  etrt::TraceSession limited("etdump", 0, "limited");
  etrt::Method method = program.load_method("forward");
  method.set_trace_session(&limited);
  run_and_compare(method, input.tensor, 3000, expected);
  for (const char* what : {"etdump", "chrome_trace", "operator_summary"}) {
    etrt::Error error = fetch_error(limited, what);
    EXPECT_EQ(error.code(), ET_ERR_OUT_OF_MEMORY) << what;
    EXPECT_THAT(error.what(), HasSubstr("1 MiB a tracing session may (ETRT_MAX_TRACE_MEMORY)")) << what;
  }
  const long recorded = recorded_events(fetch_error(limited, "etdump").what());
  ASSERT_GT(recorded, 0);
  // 3,000 more runs add nothing.
  run_and_compare(method, input.tensor, 3000, expected);
  EXPECT_EQ(recorded_events(fetch_error(limited, "etdump").what()), recorded);

  // The same 6,000 runs with the default limit record every event, and many more than the limited session.
  unsetenv("ETRT_MAX_TRACE_MEMORY");
  etrt::TraceSession unlimited("etdump", 0, "unlimited");
  method.set_trace_session(&unlimited);
  run_and_compare(method, input.tensor, 6000, expected);
  EXPECT_EQ(unlimited.result("etdump").substr(8, 4), "ED00");
  const std::string summary = unlimited.result("operator_summary");
  EXPECT_THAT(summary, HasSubstr("Method::execute\t\tmethod\t6000\t"));
  long events = 0;  // calls over all rows: the profile events of the 6,000 runs
  std::istringstream rows(summary);
  for (std::string name, plugin, kind, calls, ns; std::getline(rows, name, '\t') && std::getline(rows, plugin, '\t') &&
                                                  std::getline(rows, kind, '\t') && std::getline(rows, calls, '\t') &&
                                                  std::getline(rows, ns);)
    events += std::stol(calls);
  EXPECT_LT(recorded, events / 2) << "the limited session did not stop early";
}

TEST_F(TraceMemoryLimit, ADebugBufferLargerThanTheLimitIsRefusedWhenTheSessionOpens) {
  setenv("ETRT_MAX_TRACE_MEMORY", "1M", 1);
  try {
    etrt::TraceSession session("etdump", 2 << 20, "too big");
    FAIL() << "a 2 MiB debug buffer opened under a 1 MiB limit";
  } catch (const etrt::Error& error) {
    EXPECT_EQ(error.code(), ET_ERR_OUT_OF_MEMORY);
    EXPECT_THAT(error.what(), HasSubstr("debug buffer of 2097152 bytes is more than the 1 MiB"));
    EXPECT_THAT(error.what(), HasSubstr("ETRT_MAX_TRACE_MEMORY"));
  }
  EXPECT_NO_THROW(etrt::TraceSession("etdump", 512 << 10, "fits"));
  // Raised, the same buffer opens.
  setenv("ETRT_MAX_TRACE_MEMORY", "3M", 1);
  EXPECT_NO_THROW(etrt::TraceSession("etdump", 2 << 20, "raised"));
}

TEST_F(TraceMemoryLimit, AMalformedLimitIsIgnoredForTheDefault) {
  // "lots" is not a byte size: the default (4 GiB) applies, so a 2 MiB buffer opens.
  setenv("ETRT_MAX_TRACE_MEMORY", "lots", 1);
  EXPECT_NO_THROW(etrt::TraceSession("etdump", 2 << 20, "default"));
  setenv("ETRT_MAX_TRACE_MEMORY", "-1M", 1);
  EXPECT_NO_THROW(etrt::TraceSession("etdump", 2 << 20, "default"));
}

}  // namespace
