// The plugin trust policy (docs/TRUST.md): which files and directories the
// loader accepts, and the optional allow-list of library hashes.
#pragma once

#include <set>
#include <string>

#include <sys/stat.h>

namespace etrt::loader {

// Why a file with status `st` must not be loaded, or "" if it may: writable
// by every user, or, in a process running as root, owned by another user.
std::string untrusted_file_reason(const struct stat& st);
// The same for the directory holding `resolved_path` (others could replace the file).
std::string untrusted_directory_reason(const std::string& resolved_path);

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
