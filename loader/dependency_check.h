// The libraries the dynamic loader would bring in with a plugin -- its
// DT_NEEDED libraries, theirs, and so on -- each found where the loader would
// find it (library_search.h) and checked like the plugin itself (trust.h),
// before the plugin is opened: a library's constructor runs as soon as it is
// loaded, so a dependency is trusted code exactly as the plugin is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "loader/library_search.h"

namespace etrt::loader {

struct DependencyLimits {
  size_t max_libraries = 256;  // libraries the loader would newly load with one plugin
  size_t max_depth = 32;       // needed by needed by ... the plugin
};

// "" when every library that loading the plugin (`data`, `size`) would load is
// trusted; otherwise why not, naming the library, where the loader would take
// it from and the rule ("needs libfoo.so.1 (DT_NEEDED of the plugin), which
// the dynamic loader would load from /x/libfoo.so.1 (DT_RUNPATH of the plugin):
// refused: its directory /x is writable by every user (mode 1777)").
// `load_path` is the name dlopen will be given; its directory is the plugin's $ORIGIN.
// The rules besides trust.h's:
// - no entry of a DT_RUNPATH or DT_RPATH is relative (or empty): the loader
//   resolves such an entry against the working directory;
// - the plugin's own entries that use $ORIGIN start with it and stay inside the
//   plugin's directory ("$ORIGIN/../lib" is refused);
// - every directory the search passes before the library is found is trusted
//   (whoever may write it could put the library there first);
// - a library the loader would not find, or could not load, is refused here.
std::string untrusted_dependency_reason(const uint8_t* data, size_t size, const std::string& load_path);
// The same against a given environment (tests).
std::string untrusted_dependency_reason(const uint8_t* data, size_t size, const std::string& load_path,
                                        const SearchEnvironment& env, const DependencyLimits& limits = {});

}  // namespace etrt::loader
