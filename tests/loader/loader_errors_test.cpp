// Broken plugins and files that are not plugins: each is refused with an
// error naming the file and the reason, before any of its code runs, and the
// registry stays usable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace etrt_test;
namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  fs::path dir = fs::temp_directory_path() / ("etrt_loader_errors_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string load_error(const std::string& path) {
  return error_of([&](et_error** e) { return et_load_plugin(path.c_str(), e); });
}

std::string reason_recorded_for(const std::string& path) {
  for (const auto& r : etrt::Runtime::get().rejections())
    if (r.path == fs::weakly_canonical(path).string() || r.path == path) return r.reason;
  return "";
}

TEST(LoaderErrors, GoodPluginLoadsAndLoadingAgainIsANoOp) {
  ASSERT_EQ(load_error(plugin_path("good")), "");
  EXPECT_EQ(call_reporting_kernel("test::good_op"), 1);  // init ran once
  ASSERT_EQ(load_error(plugin_path("good")), "");
  ASSERT_EQ(load_error(manifest_path("good")), "");  // same plugin through its manifest
  EXPECT_EQ(call_reporting_kernel("test::good_op"), 1);
  EXPECT_EQ(mapped_files_containing("libetrt_test_good").size(), 1u);
}

TEST(LoaderErrors, NewerMajorIsRefusedNamingBothVersions) {
  std::string path = plugin_path("newer_major");
  std::string error = load_error(path);
  EXPECT_THAT(error, AllOf(HasSubstr(path), HasSubstr("plugin speaks ABI 2.0"),
                           HasSubstr("this host speaks ABI 1.0-1." + std::to_string(ET_ABI_MINOR))));
  EXPECT_THAT(reason_recorded_for(path), HasSubstr("ABI 2.0"));
}

TEST(LoaderErrors, MissingEntrySymbolIsRefusedBeforeDlopen) {
  std::string path = plugin_path("no_entry");
  EXPECT_THAT(load_error(path), AllOf(HasSubstr(path), HasSubstr("does not export the entry symbol et_plugin_entry")));
  EXPECT_FALSE(is_mapped("libetrt_test_no_entry"));  // its constructors never ran
}

TEST(LoaderErrors, FailedInitKeepsNothingItRegistered) {
  std::string path = plugin_path("init_fails");
  EXPECT_THAT(load_error(path), AllOf(HasSubstr(path), HasSubstr("init failed"),
                                      HasSubstr("simulated failure: required device missing")));
  std::string lookup = error_of([](et_error** e) { return et_find_kernel("test::init_fails_op", nullptr, e); });
  EXPECT_THAT(lookup, HasSubstr("operator 'test::init_fails_op' is not provided by any plugin"));
  // Asking again gives the same answer instead of retrying the broken plugin.
  EXPECT_THAT(load_error(path), HasSubstr("simulated failure"));
}

TEST(LoaderErrors, NotAnElfFile) {
  std::string path = write_temp("libtext.so", "this is a text file, not a library\n");
  EXPECT_THAT(load_error(path), AllOf(HasSubstr(path), HasSubstr("not an ELF file")));
}

// The other one of the two architectures etrt is built for, and how the loader refuses it.
#if defined(__aarch64__)
constexpr unsigned char kForeignMachine = 62;  // EM_X86_64
constexpr const char* kForeignMachineError = "built for x86-64 (e_machine 62), this host is AArch64 (e_machine 183)";
#elif defined(__x86_64__)
constexpr unsigned char kForeignMachine = 183;  // EM_AARCH64
constexpr const char* kForeignMachineError = "built for AArch64 (e_machine 183), this host is x86-64 (e_machine 62)";
#else
constexpr unsigned char kForeignMachine = 183;
constexpr const char* kForeignMachineError = "built for AArch64 (e_machine 183)";
#endif

TEST(LoaderErrors, ElfForAnotherArchitecture) {
  std::string bytes = read_file(plugin_path("good"));
  ASSERT_GT(bytes.size(), 64u);
  bytes[18] = static_cast<char>(kForeignMachine);  // e_machine, little endian
  bytes[19] = 0;
  std::string path = write_temp("libforeign_machine.so", bytes);
  EXPECT_THAT(load_error(path), AllOf(HasSubstr(path), HasSubstr(kForeignMachineError)));
}

// A real shared object built for the other architecture (ctest's loader_foreign_plugin gives it:
// the x86_64 build's kernels_optimized to the aarch64 build under qemu) is refused before dlopen.
TEST(ForeignPlugin, BuiltForAnotherMachineIsRefusedBeforeDlopen) {
  const char* path = std::getenv("ETRT_FOREIGN_PLUGIN");
  ASSERT_TRUE(path != nullptr && *path != '\0') << "ETRT_FOREIGN_PLUGIN: a plugin built for another architecture";
  ASSERT_TRUE(fs::exists(path)) << path;
  EXPECT_THAT(load_error(path), AllOf(HasSubstr(path), HasSubstr(kForeignMachineError)));
  EXPECT_THAT(reason_recorded_for(path), HasSubstr(kForeignMachineError));
  EXPECT_TRUE(mapped_files_containing(fs::weakly_canonical(path).string()).empty());  // never mapped
  // The native plugins still load in the same process.
  EXPECT_EQ(load_error(plugin_path("good")), "");
}

TEST(LoaderErrors, ThirtyTwoBitElf) {
  std::string bytes = read_file(plugin_path("good"));
  bytes[4] = 1;  // EI_CLASS = ELFCLASS32
  std::string path = write_temp("lib32.so", bytes);
  EXPECT_THAT(load_error(path), AllOf(HasSubstr(path), HasSubstr("32-bit")));
}

TEST(LoaderErrors, TruncatedSharedObject) {
  std::string bytes = read_file(plugin_path("good"));
  std::string path = write_temp("libtruncated.so", bytes.substr(0, bytes.size() / 2));
  EXPECT_THAT(load_error(path), AllOf(HasSubstr(path), HasSubstr("truncated")));
  std::string tiny = write_temp("libtiny.so", bytes.substr(0, 10));
  EXPECT_THAT(load_error(tiny), AllOf(HasSubstr(tiny), HasSubstr("truncated")));
}

TEST(LoaderErrors, HashMismatchIsRefusedBeforeDlopen) {
  // A copy of the good plugin under another name, with a manifest pinning the wrong hash.
  std::string library = write_temp("libhash_mismatch.so", read_file(plugin_path("extra_exports")));
  std::string manifest = write_temp("hash_mismatch.json", R"({
    "manifest_version": 1, "name": "test_extra_exports", "version": "1", "library": "libhash_mismatch.so",
    "abi": {"major": 1, "minor": 1},
    "sha256": "0000000000000000000000000000000000000000000000000000000000000000",
    "provides": {"operators": ["test::extra_exports_op"]}})");
  EXPECT_THAT(load_error(manifest), AllOf(HasSubstr(library), HasSubstr("SHA-256 mismatch"),
                                          HasSubstr("expects 0000000000000000")));
  EXPECT_FALSE(is_mapped("libhash_mismatch"));
}

TEST(LoaderErrors, MissingFile) {
  EXPECT_THAT(load_error("/nonexistent/libnothing.so"), AllOf(HasSubstr("/nonexistent/libnothing.so"),
                                                              HasSubstr("no such file")));
}

TEST(LoaderErrors, ExtraExportsLoadWithAWarning) {
  ASSERT_EQ(load_error(plugin_path("extra_exports")), "");
  EXPECT_EQ(call_reporting_kernel("test::extra_exports_op"), 5);
  bool found = false;
  for (const auto& plugin : etrt::Runtime::get().plugins()) {
    if (plugin.name != "test_extra_exports") continue;
    found = true;
    EXPECT_THAT(plugin.warnings, AllOf(HasSubstr("extra_exported_function"), HasSubstr("extra_exported_data")));
  }
  EXPECT_TRUE(found);
}

TEST(LoaderErrors, RegistryStaysUsableAfterEveryFailure) {
  EXPECT_EQ(call_reporting_kernel("test::good_op"), 1);
  EXPECT_GE(etrt::Runtime::get().rejections().size(), 7u);
  for (const auto& r : etrt::Runtime::get().rejections()) EXPECT_FALSE(r.reason.empty()) << r.path;
}

}  // namespace

namespace {

TEST(LoaderErrors, CppLayerThrowsWithTheRuntimesMessage) {
  try {
    etrt::Runtime::get().load_plugin("/nonexistent/libnothing.so");
    FAIL() << "expected etrt::Error";
  } catch (const etrt::Error& error) {
    EXPECT_EQ(error.code(), ET_ERR_NOT_FOUND);
    EXPECT_THAT(error.what(), HasSubstr("/nonexistent/libnothing.so: no such file"));
  }
  try {
    etrt::Runtime::get().find_kernel("test::missing_everywhere");
    FAIL() << "expected etrt::Error";
  } catch (const etrt::Error& error) {
    EXPECT_EQ(error.code(), ET_ERR_NOT_FOUND);
    EXPECT_THAT(error.what(), HasSubstr("operator 'test::missing_everywhere' is not provided by any plugin"));
  }
}

}  // namespace
