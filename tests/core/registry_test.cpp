// The registry's decisions about loading: a failure that may pass (the process
// ran out of file descriptors) leaves the plugin loadable; and the plan it
// gives for a name (et_registry_planned_provider, devtools.program_plan) names
// a loaded plugin only for what it registered, whatever its manifest declares.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::HasSubstr;
using namespace etrt_test;

namespace {

// Every descriptor below the one returned is open.
int lowest_free_descriptor() {
  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ::close(fd);
  return fd;
}

int32_t plugin_state(const std::string& name) {
  for (const etrt::PluginInfo& plugin : etrt::Runtime::get().plugins())
    if (plugin.library_path.find(name) != std::string::npos) return plugin.state;
  return -1;
}

// In a child process: each plugin is first needed while the descriptor limit
// leaves `spare` descriptors (0: opening the library fails; 1: the library
// opens, the dynamic loader's own open fails), then again once it is raised.
// 0 when each failed temporarily and then loaded; otherwise what went wrong.
int run_out_of_descriptors() {
  if (et_add_manifest(ETRT_TEST_MANIFEST_DIR, nullptr) != ET_OK) return 10;
  struct rlimit saved {};
  if (getrlimit(RLIMIT_NOFILE, &saved) != 0) return 11;
  const std::string too_many = std::strerror(EMFILE);
  struct Case {
    const char* op;
    const char* plugin;
    const char* library;
    int spare;
  };
  int step = 0;
  for (const Case& c : {Case{"test::good_op", "test_good", "libetrt_test_good.so", 0},
                        Case{"test::lazy_op", "test_lazy", "libetrt_test_lazy.so", 1}}) {
    step += 10;
    struct rlimit low = saved;
    low.rlim_cur = static_cast<rlim_t>(lowest_free_descriptor() + c.spare);
    if (setrlimit(RLIMIT_NOFILE, &low) != 0) return 12;
    et_kernel_descriptor kernel{};
    kernel.struct_size = sizeof kernel;
    et_error* error = nullptr;
    int32_t status = et_find_kernel(c.op, &kernel, &error);
    std::string message = error != nullptr ? et_error_message(error) : "";
    et_error_destroy(error);
    setrlimit(RLIMIT_NOFILE, &saved);
    if (status == ET_OK) return std::fprintf(stderr, "%s loaded without a descriptor to spare\n", c.op), 20 + step;
    if (message.find(too_many) == std::string::npos || message.find("temporary") == std::string::npos)
      return std::fprintf(stderr, "%s: not a temporary failure: %s\n", c.op, message.c_str()), 30 + step;
    if (plugin_state(c.library) != ET_PLUGIN_DECLARED)
      return std::fprintf(stderr, "%s: its plugin is not left declared\n", c.op), 40 + step;
    status = et_find_kernel(c.op, &kernel, &error);
    if (status != ET_OK) {
      std::fprintf(stderr, "%s once descriptors are back: %s\n", c.op, et_error_message(error));
      et_error_destroy(error);
      return 50 + step;
    }
    if (plugin_state(c.library) != ET_PLUGIN_LOADED) return 60 + step;
    if (!plugin_named(c.plugin).failure.empty()) return 70 + step;
  }
  return 0;
}

TEST(TemporaryLoadFailures, RunningOutOfDescriptorsLeavesThePluginLoadableLater) {
  std::fflush(nullptr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(run_out_of_descriptors());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's message above";
}

TEST(PlannedProvider, ALoadedPluginIsNotPlannedForAnOperatorItNeverRegistered) {
  const std::string manifest = std::string(ETRT_TEST_DECLARES_MORE_MANIFEST_DIR) + "/test_declares_more.json";
  etrt::Runtime::get().add_manifest(manifest);
  et_plugin_record record{};
  record.struct_size = sizeof record;
  // Not loaded yet: its manifest is all there is to go by.
  ASSERT_EQ(et_registry_planned_provider(ET_ENTRY_OPERATOR, "test::declared_never_registered", &record), ET_OK);
  EXPECT_STREQ(record.name, "test_declares_more");
  etrt::Runtime::get().load_plugin(manifest);
  EXPECT_EQ(et_registry_planned_provider(ET_ENTRY_OPERATOR, "test::declared_never_registered", &record),
            ET_ERR_NOT_FOUND)
      << "planned to '" << record.name << "', which registered no such operator";
  EXPECT_THAT(error_of([](et_error** e) { return et_find_kernel("test::declared_never_registered", nullptr, e); }),
              HasSubstr("plugin 'test_declares_more' declares it but did not register it"));
  ASSERT_EQ(et_registry_planned_provider(ET_ENTRY_OPERATOR, "test::declares_more_op", &record), ET_OK);
  EXPECT_STREQ(record.name, "test_declares_more");
}

}  // namespace
