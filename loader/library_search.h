// Where the dynamic loader (glibc's ld.so) looks for a library a shared object
// needs (DT_NEEDED), so the trust check (dependency_check.h) examines the
// file the loader would load. The order, for a name without a '/':
//   1. when the object has no DT_RUNPATH: its DT_RPATH, then its loaders' (the
//      object that needed it, and so on up to the plugin: a library opened with
//      dlopen has no loader), then the program's;
//   2. LD_LIBRARY_PATH as it was when the process started, unless the process
//      runs in secure mode (setuid, setgid, capabilities);
//   3. the object's DT_RUNPATH;
//   4. /etc/ld.so.cache, then the default directories, unless the object is
//      marked DF_1_NODEFLIB.
// $ORIGIN, $LIB and $PLATFORM are expanded in each entry; an empty entry is the
// working directory. In each directory the loader first tries subdirectories
// for the CPU (glibc-hwcaps/<level>, and before glibc 2.37 tls/<platform>/...).
// A library already loaded under the name, or with it as soname, is used as is.
//
// Where this process cannot know the loader's choice for sure (which CPU
// subdirectory it takes, what $LIB and $PLATFORM stand for, the order of the
// default directories), a directory is marked uncertain: it is checked, but a
// library found there does not end the search, so whatever the loader picks
// has been checked.
#pragma once

#include <string>
#include <vector>

namespace etrt::loader {

// What an object contributes to the search for the libraries it needs.
struct SearchPaths {
  std::string name;    // how messages name it
  std::string origin;  // its $ORIGIN: the directory of the path the loader opened it by
  bool has_rpath = false, has_runpath = false;
  std::string rpath, runpath;  // as written in the file (':'-separated)
  bool no_default_libraries = false;
};

// An object of this process, as the dynamic loader knows it.
struct LoadedObject {
  std::string path;  // the name it was loaded by ("" for the program)
  std::string soname;
  SearchPaths search;
  bool is_program = false;
};

// What the search depends on besides the files themselves.
struct SearchEnvironment {
  bool secure = false;  // AT_SECURE: LD_LIBRARY_PATH is ignored
  bool has_library_path = false;
  std::string library_path;                  // LD_LIBRARY_PATH at process start
  std::string program_origin;                // $ORIGIN in LD_LIBRARY_PATH
  std::vector<std::string> lib_values;       // what $LIB may stand for
  std::vector<std::string> platform_values;  // what $PLATFORM may stand for
  std::vector<std::string> legacy_subdirs;   // names of the legacy CPU subdirectories
  std::vector<std::string> default_dirs;
  std::string ld_cache = "/etc/ld.so.cache";
  std::vector<LoadedObject> loaded;
};

// This process, now: the objects loaded at this moment, the rest as the loader set it up at start.
SearchEnvironment process_search_environment();

// One place the search looks.
struct SearchStep {
  enum Kind { kDirectory, kLdCache } kind = kDirectory;
  std::string directory;  // expanded; may be relative (then the check refuses it)
  std::string entry;      // the entry as written (before expansion)
  std::string source;     // "DT_RUNPATH of X", "LD_LIBRARY_PATH", "a default directory", ...
  bool certain = true;    // the loader surely looks here, so a library found here ends the search
};

// The steps, in the loader's order, for a library needed by chain[0], whose
// loaders are chain[1], chain[2], ... (the plugin last). The program's DT_RPATH
// comes from `env`.
std::vector<SearchStep> search_steps(const std::vector<const SearchPaths*>& chain, const SearchEnvironment& env);

// The entries of a search list: separated by any of `separators`, empty entries kept
// (the loader reads an empty entry as the working directory).
std::vector<std::string> split_search_list(const std::string& list, const char* separators);

// `entry` with $ORIGIN/${ORIGIN}, $LIB and $PLATFORM replaced: one directory per
// combination of the values they may stand for; an empty entry becomes ".".
std::vector<std::string> expand_entry(const std::string& entry, const std::string& origin,
                                      const SearchEnvironment& env);

// Whether `entry` uses $ORIGIN (either spelling).
bool uses_origin(const std::string& entry);

// Subdirectories of `dir` that exist and that the loader tries before `dir`
// itself on some CPUs: glibc-hwcaps/*, and nested legacy ones.
std::vector<std::string> cpu_subdirectories(const std::string& dir, const SearchEnvironment& env);

}  // namespace etrt::loader
