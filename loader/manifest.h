// Plugin manifests: JSON files, validated against manifests/schema.json (which
// is compiled into libetrt), that say what a plugin provides without loading it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loader/cpu_level.h"

namespace etrt::loader {

struct Manifest {
  std::string path;          // the manifest file, absolute
  std::string name;
  std::string version;
  std::string description;
  std::string library;       // absolute (resolved relative to the manifest)
  std::string sha256;        // lowercase hex or ""
  std::string cpu_level;     // the level `library` needs; "" : its architecture's baseline
  std::vector<LibraryVariant> variants;  // builds for other levels (libraries absolute); usually empty
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  int32_t priority = 0;
  std::vector<std::string> operators;
  std::vector<std::string> backends;
  std::vector<std::string> tracers;
};

// Reads and validates one manifest. On failure returns false and sets *error to
// one line per problem, each "FILE:LINE: field 'F': PROBLEM".
bool read_manifest(const std::string& path, Manifest* out, std::string* error);

// Every library the manifest offers: `library` first, then its variants.
std::vector<LibraryVariant> library_candidates(const Manifest& manifest);

// A plugin's name as its file states it, readable before any of its code runs:
// etrt_add_plugin gives every plugin the soname libetrt_<name>.so.<ABI major>.
// "" when `soname` has another form.
std::string plugin_name_in_soname(const std::string& soname);

// "" when the library's soname states the name the manifest gives it;
// otherwise why not (the loader refuses it then, before opening it).
std::string identity_mismatch_reason(const std::string& manifest_path, const std::string& manifest_name,
                                     const std::string& soname);

// The schema text compiled into libetrt.
std::string_view manifest_schema();

}  // namespace etrt::loader
