// The plugin trust policy (docs/TRUST.md): which files and directories the
// loader accepts, and the optional allow-list of library hashes.
#pragma once

#include <set>
#include <string>

#include <sys/stat.h>

namespace etrt::loader {

// Writable by someone other than the owner and root: by every user, or by a
// group other than root's (gid 0).
bool writable_by_others(const struct stat& st);

// Why a file with status `st` must not be loaded, or "" if it may: writable
// by others (above), or, in a process running as root, owned by another user.
std::string untrusted_file_reason(const struct stat& st);

// Walks `path` from the root directory the way the kernel resolves it, symlinks
// included, and checks every directory it looks a name up in:
// - in a process running as root, the directory must be owned by root;
// - it must not be writable by others, except that a sticky directory (such as
//   /tmp) may be passed through when the entry looked up is owned by root or by
//   this process's user (only they may rename it);
// - the directory holding the last component, and a directory in which a name
//   is missing, must not be writable by others at all: anyone could add the name.
// A relative path is never trusted (the working directory is the caller's choice).
struct PathCheck {
  std::string problem;   // "" when the path is trusted; else "refused: ..."
  std::string resolved;  // `path` with every symlink resolved, as far as it exists
  bool exists = false;   // the last component exists (then, with no problem, `status` is its stat)
  struct stat status {};
};
PathCheck check_path(const std::string& path);

// ETRT_PLUGIN_ALLOWLIST names a file of SHA-256 digests (one per line, '#'
// comments); when set, only libraries whose digest is listed load.
struct AllowList {
  bool active = false;
  std::string source;  // the file named by the variable
  std::string error;   // set when the file cannot be used: then nothing loads
  std::set<std::string> digests;
};
AllowList allowlist_from_env();  // read at each call; secure_getenv

}  // namespace etrt::loader
