// Who may write a file or a directory on the way to it (trust.h): the walk
// from the root, symlinks, sticky directories, names that do not exist yet,
// and the group rule.
#include "loader/trust.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace etrt::loader {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr fs::perms k0755 = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec;

class TrustPath : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("etrt_trust_unit_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    fs::permissions(root_, k0755);
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string make_dir(const std::string& name, fs::perms perms = k0755) {
    fs::create_directories(root_ / name);
    fs::permissions(root_ / name, perms);
    return (root_ / name).string();
  }
  fs::path root_;
};

TEST_F(TrustPath, TrustedPathResolvesLikeTheKernel) {
  std::string dir = make_dir("a/b");
  std::ofstream(dir + "/lib.so") << "x";
  fs::create_symlink("b/lib.so", root_ / "a" / "link.so");
  PathCheck check = check_path((root_ / "a" / "link.so").string());
  EXPECT_EQ(check.problem, "");
  EXPECT_TRUE(check.exists);
  char real[PATH_MAX];
  ASSERT_NE(realpath((root_ / "a" / "link.so").c_str(), real), nullptr);
  EXPECT_EQ(check.resolved, real);
  EXPECT_EQ(check_path((root_ / "a" / "b" / ".." / "b" / "." / "lib.so").string()).problem, "");
}

TEST_F(TrustPath, DirectoryOthersMayWriteIsRefusedAnywhereOnThePath) {
  std::string inner = make_dir("open/inner");
  std::ofstream(inner + "/lib.so") << "x";
  fs::permissions(root_ / "open", fs::perms::all);
  EXPECT_THAT(check_path(inner + "/lib.so").problem,
              AllOf(HasSubstr("the directory " + (root_ / "open").string() + " on its path"),
                    HasSubstr("writable by every user (mode 0777)")));
  // Sticky, with an entry this user owns: others may not rename it, so the walk passes.
  fs::permissions(root_ / "open", fs::perms::all | fs::perms::sticky_bit);
  EXPECT_EQ(check_path(inner + "/lib.so").problem, "");
  // But never as the file's own directory: anyone could add a file there.
  fs::permissions(inner, fs::perms::all | fs::perms::sticky_bit);
  EXPECT_THAT(check_path(inner + "/lib.so").problem,
              HasSubstr("its directory " + inner + " is writable by every user (mode 1777)"));
}

TEST_F(TrustPath, MissingNameInADirectoryOthersMayWriteIsRefused) {
  std::string open = make_dir("open", fs::perms::all | fs::perms::sticky_bit);
  PathCheck check = check_path(open + "/missing/lib.so");
  EXPECT_FALSE(check.exists);
  EXPECT_THAT(check.problem, AllOf(HasSubstr("where missing does not exist yet"),
                                   HasSubstr("could create " + open + "/missing")));
  std::string closed = make_dir("closed");
  check = check_path(closed + "/missing/lib.so");
  EXPECT_EQ(check.problem, "");
  EXPECT_FALSE(check.exists);
  EXPECT_EQ(check.resolved, closed + "/missing/lib.so");
}

TEST_F(TrustPath, SymlinkIntoAnOpenDirectoryIsRefusedAtItsTarget) {
  std::string open = make_dir("open");
  std::ofstream(open + "/lib.so") << "x";
  fs::permissions(open, fs::perms::all);
  std::string safe = make_dir("safe");
  fs::create_symlink(open + "/lib.so", safe + "/lib.so");
  EXPECT_THAT(check_path(safe + "/lib.so").problem, HasSubstr("its directory " + open + " is writable"));
  fs::remove(safe + "/lib.so");
  fs::create_symlink(safe + "/lib.so", safe + "/lib.so.loop");
  fs::create_symlink(safe + "/lib.so.loop", safe + "/lib.so");
  EXPECT_THAT(check_path(safe + "/lib.so").problem, HasSubstr("more than 40 symbolic links"));
}

TEST_F(TrustPath, RelativePathIsNeverTrusted) {
  EXPECT_THAT(check_path("lib/libfoo.so").problem, HasSubstr("relative path"));
  EXPECT_THAT(check_path("").problem, HasSubstr("relative path"));
}

TEST(TrustFile, GroupMayShareWriteAccessOnlyWhenItIsRoots) {
  struct stat st {};
  st.st_uid = geteuid();
  st.st_mode = S_IFREG | 0664;
  st.st_gid = 100;
  EXPECT_TRUE(writable_by_others(st));
  EXPECT_THAT(untrusted_file_reason(st), AllOf(HasSubstr("writable by group 100"), HasSubstr("mode 0664")));
  st.st_gid = 0;
  EXPECT_FALSE(writable_by_others(st));
  EXPECT_EQ(untrusted_file_reason(st), "");
  st.st_mode = S_IFREG | 0646;
  EXPECT_THAT(untrusted_file_reason(st), HasSubstr("writable by every user (mode 0646)"));
  st.st_mode = S_IFDIR | 0775;
  st.st_gid = 100;
  EXPECT_TRUE(writable_by_others(st));
}

}  // namespace
}  // namespace etrt::loader
