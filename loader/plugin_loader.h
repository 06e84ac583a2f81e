// Brings one plugin in: checks the file, dlopens it, negotiates the ABI and
// runs its init, in that order, so no plugin code runs before the checks pass.
// Knows nothing of the registry: it is told what was declared and returns what
// it found; the registry decides what to keep.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "etrt/etrt.h"
#include "loader/plugin_handle.h"

namespace etrt::loader {

// What the loader is asked to load, as declared by a manifest (or a bare path).
struct PluginRequest {
  std::string library_path;     // absolute
  std::string manifest_path;    // "" for a drop-in or an explicit library path
  std::string manifest_name;    // the name the manifest gives; checked against the library's own
  std::string expected_sha256;  // "" when the manifest pins nothing
  uint32_t manifest_abi_major = 0, manifest_abi_minor = 0;
  const std::vector<std::string>* declared = nullptr;  // [3] by et_entry_kind; null: nothing declared
};

// What loading found. `code` is ET_OK on success; otherwise `error` says why
// (prefixed "plugin <path>: ") and `plugin_name` names the library when known.
struct LoadResult {
  int32_t code = ET_OK;
  std::string error;
  // The failure may pass: the system ran out of descriptors or memory while
  // the file was read or mapped, before any of the plugin's code ran
  // (is_temporary_failure). The registry leaves such a plugin loadable.
  bool temporary = false;
  std::string plugin_name, version, description;
  std::string warnings;  // one line each
  uint32_t abi_major = 0, abi_minor = 0, built_abi_major = 0, built_abi_minor = 0;
  void* library = nullptr;                   // never closed once opened
  std::unique_ptr<et_plugin_handle> handle;  // set once init ran; must outlive the library (keep it)
  std::vector<Registration> registrations;   // what init registered, when it succeeded
};

LoadResult load_plugin_library(const PluginRequest& request, const et_host_api* host);

// Whether a failure, in the words of the system (strerror) or of the dynamic
// loader, says that the process ran out of something that may come back: file
// descriptors (EMFILE, ENFILE) or memory (ENOMEM, or the dynamic loader's
// "failed to map segment", which gives no reason). Anything else is final.
bool is_temporary_failure(const std::string& error);

// Tests only: called with the library path after the file was checked and
// hashed, just before dlopen (to swap the file under the loader's feet).
using BeforeDlopenHook = void (*)(const std::string& path, void* context);
void set_before_dlopen_hook_for_testing(BeforeDlopenHook hook, void* context);

}  // namespace etrt::loader
