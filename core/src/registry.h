// The one registry of the process: plugins (declared by manifests or loaded),
// and the operators, backends and tracers they provide, with every decision
// the loader made kept for introspection.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "etrt/etrt.h"
#include "fenced_backend.h"
#include "loader/plugin_handle.h"

namespace etrt {

struct PluginRecord;
using loader::kind_name;

// One registration of a name by a plugin, once the registry accepted it.
struct Provider : loader::Registration {
  PluginRecord* plugin = nullptr;
};

// Concurrency: the declared fields never change after the record is added.
// The identity fields (name, version, ...) change once, when loading ends, under
// the registry's exclusive lock; read them under its shared lock, or without a
// lock once `state` says the plugin is loaded (they never change again).
struct PluginRecord {
  // Identity: from the manifest (or empty for a drop-in) until loaded, then the library's own.
  std::string name, version, description;
  std::string library_path;   // absolute
  std::string manifest_path;  // "" for a drop-in
  std::string expected_sha256;
  int32_t source = ET_SOURCE_EXPLICIT;
  int32_t priority = 0;
  uint32_t manifest_abi_major = 0, manifest_abi_minor = 0;
  std::vector<std::string> declared[3];  // by et_entry_kind
  // The manifest's CPU variants: the level of the library chosen (library_path) and
  // why; every variant's library, so none is mistaken for a drop-in.
  std::string cpu_level, cpu_level_reason;
  std::vector<std::string> variant_libraries;

  // Loading. Transitions happen under load_mutex; `state` may be read without it.
  std::mutex load_mutex;
  std::atomic<int32_t> state{ET_PLUGIN_DECLARED};
  std::string failure;
  int32_t failure_code = ET_OK;
  std::string warnings;
  uint32_t abi_major = 0, abi_minor = 0, built_abi_major = 0, built_abi_minor = 0;
  uint32_t load_count = 0;
  void* library = nullptr;
  // The handle the plugin got in init; kept until exit, as the plugin may keep it.
  std::unique_ptr<et_plugin_handle> handle;
  // Its backends as the host hands them out (fenced_backend.h); never moved, kept until exit.
  std::deque<FencedBackend> fenced_backends;
  // C++ exceptions that escaped its kernels, backends or tracers once loaded
  // (the first one is described in `warnings`), under the registry's lock.
  uint64_t faults = 0;

  bool declares(int32_t kind, const std::string& name) const;
};

class Registry {
 public:
  static Registry& instance();

  // Discovery. ensure_discovered() reads ETRT_PLUGIN_PATH and the default
  // manifests once; the add_* calls may come at any time.
  void ensure_discovered();
  et_error* add_manifest_path(const std::string& path, int32_t source);
  et_error* load_path(const std::string& path);
  et_error* load_all();

  // Lookups load the plugin providing a missing name, once, thread-safely.
  et_error* find(int32_t kind, const std::string& name, Provider* out);

  // Introspection snapshots (copies under the lock).
  std::vector<PluginRecord*> plugins();
  // Fills a C record with strings that stay valid until exit. False if out of range.
  bool describe(size_t index, et_plugin_record* out);
  // Index of the plugin that would serve `name` without loading anything, or -1.
  int64_t planned_provider(int32_t kind, const std::string& name);
  std::vector<std::pair<Provider, std::string>> entries(int32_t kind);  // with loser reasons
  std::vector<std::pair<std::string, std::string>> rejections();
  std::vector<std::string> manifests();

  void reject(const std::string& path, const std::string& reason);
  // A loaded plugin's exception stopped at the ABI (error.h's fault listener).
  void note_fault(const std::string& plugin, const std::string& message);

 private:
  Registry() = default;
  void retire_variant_drop_ins_locked(const PluginRecord& record);
  PluginRecord* add_record_locked(std::unique_ptr<PluginRecord> record, std::string* why_not);
  PluginRecord* find_record_by_library_locked(const std::string& real_path);
  PluginRecord* next_candidate_locked(int32_t kind, const std::string& name, const PluginRecord* winner);
  bool lookup_locked(int32_t kind, const std::string& name, Provider* out);
  et_error* load(PluginRecord* plugin);
  void add_directory(const std::string& dir, int32_t source, bool accept_drop_ins);
  et_error* add_manifest_file(const std::string& path, int32_t source);
  et_error* add_drop_in(const std::string& path, int32_t source);
  et_error* not_found(int32_t kind, const std::string& name);

  std::shared_mutex mutex_;
  std::once_flag discovered_;
  std::deque<std::unique_ptr<PluginRecord>> plugins_;
  std::map<std::string, std::vector<Provider>> providers_[3];  // by et_entry_kind, ordered winner first
  std::vector<std::pair<std::string, std::string>> rejections_;
  std::vector<std::pair<std::string, int32_t>> manifests_;  // files and directories consulted, with their source
};

}  // namespace etrt
