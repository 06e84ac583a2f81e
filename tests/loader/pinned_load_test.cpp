// The loader hashes and dlopens one open file: a library swapped on disk after
// its checks (between the SHA-256 comparison and dlopen) is not the one loaded.
// Drives loader::load_plugin_library directly, with a minimal host table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "loader/plugin_loader.h"
#include "loader/sha256.h"

using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

std::string plugin_path(const std::string& name) {
  return std::string(ETRT_TEST_PLUGIN_DIR) + "/libetrt_test_" + name + ".so.1";
}

et_error* stage(et_plugin_handle* self, int32_t kind, const char* name) {
  etrt::loader::Registration registration;
  registration.kind = kind;
  registration.name = name;
  std::string why_not;
  self->stage(std::move(registration), &why_not);
  return nullptr;
}
et_error* register_kernel(et_plugin_handle* self, const et_kernel_descriptor* d) {
  return stage(self, ET_ENTRY_OPERATOR, d->name);
}
et_error* register_backend(et_plugin_handle* self, const et_backend_descriptor* d) {
  return stage(self, ET_ENTRY_BACKEND, d->id);
}
et_error* register_tracer(et_plugin_handle* self, const et_tracer_descriptor* d) {
  return stage(self, ET_ENTRY_TRACER, d->name);
}
void log(et_plugin_handle*, int32_t, const char*) {}

const et_host_api* fake_host() {
  static et_host_api host = [] {
    et_host_api h{};
    h.struct_size = sizeof h;
    h.abi_major = ET_ABI_MAJOR;
    h.abi_minor = ET_ABI_MINOR;
    h.register_kernel = register_kernel;
    h.register_backend = register_backend;
    h.register_tracer = register_tracer;
    h.log = log;
    return h;
  }();
  return &host;
}

struct Swap {
  fs::path replacement, target;
  bool done = false;
};

void swap_file(const std::string& path, void* context) {
  auto* swap = static_cast<Swap*>(context);
  if (path != swap->target.string()) return;
  fs::rename(swap->replacement, swap->target);  // a new inode under the same name
  swap->done = true;
}

TEST(PinnedLoad, FileSwappedAfterItsChecksIsNotTheOneLoaded) {
  fs::path dir = fs::temp_directory_path() / ("etrt_pinned_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path target = dir / "libpinned.so";
  fs::copy_file(plugin_path("good"), target, fs::copy_options::overwrite_existing);
  fs::copy_file(plugin_path("lazy"), dir / "replacement.so", fs::copy_options::overwrite_existing);
  std::string pinned, error;
  ASSERT_TRUE(etrt::loader::sha256_file_hex(target.string(), &pinned, &error)) << error;

  Swap swap{dir / "replacement.so", target};
  etrt::loader::set_before_dlopen_hook_for_testing(swap_file, &swap);
  etrt::loader::PluginRequest request;
  request.library_path = target.string();
  request.expected_sha256 = pinned;
  etrt::loader::LoadResult result = etrt::loader::load_plugin_library(request, fake_host());
  etrt::loader::set_before_dlopen_hook_for_testing(nullptr, nullptr);

  ASSERT_TRUE(swap.done);
  ASSERT_EQ(result.code, ET_OK) << result.error;
  // The checked file (test_good) was loaded, not the one now on disk (test_lazy).
  EXPECT_EQ(result.plugin_name, "test_good");
  EXPECT_EQ(result.warnings, "");
  std::string now_on_disk;
  ASSERT_TRUE(etrt::loader::sha256_file_hex(target.string(), &now_on_disk, &error));
  EXPECT_NE(now_on_disk, pinned);
  ASSERT_EQ(result.registrations.size(), 3u);
  EXPECT_EQ(result.registrations[0].name, "test::good_op");
}

TEST(PinnedLoad, RegistrationOutsideInitIsRefusedByTheHandle) {
  et_plugin_handle handle("test_handle");
  etrt::loader::Registration registration;
  registration.name = "test::late_op";
  std::string why_not;
  EXPECT_EQ(handle.stage(registration, &why_not), ET_ERR_INVALID_STATE);
  EXPECT_THAT(why_not, HasSubstr("only allowed during the plugin's init"));
  handle.begin_init();
  EXPECT_EQ(handle.stage(registration, &why_not), ET_OK);
  EXPECT_EQ(handle.stage(registration, &why_not), ET_ERR_ALREADY_EXISTS);
  EXPECT_THAT(why_not, HasSubstr("registered twice by plugin 'test_handle'"));
  EXPECT_EQ(handle.end_init().size(), 1u);
}

}  // namespace
