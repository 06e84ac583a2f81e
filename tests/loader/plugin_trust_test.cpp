// The trust policy (docs/TRUST.md): only regular files are opened (a FIFO never
// hangs the loader), files and directories others may write are refused,
// symlinks are checked at their target, manifest strings with NUL are refused,
// and an allow-list of SHA-256 digests can restrict loading further.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "etrt/etrt.hpp"
#include "test_support.h"

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace etrt_test;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("etrt_trust_" + std::to_string(getpid())) / name;
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec);
  return dir;
}

std::string load_error(const std::string& path) {
  return error_of([&](et_error** e) { return et_load_plugin(path.c_str(), e); });
}

// A copy of a test plugin under another file name (so the dynamic loader treats it as new).
fs::path copy_plugin(const std::string& plugin, const fs::path& dir, const std::string& file_name) {
  fs::path to = dir / file_name;
  fs::copy_file(plugin_path(plugin), to, fs::copy_options::overwrite_existing);
  return to;
}

std::string manifest_text(const std::string& name, const std::string& library, const std::string& op) {
  return R"({"manifest_version": 1, "name": ")" + name + R"(", "version": "1", "library": ")" + library +
         R"(", "abi": {"major": 1, "minor": 1}, "provides": {"operators": [")" + op + R"("]}})";
}

std::string sha256_of(const fs::path& file) {
  std::string command = "sha256sum '" + file.string() + "'";
  FILE* pipe = popen(command.c_str(), "r");
  char digest[65] = {};
  if (pipe == nullptr || fscanf(pipe, "%64s", digest) != 1) ADD_FAILURE() << "sha256sum failed";
  if (pipe != nullptr) pclose(pipe);
  return digest;
}

// Runs `body` in a child that SIGALRM kills after 10 s: a hang fails the test instead of stalling it.
#define EXPECT_RETURNS_PROMPTLY(body) \
  EXPECT_EXIT(                        \
      {                               \
        alarm(10);                    \
        body;                         \
        std::_Exit(0);                \
      },                              \
      ::testing::ExitedWithCode(0), "")

TEST(PluginTrustDeathTest, FifoNamedLikeAPluginIsRefusedWithoutBlocking) {
  fs::path dir = scratch("fifo");
  fs::path fifo = dir / "libfifo.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_RETURNS_PROMPTLY({
    std::string error = load_error(fifo.string());
    if (error.find("not a regular file") == std::string::npos) {
      std::fprintf(stderr, "unexpected: %s\n", error.c_str());
      std::_Exit(1);
    }
  });
  // The same FIFO as a manifest's library, found lazily by an operator lookup.
  std::ofstream(dir / "fifo.json") << manifest_text("test_fifo", "libfifo.so", "test::fifo_op");
  EXPECT_RETURNS_PROMPTLY({
    etrt::Runtime::get().add_manifest((dir / "fifo.json").string());
    std::string error = error_of([](et_error** e) { return et_find_kernel("test::fifo_op", nullptr, e); });
    if (error.find("not a regular file") == std::string::npos) {
      std::fprintf(stderr, "unexpected: %s\n", error.c_str());
      std::_Exit(1);
    }
  });
}

TEST(PluginTrust, WorldWritableFileIsRefused) {
  fs::path dir = scratch("writable_file");
  fs::path library = copy_plugin("lazy", dir, "libwritable.so");
  fs::permissions(library, fs::perms::others_write, fs::perm_options::add);
  EXPECT_THAT(load_error(library.string()),
              AllOf(HasSubstr(library.string()), HasSubstr("writable by every user"), HasSubstr("mode 0757")));
  EXPECT_FALSE(is_mapped("libwritable.so"));
}

TEST(PluginTrust, FileInAWorldWritableDirectoryIsRefused) {
  fs::path dir = scratch("writable_dir");
  fs::path library = copy_plugin("lazy", dir, "libin_writable_dir.so");
  fs::permissions(dir, fs::perms::all);
  EXPECT_THAT(load_error(library.string()),
              AllOf(HasSubstr("its directory " + dir.string()), HasSubstr("writable by every user")));
  fs::permissions(dir, fs::perms::others_write, fs::perm_options::remove);
  EXPECT_FALSE(is_mapped("libin_writable_dir.so"));
}

TEST(PluginTrust, WorldWritableManifestIsRefused) {
  fs::path dir = scratch("writable_manifest");
  copy_plugin("lazy", dir, "liblazy_copy.so");
  fs::path manifest = dir / "lazy.json";
  std::ofstream(manifest) << manifest_text("test_lazy", "liblazy_copy.so", "test::lazy_op");
  fs::permissions(manifest, fs::perms::others_write, fs::perm_options::add);
  std::string error = error_of([&](et_error** e) { return et_add_manifest(manifest.c_str(), e); });
  EXPECT_THAT(error, AllOf(HasSubstr(manifest.string()), HasSubstr("writable by every user")));
}

TEST(PluginTrust, SymlinkIsFollowedAndItsTargetChecked) {
  fs::path dir = scratch("symlink");
  fs::path target_dir = scratch("symlink_target");
  fs::path target = copy_plugin("lazy", target_dir, "libtarget.so");
  fs::permissions(target, fs::perms::others_write, fs::perm_options::add);
  fs::path link = dir / "liblink.so";
  fs::remove(link);
  fs::create_symlink(target, link);
  EXPECT_THAT(load_error(link.string()),
              AllOf(HasSubstr("writable by every user"), HasSubstr(target.string())));
}

TEST(PluginTrust, FileOwnedByAnotherUserIsRefusedWhenRunningAsRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to chown, and to be the process the rule protects)";
  fs::path dir = scratch("other_owner");
  fs::path library = copy_plugin("lazy", dir, "libother_owner.so");
  ASSERT_EQ(chown(library.c_str(), 4242, 4242), 0);
  EXPECT_THAT(load_error(library.string()),
              AllOf(HasSubstr("owned by uid 4242"), HasSubstr("this process runs as root")));
  EXPECT_FALSE(is_mapped("libother_owner.so"));
}

TEST(PluginTrust, NulInAManifestStringIsRefusedNotTruncated) {
  fs::path dir = scratch("nul");
  copy_plugin("lazy", dir, "libnul.so");
  // "libnul.so\u0000.evil" would be read as "libnul.so" by any C API.
  std::ofstream(dir / "nul.json") << manifest_text("test_lazy", R"(libnul.so\u0000.evil)", "test::lazy_op");
  std::string error = error_of([&](et_error** e) { return et_add_manifest((dir / "nul.json").c_str(), e); });
  EXPECT_THAT(error, AllOf(HasSubstr("field 'library'"), HasSubstr("NUL character")));
  EXPECT_FALSE(is_mapped("libnul.so"));
}

TEST(PluginTrust, AllowListLoadsOnlyListedDigests) {
  fs::path dir = scratch("allowlist");
  fs::path listed = copy_plugin("lazy", dir, "liblisted.so");
  fs::path unlisted = copy_plugin("concurrent", dir, "libunlisted.so");
  fs::path list = dir / "allowed.txt";
  std::ofstream(list) << "# plugins this host trusts\n" << sha256_of(listed) << "  # liblisted.so\n";
  setenv("ETRT_PLUGIN_ALLOWLIST", list.c_str(), 1);
  EXPECT_THAT(load_error(unlisted.string()),
              AllOf(HasSubstr("is not in the allow-list " + list.string()), HasSubstr(sha256_of(unlisted))));
  EXPECT_FALSE(is_mapped("libunlisted.so"));
  EXPECT_EQ(load_error(listed.string()), "");
  EXPECT_TRUE(is_mapped("liblisted.so"));

  // A list that cannot be used refuses everything rather than nothing.
  std::ofstream(list) << "not-a-digest\n";
  fs::path other = copy_plugin("good", dir, "libother.so");
  EXPECT_THAT(load_error(other.string()), HasSubstr("not a lowercase SHA-256 hex digest"));
  unsetenv("ETRT_PLUGIN_ALLOWLIST");
}

}  // namespace
