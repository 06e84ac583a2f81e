// The registration functions of the host table (host_api.cpp) check "during
// init" before they touch anything: plugin threads that keep registering after
// init, four at once, get ET_ERR_INVALID_STATE, and neither the registry nor
// the process' memory changes. The plugin is tests/plugins/late_register_plugin.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "etrt/etrt.hpp"
#include "test_support.h"

using namespace etrt_test;

namespace {

struct Outcome {
  int64_t refused = -1, other = -1;
};

// The plugin's kernel: `threads` threads, each calling the registration functions `calls` times.
Outcome register_after_init(int64_t threads, int64_t calls) {
  et_kernel_descriptor kernel{};
  kernel.struct_size = sizeof kernel;
  et_error* error = nullptr;
  if (et_find_kernel("test_late::register_after_init", &kernel, &error) != ET_OK) {
    ADD_FAILURE() << et_error_message(error);
    et_error_destroy(error);
    return {};
  }
  et_value values[4]{};
  et_value* args[4];
  for (int i = 0; i < 4; ++i) {
    values[i].struct_size = sizeof values[i];
    values[i].tag = ET_VALUE_INT;
    args[i] = &values[i];
  }
  values[0].as_int = threads;
  values[1].as_int = calls;
  EXPECT_EQ(kernel.fn(kernel.user_data, nullptr, args, 4), nullptr);
  return {values[2].as_int, values[3].as_int};
}

size_t resident_bytes() {
  long pages = 0, resident = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(statm);
  }
  return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

size_t registry_size() {
  size_t total = 0;
  for (int32_t kind : {ET_ENTRY_OPERATOR, ET_ENTRY_BACKEND, ET_ENTRY_TRACER}) total += et_registry_count(kind);
  return total;
}

TEST(Registration, FourPluginThreadsRegisteringAfterInitAreAllRefused) {
  etrt::Runtime::get().add_manifest(ETRT_TEST_LATE_REGISTER_MANIFEST);
  etrt::Runtime::get().load_plugin(ETRT_TEST_LATE_REGISTER_MANIFEST);
  const size_t before = registry_size();
  Outcome outcome = register_after_init(4, 30000);
  EXPECT_EQ(outcome.refused, 4 * 30000);
  EXPECT_EQ(outcome.other, 0);
  EXPECT_EQ(registry_size(), before);
  for (const etrt::RegistryEntry& entry : etrt::Runtime::get().operators())
    EXPECT_THAT(entry.name, ::testing::Not(::testing::HasSubstr("a_name_registered_after_init")));
}

TEST(Registration, RefusedRegistrationsKeepNothing) {
  register_after_init(1, 1000);  // warm up: the error objects' allocations
  const size_t before = resident_bytes();
  Outcome outcome = register_after_init(1, 1000000);
  const size_t grown = resident_bytes() - std::min(before, resident_bytes());
  EXPECT_EQ(outcome.refused, 1000000);
  // Keeping a copy of each refused name would take > 64 MiB here.
  EXPECT_LT(grown, size_t{16} << 20) << "resident memory grew by " << grown << " bytes";
}

}  // namespace
