// The walk over what a plugin needs (dependency_check.h), on small hand-made
// libraries in scratch directories and a hermetic environment (no cache, no
// default directories, nothing loaded): found where the loader would find
// them, checked, cycles and limits, and the rules on search entries.
#include "loader/dependency_check.h"

#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace etrt::loader {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;
using Strings = std::vector<std::string>;
namespace fs = std::filesystem;

static_assert(sizeof(void*) == 8, "these tests write 64-bit ELF files");

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#endif

struct Library {
  Strings needed;
  std::string soname;
  std::string search;  // DT_RUNPATH (or DT_RPATH when rpath)
  bool rpath = false;
  uint16_t machine = kHostMachine;
};

// The smallest shared object the loader's search reads: an ELF header, one PT_LOAD mapping the
// whole file at address 0, and a PT_DYNAMIC naming what it needs.
Bytes library_bytes(const Library& spec) {
  std::string strings(1, '\0');
  auto add = [&](const std::string& s) {
    uint64_t offset = strings.size();
    strings += s + '\0';
    return offset;
  };
  std::vector<Elf64_Dyn> dynamic;
  for (const std::string& name : spec.needed) dynamic.push_back({DT_NEEDED, {add(name)}});
  if (!spec.soname.empty()) dynamic.push_back({DT_SONAME, {add(spec.soname)}});
  if (!spec.search.empty()) dynamic.push_back({spec.rpath ? DT_RPATH : DT_RUNPATH, {add(spec.search)}});
  size_t strings_at = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr);
  size_t dynamic_at = (strings_at + strings.size() + 7) & ~size_t{7};
  dynamic.push_back({DT_STRTAB, {strings_at}});
  dynamic.push_back({DT_STRSZ, {strings.size()}});
  dynamic.push_back({DT_NULL, {0}});
  Bytes out(dynamic_at + dynamic.size() * sizeof(Elf64_Dyn));
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
  eh.e_machine = spec.machine;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof(Elf64_Ehdr);
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 2;
  Elf64_Phdr load{};
  load.p_type = PT_LOAD;
  load.p_filesz = load.p_memsz = out.size();
  Elf64_Phdr dyn{};
  dyn.p_type = PT_DYNAMIC;
  dyn.p_offset = dyn.p_vaddr = dynamic_at;
  dyn.p_filesz = dyn.p_memsz = dynamic.size() * sizeof(Elf64_Dyn);
  std::memcpy(out.data(), &eh, sizeof eh);
  std::memcpy(out.data() + sizeof eh, &load, sizeof load);
  std::memcpy(out.data() + sizeof eh + sizeof load, &dyn, sizeof dyn);
  std::memcpy(out.data() + strings_at, strings.data(), strings.size());
  std::memcpy(out.data() + dynamic_at, dynamic.data(), dynamic.size() * sizeof(Elf64_Dyn));
  return out;
}

class DependencyCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("etrt_dependency_" + std::to_string(getpid()));
    fs::remove_all(root_);
    dir("");
    env_.lib_values = {"lib"};
    env_.platform_values = {"x86_64"};
    env_.ld_cache = "/nonexistent/ld.so.cache";  // hermetic: no cache, no default directories, nothing loaded
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(root_, fs::perms::owner_all, ignored);
    fs::remove_all(root_, ignored);
  }

  // A directory below the scratch root, mode 0755.
  std::string dir(const std::string& name) {
    fs::path path = root_ / name;
    fs::create_directories(path);
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    return path.string();
  }

  void write(const std::string& path, const Library& spec) {
    Bytes bytes = library_bytes(spec);
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }

  // The check of a plugin (held in memory) that is opened as <plugin_dir>/libplugin.so.
  std::string check(const Library& plugin, const std::string& plugin_dir, const DependencyLimits& limits = {}) {
    Bytes bytes = library_bytes(plugin);
    return untrusted_dependency_reason(bytes.data(), bytes.size(), plugin_dir + "/libplugin.so", env_, limits);
  }

  fs::path root_;
  SearchEnvironment env_;
};

TEST_F(DependencyCheck, GraphWithACycleIsWalkedOnce) {
  std::string libs = dir("libs");
  write(libs + "/liba.so", {{"libb.so"}, "liba.so", "$ORIGIN"});
  write(libs + "/libb.so", {{"liba.so", "libc_like.so"}, "libb.so", "$ORIGIN"});
  write(libs + "/libc_like.so", {{"libb.so"}, "libc_like.so", "$ORIGIN"});
  EXPECT_EQ(check({{"liba.so"}, "libetrt_p.so.1", libs}, dir("plugin")), "");
}

TEST_F(DependencyCheck, LibrariesAlreadyLoadedAreNotSearched) {
  LoadedObject loaded;
  loaded.path = "/somewhere/libloaded.so.3";
  loaded.soname = "libloaded.so.3";
  env_.loaded = {loaded};
  EXPECT_EQ(check({{"libloaded.so.3"}, "", ""}, dir("plugin")), "");
  EXPECT_THAT(check({{"libother.so.3"}, "", ""}, dir("plugin")),
              AllOf(HasSubstr("needs libother.so.3 (DT_NEEDED of the plugin)"), HasSubstr("would not find")));
}

TEST_F(DependencyCheck, FirstFoundInTheOrderIsChecked) {
  std::string first = dir("first"), second = dir("second");
  write(second + "/liba.so", {{}, "liba.so", ""});
  EXPECT_EQ(check({{"liba.so"}, "", first + ":" + second}, dir("plugin")), "");
  // A library for another machine is passed over, as the loader does; a broken one is refused.
  write(first + "/liba.so", {{}, "liba.so", "", false, static_cast<uint16_t>(kHostMachine == EM_S390 ? EM_ARM : EM_S390)});
  EXPECT_EQ(check({{"liba.so"}, "", first + ":" + second}, dir("plugin")), "");
  std::ofstream(first + "/liba.so", std::ios::trunc) << "not a library";
  EXPECT_THAT(check({{"liba.so"}, "", first + ":" + second}, dir("plugin")),
              AllOf(HasSubstr("load from " + first + "/liba.so (DT_RUNPATH of the plugin)"),
                    HasSubstr("not a library it can load: not an ELF file")));
}

TEST_F(DependencyCheck, WhatTheFoundLibraryNeedsIsCheckedToo) {
  std::string libs = dir("libs"), open = dir("open");
  fs::permissions(open, fs::perms::all);
  write(libs + "/liba.so", {{"libb.so"}, "liba.so", open});
  write(open + "/libb.so", {{}, "libb.so", ""});
  EXPECT_THAT(check({{"liba.so"}, "", libs}, dir("plugin")),
              AllOf(HasSubstr("needs libb.so (DT_NEEDED of " + libs + "/liba.so)"),
                    HasSubstr("(DT_RUNPATH of " + libs + "/liba.so)"),
                    HasSubstr("its directory " + open + " is writable by every user (mode 0777)")));
}

TEST_F(DependencyCheck, DirectoriesSearchedBeforeTheLibraryMustBeTrusted) {
  std::string open = dir("open"), libs = dir("libs");
  fs::permissions(open, fs::perms::all | fs::perms::sticky_bit);
  write(libs + "/liba.so", {{}, "liba.so", ""});
  EXPECT_THAT(check({{"liba.so"}, "", open + ":" + libs}, dir("plugin")),
              AllOf(HasSubstr("look for it at " + open + "/liba.so"), HasSubstr("could create " + open + "/liba.so")));
  // After the library is found the loader stops: a later directory does not matter.
  EXPECT_EQ(check({{"liba.so"}, "", libs + ":" + open}, dir("plugin")), "");
  // A CPU subdirectory the loader may try first counts as well.
  fs::create_directories(libs + "/glibc-hwcaps/x86-64-v3");
  fs::permissions(libs + "/glibc-hwcaps/x86-64-v3", fs::perms::all);
  EXPECT_THAT(check({{"liba.so"}, "", libs}, dir("plugin")),
              AllOf(HasSubstr(libs + "/glibc-hwcaps/x86-64-v3/liba.so"), HasSubstr("a CPU subdirectory"),
                    HasSubstr("writable by every user")));
}

TEST_F(DependencyCheck, RulesOnSearchEntries) {
  std::string libs = dir("libs");
  write(libs + "/liba.so", {{}, "liba.so", ""});
  std::string plugin = dir("plugin");
  EXPECT_THAT(check({{"liba.so"}, "", "libs"}, plugin), HasSubstr("the plugin's DT_RUNPATH entry 'libs' is relative"));
  EXPECT_THAT(check({{"liba.so"}, "", libs + "::/x"}, plugin), HasSubstr("entry '' is empty"));
  EXPECT_THAT(check({{"liba.so"}, "", "$ORIGIN/../libs", true}, plugin),
              HasSubstr("the plugin's DT_RPATH entry '$ORIGIN/../libs' leaves the plugin's own directory"));
  EXPECT_THAT(check({{"liba.so"}, "", root_.string() + "/$ORIGIN"}, plugin), HasSubstr("leaves the plugin's own"));
  // Below the plugin's own directory is fine.
  dir("plugin/x");
  std::string below = dir("plugin/lib");
  write(below + "/liba.so", {{}, "liba.so", ""});
  EXPECT_EQ(check({{"liba.so"}, "", "${ORIGIN}/x/../lib"}, plugin), "");
  // A library it needs may use $ORIGIN anywhere, but no relative entry.
  write(libs + "/libr.so", {{}, "libr.so", "$ORIGIN/../elsewhere:rel"});
  EXPECT_THAT(check({{"libr.so"}, "", libs}, plugin),
              HasSubstr(libs + "/libr.so's DT_RUNPATH entry 'rel' is relative"));
}

TEST_F(DependencyCheck, NeededByPath) {
  std::string libs = dir("libs");
  write(libs + "/liba.so", {{}, "liba.so", ""});
  EXPECT_EQ(check({{libs + "/liba.so"}, "", ""}, dir("plugin")), "");
  EXPECT_THAT(check({{"libs/liba.so"}, "", ""}, dir("plugin")), HasSubstr("is a relative path"));
}

TEST_F(DependencyCheck, Limits) {
  std::string libs = dir("libs");
  for (int i = 0; i < 5; ++i)
    write(libs + "/lib" + std::to_string(i) + ".so", {{"lib" + std::to_string(i + 1) + ".so"},
                                                      "lib" + std::to_string(i) + ".so", "$ORIGIN"});
  write(libs + "/lib5.so", {{}, "lib5.so", ""});
  Library plugin{{"lib0.so"}, "", libs};
  EXPECT_EQ(check(plugin, dir("plugin")), "");
  DependencyLimits shallow;
  shallow.max_depth = 3;
  EXPECT_THAT(check(plugin, dir("plugin"), shallow), HasSubstr("nested more than 3 levels deep"));
  DependencyLimits few;
  few.max_libraries = 4;
  EXPECT_THAT(check(plugin, dir("plugin"), few), HasSubstr("would bring in more than 4 libraries"));
}

TEST_F(DependencyCheck, CorruptPluginIsAnErrorNotACrash) {
  Bytes bytes = library_bytes({{"liba.so"}, "", ""});
  bytes.resize(100);
  EXPECT_THAT(untrusted_dependency_reason(bytes.data(), bytes.size(), "/x/libplugin.so", env_),
              HasSubstr("cannot read what it needs"));
}

}  // namespace
}  // namespace etrt::loader
