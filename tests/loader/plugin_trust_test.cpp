// The trust policy (docs/TRUST.md): only regular files are opened (a FIFO never
// hangs the loader), files and directories others may write are refused (every
// user, or a group other than root's, along the whole path), symlinks are
// checked at their target, manifest strings with NUL are refused, an allow-list
// of SHA-256 digests can restrict loading further, the libraries a plugin needs
// are found and checked as the dynamic loader would load them, and a manifest's
// name is checked against the library's soname: a refused plugin runs no code,
// nor does any library it needs (their constructors leave marker files).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

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


// ---- who may write a plugin: the group, and every directory on the way (issue 32, D4)

// A group other than root's that this process may give files to.
gid_t another_group() { return geteuid() == 0 ? 100 : getegid(); }

TEST(PluginTrust, PluginAnotherGroupMayWriteIsRefused) {
  gid_t group = another_group();
  if (group == 0) GTEST_SKIP() << "this user's group is root's: no other group to give the file to";
  // root:users 0664 in a 0775 directory: any member of the group could replace it.
  fs::path dir = scratch("group_writable_file");
  fs::path library = copy_plugin("lazy", dir, "libgroup_writable.so");
  ASSERT_EQ(chown(library.c_str(), -1, group), 0);
  fs::permissions(library, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                               fs::perms::group_write | fs::perms::others_read);
  ASSERT_EQ(chown(dir.c_str(), -1, group), 0);
  fs::permissions(dir, fs::perms::group_write, fs::perm_options::add);
  EXPECT_THAT(load_error(library.string()), AllOf(HasSubstr(library.string()),
                                                  HasSubstr("writable by group " + std::to_string(group)),
                                                  HasSubstr("mode 0664")));
  // A file that group may not write, in the directory it may write (a new file: a refusal is final).
  fs::path second = copy_plugin("lazy", dir, "libin_group_writable_dir.so");
  EXPECT_THAT(load_error(second.string()),
              AllOf(HasSubstr("its directory " + dir.string()), HasSubstr("writable by group " + std::to_string(group)),
                    HasSubstr("mode 0775")));
  fs::permissions(dir, fs::perms::group_write, fs::perm_options::remove);
  EXPECT_FALSE(is_mapped("libgroup_writable.so"));
  EXPECT_FALSE(is_mapped("libin_group_writable_dir.so"));
}

TEST(PluginTrustDeathTest, RootsGroupMayShareWriteAccess) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to give a file to group 0)";
  fs::path dir = scratch("root_group_writable");
  fs::path library = copy_plugin("concurrent", dir, "libroot_group.so");
  ASSERT_EQ(chown(library.c_str(), 0, 0), 0);
  ASSERT_EQ(chown(dir.c_str(), 0, 0), 0);
  fs::permissions(library, fs::perms::group_write, fs::perm_options::add);
  fs::permissions(dir, fs::perms::group_write, fs::perm_options::add);
  EXPECT_EXIT(
      {
        std::string error = load_error(library.string());
        if (!error.empty()) std::fprintf(stderr, "refused: %s\n", error.c_str());
        std::_Exit(error.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  fs::permissions(dir, fs::perms::group_write, fs::perm_options::remove);
}

TEST(PluginTrust, DirectoryOnThePathOthersMayWriteIsRefused) {
  // Whoever may write /a could rename /a/b and put another plugin in its place.
  fs::path outer = scratch("writable_ancestor");
  fs::path inner = outer / "plugins";
  fs::create_directories(inner);
  fs::permissions(inner, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  fs::path library = copy_plugin("lazy", inner, "libunder_writable.so");
  fs::permissions(outer, fs::perms::all);  // 0777, not sticky
  EXPECT_THAT(load_error(library.string()),
              AllOf(HasSubstr("the directory " + outer.string() + " on its path"),
                    HasSubstr("writable by every user (mode 0777)")));
  fs::permissions(outer, fs::perms::others_write | fs::perms::group_write, fs::perm_options::remove);
  EXPECT_FALSE(is_mapped("libunder_writable.so"));
}

TEST(PluginTrust, DirectoryOnThePathOwnedByAnotherUserIsRefusedWhenRunningAsRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to chown, and to be the process the rule protects)";
  fs::path outer = scratch("other_owner_ancestor");
  fs::path inner = outer / "plugins";
  fs::create_directories(inner);
  fs::path library = copy_plugin("lazy", inner, "libunder_other_owner.so");
  ASSERT_EQ(chown(outer.c_str(), 4242, 4242), 0);
  EXPECT_THAT(load_error(library.string()),
              AllOf(HasSubstr("the directory " + outer.string() + " on its path is owned by uid 4242"),
                    HasSubstr("this process runs as root")));
  EXPECT_FALSE(is_mapped("libunder_other_owner.so"));
}

// ---- what a plugin needs (issue 32, D3), and who it says it is

// The constructors of the trust_* test plugins and of libtrust_dependency.so leave a file
// named after themselves in $ETRT_TRUST_MARKER_DIR: this test's own directory.
fs::path markers_for(const std::string& test) {
  fs::path dir = scratch(test + "_markers");
  setenv("ETRT_TRUST_MARKER_DIR", dir.c_str(), 1);
  return dir;
}

// A directory holding a copy of libtrust_dependency.so.
fs::path dependency_in(const fs::path& dir) {
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec);
  fs::copy_file(std::string(ETRT_TEST_PLUGIN_DIR) + "/trust_dependency/libtrust_dependency.so",
                dir / "libtrust_dependency.so", fs::copy_options::overwrite_existing);
  return dir;
}

// A copy of the trust_runpath or trust_rpath plugin whose search path is `search_path`, written
// over the placeholder it was linked with (NUL-padded, so the string table keeps its layout).
fs::path plugin_searching(const std::string& plugin, const std::string& search_path, const fs::path& dir,
                          const std::string& file_name) {
  std::ifstream in(plugin_path(plugin), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string placeholder = ETRT_TEST_TRUST_SEARCH_PLACEHOLDER;
  EXPECT_LE(search_path.size(), placeholder.size());
  std::string replacement = search_path;
  replacement.resize(placeholder.size(), '\0');
  size_t written = 0;
  for (size_t at = bytes.find(placeholder); at != std::string::npos; at = bytes.find(placeholder, at)) {
    bytes.replace(at, placeholder.size(), replacement);
    ++written;
  }
  EXPECT_GE(written, 1u) << "no search path placeholder in " << plugin_path(plugin);
  fs::create_directories(dir);
  fs::path to = dir / file_name;
  std::ofstream(to, std::ios::binary | std::ios::trunc) << bytes;
  fs::permissions(to, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                          fs::perms::others_read | fs::perms::others_exec);
  return to;
}

// What the dynamic loader brings in runs at once: nothing of a refused plugin may have.
void expect_nothing_ran(const fs::path& markers, const std::string& plugin_file) {
  EXPECT_FALSE(fs::exists(markers / "dependency")) << "libtrust_dependency.so's constructor ran";
  for (const char* plugin : {"test_trust_runpath", "test_trust_rpath", "test_trust_marker"})
    EXPECT_FALSE(fs::exists(markers / plugin)) << plugin << "'s constructor ran";
  EXPECT_FALSE(is_mapped(plugin_file));
  EXPECT_FALSE(is_mapped("libtrust_dependency.so"));
}

TEST(PluginTrust, DependencyInAWorldWritableSearchDirectoryIsRefusedBeforeItRuns) {
  fs::path dir = scratch("dependency_world_writable");
  fs::path markers = markers_for("dependency_world_writable");
  fs::path deps = dependency_in(dir / "deps");
  fs::permissions(deps, fs::perms::all | fs::perms::sticky_bit);  // 1777
  for (std::string tag : {"runpath", "rpath"}) {
    std::string file_name = "libneeds_through_" + tag + ".so";
    fs::path plugin = plugin_searching("trust_" + tag, deps.string(), dir, file_name);
    // Allow-listed: its digest pins the plugin, not what it brings in.
    fs::path list = dir / "allowed.txt";
    std::ofstream(list) << sha256_of(plugin) << "\n";
    setenv("ETRT_PLUGIN_ALLOWLIST", list.c_str(), 1);
    std::string error = load_error(plugin.string());
    unsetenv("ETRT_PLUGIN_ALLOWLIST");
    EXPECT_THAT(error, AllOf(HasSubstr(plugin.string()), HasSubstr("needs libtrust_dependency.so"),
                             HasSubstr("load from " + (deps / "libtrust_dependency.so").string()),
                             HasSubstr(tag == "runpath" ? "(DT_RUNPATH of the plugin)" : "(DT_RPATH of the plugin)"),
                             HasSubstr("its directory " + deps.string() + " is writable by every user (mode 1777)")));
    expect_nothing_ran(markers, file_name);
  }
}

TEST(PluginTrust, DependencyThroughARelativeSearchPathIsRefusedBeforeItRuns) {
  fs::path dir = scratch("dependency_relative");
  fs::path markers = markers_for("dependency_relative");
  dependency_in(dir / "deps");
  fs::path plugin = plugin_searching("trust_runpath", "deps", dir, "libneeds_relative.so");
  fs::path previous = fs::current_path();
  fs::current_path(dir);  // where "deps" would find the library
  std::string error = load_error(plugin.string());
  fs::current_path(previous);
  EXPECT_THAT(error, AllOf(HasSubstr("the plugin's DT_RUNPATH entry 'deps' is relative"),
                           HasSubstr("working directory, which is never trusted")));
  expect_nothing_ran(markers, "libneeds_relative.so");
}

TEST(PluginTrust, DependencyInADirectoryAnotherGroupMayWriteIsRefusedBeforeItRuns) {
  gid_t group = another_group();
  if (group == 0) GTEST_SKIP() << "this user's group is root's: no other group to give the directory to";
  fs::path dir = scratch("dependency_group_writable");
  fs::path markers = markers_for("dependency_group_writable");
  fs::path deps = dependency_in(dir / "deps");
  ASSERT_EQ(chown(deps.c_str(), -1, group), 0);
  fs::permissions(deps, fs::perms::group_write, fs::perm_options::add);  // 0775
  fs::path plugin = plugin_searching("trust_runpath", deps.string(), dir, "libneeds_group_writable.so");
  EXPECT_THAT(load_error(plugin.string()),
              AllOf(HasSubstr("needs libtrust_dependency.so"), HasSubstr((deps / "libtrust_dependency.so").string()),
                    HasSubstr("writable by group " + std::to_string(group) + " (mode 0775)")));
  expect_nothing_ran(markers, "libneeds_group_writable.so");
}

TEST(PluginTrust, DependencySearchedFirstInAWritableDirectoryIsRefused) {
  // The library is in a trusted directory, but the loader looks in a world-writable one first:
  // anyone could put a library of that name there.
  fs::path dir = scratch("dependency_shadowed");
  fs::path markers = markers_for("dependency_shadowed");
  fs::path open_dir = dir / "open";
  fs::create_directories(open_dir);
  fs::permissions(open_dir, fs::perms::all | fs::perms::sticky_bit);
  fs::path deps = dependency_in(dir / "deps");
  fs::path plugin = plugin_searching("trust_runpath", open_dir.string() + ":" + deps.string(), dir,
                                     "libneeds_shadowed.so");
  EXPECT_THAT(load_error(plugin.string()),
              AllOf(HasSubstr("look for it at " + (open_dir / "libtrust_dependency.so").string()),
                    HasSubstr("writable by every user"), HasSubstr("could create")));
  expect_nothing_ran(markers, "libneeds_shadowed.so");
}

TEST(PluginTrust, OriginEntryLeavingThePluginsDirectoryIsRefused) {
  fs::path dir = scratch("dependency_origin");
  fs::path markers = markers_for("dependency_origin");
  dependency_in(dir / "deps");
  fs::path plugin = plugin_searching("trust_runpath", "$ORIGIN/../deps", dir / "plugins", "libneeds_origin.so");
  EXPECT_THAT(load_error(plugin.string()),
              AllOf(HasSubstr("the plugin's DT_RUNPATH entry '$ORIGIN/../deps' leaves the plugin's own directory")));
  expect_nothing_ran(markers, "libneeds_origin.so");
}

TEST(PluginTrust, DependencyTheLoaderWouldNotFindIsNamed) {
  fs::path dir = scratch("dependency_missing");
  fs::path empty = dir / "empty";
  fs::create_directories(empty);
  fs::path plugin = plugin_searching("trust_runpath", empty.string(), dir, "libneeds_missing.so");
  EXPECT_THAT(load_error(plugin.string()),
              AllOf(HasSubstr("needs libtrust_dependency.so"), HasSubstr("would not find")));
}

TEST(PluginTrustDeathTest, DependencyInATrustedDirectoryLoadsAndRuns) {
  // In a child: once loaded, the library would satisfy every later search by its soname.
  fs::path dir = scratch("dependency_trusted");
  fs::path markers = markers_for("dependency_trusted");
  fs::path deps = dependency_in(dir / "deps");
  fs::path through_runpath = plugin_searching("trust_runpath", deps.string(), dir, "libneeds_trusted.so");
  fs::path through_rpath = plugin_searching("trust_rpath", deps.string(), dir, "libneeds_trusted_rpath.so");
  EXPECT_EXIT(
      {
        std::string error = load_error(through_runpath.string());
        if (error.empty()) error = load_error(through_rpath.string());
        if (!error.empty()) std::fprintf(stderr, "refused: %s\n", error.c_str());
        bool ran = fs::exists(markers / "dependency") && fs::exists(markers / "test_trust_runpath") &&
                   fs::exists(markers / "test_trust_rpath");
        bool works = error.empty() && call_reporting_kernel("test::trust_runpath_op") == 7 &&
                     call_reporting_kernel("test::trust_rpath_op") == 7 && is_mapped("libtrust_dependency.so");
        std::_Exit(ran && works ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(PluginTrustDeathTest, LibraryPathTheProcessStartedWithIsSearchedAndChecked) {
  // LD_LIBRARY_PATH counts as the dynamic loader read it at start: the child is a new process.
  ::testing::GTEST_FLAG(death_test_style) = "threadsafe";
  fs::path dir = scratch("dependency_library_path");
  fs::path open_dir = dependency_in(dir / "open");
  fs::permissions(open_dir, fs::perms::all | fs::perms::sticky_bit);
  fs::path deps = dependency_in(dir / "deps");
  fs::path plugin = plugin_searching("trust_runpath", deps.string(), dir, "libneeds_library_path.so");
  const char* previous = getenv("LD_LIBRARY_PATH");
  std::string saved = previous != nullptr ? previous : "";
  setenv("LD_LIBRARY_PATH", open_dir.c_str(), 1);
  EXPECT_EXIT(
      {
        // This child runs the test from the start under a scratch directory of its own, but the
        // LD_LIBRARY_PATH it started with names the parent's.
        std::string error = load_error(plugin.string());
        std::string parents = "/etrt_trust_" + std::to_string(getppid()) + "/dependency_library_path/open/";
        bool named = error.find(parents + "libtrust_dependency.so (LD_LIBRARY_PATH)") != std::string::npos &&
                     error.find("writable by every user") != std::string::npos;
        if (!named) std::fprintf(stderr, "unexpected: '%s'\n", error.c_str());
        std::_Exit(named && !is_mapped("libtrust_dependency.so") ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  if (previous != nullptr) setenv("LD_LIBRARY_PATH", saved.c_str(), 1);
  else unsetenv("LD_LIBRARY_PATH");
  ::testing::GTEST_FLAG(death_test_style) = "fast";
}

TEST(PluginTrust, ManifestNamingAnotherPluginIsRefusedBeforeItsCodeRuns) {
  fs::path dir = scratch("identity");
  fs::path markers = markers_for("identity");
  copy_plugin("trust_marker", dir, "libsomeone.so");
  std::ofstream(dir / "someone_else.json") << manifest_text("test_someone_else", "libsomeone.so",
                                                           "test::trust_marker_op");
  EXPECT_THAT(load_error((dir / "someone_else.json").string()),
              AllOf(HasSubstr("names it 'test_someone_else'"), HasSubstr("calls itself 'test_trust_marker'"),
                    HasSubstr("its soname is libetrt_test_trust_marker.so.1"),
                    HasSubstr("before any of its code ran")));
  expect_nothing_ran(markers, "libsomeone.so");
}

TEST(PluginTrust, ManifestLibraryWhoseSonameStatesNoPluginNameIsRefused) {
  fs::path dir = scratch("identity_unknown");
  fs::path markers = markers_for("identity_unknown");
  fs::path library = copy_plugin("trust_marker", dir, "libno_identity.so");
  std::ifstream in(library, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  size_t soname = bytes.find("libetrt_test_trust_marker.so.1");
  ASSERT_NE(soname, std::string::npos);
  bytes.replace(soname, 7, "libplug");  // "libplug_test_trust_marker.so.1": not libetrt_<name>.so.<major>
  std::ofstream(library, std::ios::binary | std::ios::trunc) << bytes;
  std::ofstream(dir / "no_identity.json") << manifest_text("test_trust_marker", "libno_identity.so",
                                                          "test::trust_marker_op");
  EXPECT_THAT(load_error((dir / "no_identity.json").string()),
              AllOf(HasSubstr("soname 'libplug_test_trust_marker.so.1' does not state a plugin name"),
                    HasSubstr("cannot be checked before its code runs")));
  expect_nothing_ran(markers, "libno_identity.so");
}

TEST(PluginTrustDeathTest, ManifestNamingThePluginLoadsItAndItsCodeRuns) {
  fs::path dir = scratch("identity_right");
  fs::path markers = markers_for("identity_right");
  copy_plugin("trust_marker", dir, "libmarker.so");
  std::ofstream(dir / "marker.json") << manifest_text("test_trust_marker", "libmarker.so", "test::trust_marker_op");
  EXPECT_EXIT(
      {
        std::string error = load_error((dir / "marker.json").string());
        if (!error.empty()) std::fprintf(stderr, "refused: %s\n", error.c_str());
        std::_Exit(error.empty() && fs::exists(markers / "test_trust_marker") ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
