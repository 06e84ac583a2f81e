// What ABI 1.3 adds: tracer sessions and the host's tracing entries, checked
// against the host table and a tracer built without sessions (test_good_tracer).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::HasSubstr;
using namespace etrt_test;

namespace {

TEST(Abi13, HostSpeaksTheNewMinorAndFillsTheTracingEntries) {
  const et_host_api* host = et_host_api_get();
  EXPECT_GE(host->abi_minor, 3u);  // 1.4 hosts keep every 1.3 entry
  ASSERT_TRUE(ET_HOST_HAS(host, trace_span));
  ASSERT_NE(host->trace_clock_ns, nullptr);
  uint64_t first = host->trace_clock_ns();
  EXPECT_GE(host->trace_clock_ns(), first);
  // Outside a traced call there is nothing to record into.
  EXPECT_EQ(host->trace_span(nullptr, "x", 0, 0, 0), 0);
}

TEST(Abi13, ATracerWithoutSessionsStillRegistersButCannotBeEnabled) {
  etrt::Runtime::get().load_plugin(manifest_path("good"));
  et_tracer_descriptor tracer{};
  tracer.struct_size = sizeof tracer;
  ASSERT_EQ(et_find_tracer("test_good_tracer", &tracer, nullptr), ET_OK);
  EXPECT_EQ(tracer.session_create, nullptr);
  try {
    etrt::TraceSession session("test_good_tracer");
    FAIL() << "a tracer without sessions cannot trace a method";
  } catch (const etrt::Error& error) {
    EXPECT_EQ(error.code(), ET_ERR_NOT_SUPPORTED);
    EXPECT_THAT(error.what(), HasSubstr("has no sessions"));
  }
}

}  // namespace
