// Broken manifests: each error names the file, the line and the field, and
// nothing is loaded because of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace etrt_test;
namespace fs = std::filesystem;

namespace {

std::string write_manifest(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("etrt_manifest_errors_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

std::string add_error(const std::string& path) {
  return error_of([&](et_error** e) { return et_add_manifest(path.c_str(), e); });
}

std::string good_library() { return plugin_path("good"); }

TEST(ManifestErrors, InvalidJsonNamesLineAndColumn) {
  std::string path = write_manifest("bad_json.json", "{\n  \"manifest_version\": 1,\n  \"name\": \"x\"\n  \"version\": \"1\"\n}\n");
  EXPECT_THAT(add_error(path), AllOf(HasSubstr(path + ":4:"), HasSubstr("invalid JSON")));
}

TEST(ManifestErrors, MissingRequiredFieldNamesIt) {
  std::string path = write_manifest("missing.json", R"({
  "manifest_version": 1,
  "name": "test_missing",
  "version": "1",
  "abi": {"major": 1, "minor": 0},
  "provides": {}
})");
  EXPECT_THAT(add_error(path), AllOf(HasSubstr(path + ":1:"), HasSubstr("missing required field 'library'")));
}

TEST(ManifestErrors, WrongTypeNamesFieldAndLine) {
  std::string path = write_manifest("wrong_type.json", R"({
  "manifest_version": 1,
  "name": "test_wrong_type",
  "version": "1",
  "library": "libx.so",
  "abi": {"major": 1, "minor": 0},
  "priority": "high",
  "provides": {"operators": ["a::b", 7]}
})");
  std::string error = add_error(path);
  EXPECT_THAT(error, AllOf(HasSubstr(path + ":7: field 'priority'"), HasSubstr("expected integer, got string")));
  EXPECT_THAT(error, AllOf(HasSubstr(path + ":8: field 'provides.operators[1]'"), HasSubstr("expected string")));
}

TEST(ManifestErrors, UnknownFieldAndBadNameAndBadHash) {
  std::string path = write_manifest("unknown.json", R"({
  "manifest_version": 1,
  "name": "has spaces",
  "version": "1",
  "librar": "libx.so",
  "library": "libx.so",
  "abi": {"major": 1, "minor": 0},
  "sha256": "abc",
  "provides": {}
})");
  std::string error = add_error(path);
  EXPECT_THAT(error, HasSubstr(path + ":5: field 'librar': unknown field 'librar'"));
  EXPECT_THAT(error, HasSubstr(path + ":3: field 'name'"));
  EXPECT_THAT(error, HasSubstr(path + ":8: field 'sha256'"));
}

TEST(ManifestErrors, UnsupportedManifestVersion) {
  std::string path = write_manifest("v2.json", R"({"manifest_version": 2, "name": "x", "version": "1",
    "library": "libx.so", "abi": {"major": 1, "minor": 0}, "provides": {}})");
  EXPECT_THAT(add_error(path), AllOf(HasSubstr("field 'manifest_version'"), HasSubstr("not one of [1]")));
}

TEST(ManifestErrors, NewerMajorInManifestIsRejectedWithoutLoading) {
  std::string path = write_manifest("major2.json", R"({"manifest_version": 1, "name": "test_major2",
    "version": "1", "library": ")" + good_library() + R"(", "abi": {"major": 2, "minor": 0},
    "provides": {"operators": ["test::major2_op"]}})");
  EXPECT_THAT(add_error(path), AllOf(HasSubstr(path), HasSubstr("declares plugin ABI 2.0"),
                                     HasSubstr("this host speaks ABI 1.0-1.")));
  std::string lookup = error_of([](et_error** e) { return et_find_kernel("test::major2_op", nullptr, e); });
  EXPECT_THAT(lookup, HasSubstr("not provided by any plugin"));
  EXPECT_FALSE(is_mapped("libetrt_test_good"));
}

TEST(ManifestErrors, LibraryThatDoesNotExistFailsAtLoadNamingIt) {
  std::string path = write_manifest("ghost.json", R"({"manifest_version": 1, "name": "test_ghost",
    "version": "1", "library": "libghost.so", "abi": {"major": 1, "minor": 1},
    "provides": {"operators": ["test::ghost_op"]}})");
  EXPECT_EQ(add_error(path), "");  // declaring is fine; nothing is opened yet
  std::string lookup = error_of([](et_error** e) { return et_find_kernel("test::ghost_op", nullptr, e); });
  EXPECT_THAT(lookup, AllOf(HasSubstr("test::ghost_op"), HasSubstr("libghost.so"), HasSubstr("cannot open")));
}

TEST(ManifestErrors, LibraryNameDisagreeingWithManifestIsRefused) {
  std::string path = write_manifest("liar.json", R"({"manifest_version": 1, "name": "test_liar",
    "version": "1", "library": ")" + good_library() + R"(", "abi": {"major": 1, "minor": 1},
    "provides": {"operators": ["test::good_op"]}})");
  std::string error = error_of([&](et_error** e) { return et_load_plugin(path.c_str(), e); });
  EXPECT_THAT(error, AllOf(HasSubstr("names it 'test_liar'"), HasSubstr("calls itself 'test_good'")));
}

TEST(ManifestErrors, EveryBrokenManifestIsListedAsRejected) {
  auto rejections = etrt::Runtime::get().rejections();
  EXPECT_GE(rejections.size(), 6u);
  std::string report = etrt::Runtime::get().report_json();
  EXPECT_THAT(report, AllOf(HasSubstr("bad_json.json"), HasSubstr("missing required field 'library'")));
}

}  // namespace
