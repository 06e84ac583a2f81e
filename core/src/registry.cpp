#include "registry.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "loader/cpu_level.h"
#include "loader/discovery.h"
#include "loader/manifest.h"
#include "loader/plugin_loader.h"
#include "error.h"
#include "host_api.h"
#include "logging.h"
#include "report_json.h"

namespace fs = std::filesystem;

namespace etrt {
namespace {

std::string real_path(const std::string& path) {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : resolved.string();
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool looks_like_shared_object(const std::string& name) {
  return ends_with(name, ".so") || name.find(".so.") != std::string::npos;
}

// Winner first: higher priority, then earlier search source, then name, then path.
// Declared and loaded plugins are ranked alike, so what is loaded never changes the choice.
bool record_before(const PluginRecord& a, const PluginRecord& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.source != b.source) return a.source < b.source;
  if (a.name != b.name) return a.name < b.name;
  return a.library_path < b.library_path;
}

bool provider_before(const Provider& a, const Provider& b) { return record_before(*a.plugin, *b.plugin); }

constexpr const char* kSchemaFileName = "schema.json";

const char* source_name(int32_t source) {
  switch (source) {
    case ET_SOURCE_EXPLICIT: return "explicit load";
    case ET_SOURCE_HOST_MANIFEST: return "host-given manifest";
    case ET_SOURCE_ENV: return "ETRT_PLUGIN_PATH";
    default: return "default manifests";
  }
}

std::string loser_reason(const Provider& loser, const Provider& winner) {
  const PluginRecord& l = *loser.plugin;
  const PluginRecord& w = *winner.plugin;
  if (l.priority != w.priority)
    return "priority " + std::to_string(l.priority) + " is lower than " + std::to_string(w.priority) +
           " of plugin '" + w.name + "'";
  if (l.source != w.source)
    return "same priority " + std::to_string(l.priority) + " as plugin '" + w.name + "', which comes from " +
           source_name(w.source) + ", earlier in the search order than " + source_name(l.source);
  return "same priority " + std::to_string(l.priority) + " and source as plugin '" + w.name +
         "'; ties go to the plugin whose name (then path) sorts first";
}

// Picks the manifest's library for this CPU, before anything is loaded: sets the
// record's library, hash and level. A declared variant whose file is missing is
// an error here (a broken install, never a silent fall back to a lower level).
bool choose_variant(const loader::Manifest& manifest, PluginRecord* record, std::string* error) {
  std::vector<loader::LibraryVariant> candidates = loader::library_candidates(manifest);
  record->library_path = real_path(manifest.library);
  for (const loader::LibraryVariant& candidate : candidates) {
    record->variant_libraries.push_back(real_path(candidate.library));
    std::error_code ec;
    if (candidates.size() > 1 && !fs::exists(candidate.library, ec)) {
      *error = "the library of CPU level '" + (candidate.cpu_level.empty() ? std::string("(none)") : candidate.cpu_level) +
               "', " + candidate.library + ", does not exist (the manifest declares it: install it or remove the variant)";
      return false;
    }
  }
  loader::VariantChoice choice =
      loader::choose_library_variant(candidates, loader::this_cpu(), loader::cpu_level_limit_from_env());
  if (!choice.ok) {
    *error = choice.error;
    return false;
  }
  const loader::LibraryVariant& chosen = candidates[choice.index];
  record->library_path = real_path(chosen.library);
  record->expected_sha256 = chosen.sha256;
  record->cpu_level = choice.level;
  record->cpu_level_reason = choice.reason;
  return true;
}

}  // namespace

bool PluginRecord::declares(int32_t kind, const std::string& wanted) const {
  const auto& list = declared[kind];
  return std::find(list.begin(), list.end(), wanted) != list.end();
}

Registry& Registry::instance() {
  // Leaked on purpose: plugins' code may run during exit; the registry must outlive it.
  static Registry* registry = [] {
    auto* created = new Registry();
    set_plugin_fault_listener([](const std::string& plugin, const std::string& message) {
      Registry::instance().note_fault(plugin, message);
    });
    return created;
  }();
  return *registry;
}

void Registry::note_fault(const std::string& plugin, const std::string& message) {
  {
    std::unique_lock lock(mutex_);
    for (auto& record : plugins_) {
      if (record->state.load() != ET_PLUGIN_LOADED || record->name != plugin) continue;
      // The first is described; a plugin failing every call must not grow the record without bound.
      if (record->faults++ == 0) record->warnings += "broke the ABI at run time: " + message + "\n";
      break;
    }
  }
  log_message(LogLevel::Warn, message);
}

void Registry::ensure_discovered() {
  std::call_once(discovered_, [this] {
    for (const std::string& entry : loader::plugin_path_from_env()) {
      if (fs::path(entry).is_relative()) {
        std::string reason = "relative ETRT_PLUGIN_PATH entry refused: entries must be absolute paths "
                             "(they are never resolved against the working directory)";
        log_message(LogLevel::Warn, "ETRT_PLUGIN_PATH entry '" + entry + "': " + reason);
        reject(entry, reason);
        continue;
      }
      add_manifest_path(entry, ET_SOURCE_ENV);
    }
    std::string defaults = loader::default_manifest_dir();
    if (!defaults.empty()) add_manifest_path(defaults, ET_SOURCE_DEFAULT);
  });
}

void Registry::reject(const std::string& path, const std::string& reason) {
  log_message(LogLevel::Info, "rejected " + path + ": " + reason);
  std::unique_lock lock(mutex_);
  rejections_.emplace_back(path, reason);
}

PluginRecord* Registry::find_record_by_library_locked(const std::string& real) {
  // Prefer a live record; a shadowed or failed one only if nothing else has the file.
  PluginRecord* failed = nullptr;
  for (auto& record : plugins_) {
    if (record->library_path != real) continue;
    if (record->state.load() != ET_PLUGIN_FAILED) return record.get();
    if (failed == nullptr) failed = record.get();
  }
  return failed;
}

PluginRecord* Registry::add_record_locked(std::unique_ptr<PluginRecord> record, std::string* why_not) {
  auto where = [](const PluginRecord& r) { return r.manifest_path.empty() ? r.library_path : r.manifest_path; };
  for (auto& other : plugins_) {
    if (other->state.load() == ET_PLUGIN_FAILED) continue;
    bool same_library = other->library_path == record->library_path;
    bool same_name = !record->name.empty() && other->name == record->name;
    if (!same_library && !same_name) continue;
    // A source earlier in the search order shadows a later one not yet loaded,
    // whatever order the host added them in.
    std::unique_lock<std::mutex> other_loading(other->load_mutex, std::try_to_lock);
    if (record->source < other->source && other_loading.owns_lock() && other->state.load() == ET_PLUGIN_DECLARED) {
      other->failure = "shadowed by " + where(*record) + " (earlier in the search order)";
      other->failure_code = ET_ERR_ALREADY_EXISTS;
      other->state.store(ET_PLUGIN_FAILED);
      rejections_.emplace_back(where(*other), other->failure);
      continue;
    }
    *why_not = (same_name ? "plugin '" + record->name + "'" : "library " + record->library_path) +
               " is already declared by " + where(*other) + " (earlier in the search order)";
    return nullptr;
  }
  plugins_.push_back(std::move(record));
  return plugins_.back().get();
}

et_error* Registry::add_manifest_file(const std::string& path, int32_t source) {
  loader::Manifest manifest;
  std::string error;
  if (!loader::read_manifest(path, &manifest, &error)) {
    reject(path, error);
    return make_error(ET_ERR_INVALID_FILE, error);
  }
  if (manifest.abi_major != ET_ABI_MAJOR) {
    std::string reason = "manifest declares plugin ABI " + std::to_string(manifest.abi_major) + "." +
                         std::to_string(manifest.abi_minor) + ", this host speaks ABI " +
                         std::to_string(ET_ABI_MAJOR) + ".0-" + std::to_string(ET_ABI_MAJOR) + "." +
                         std::to_string(ET_ABI_MINOR) + "; not loading " + manifest.library;
    reject(path, reason);
    return make_error(ET_ERR_ABI_MISMATCH, path + ": " + reason);
  }
  auto record = std::make_unique<PluginRecord>();
  record->name = manifest.name;
  record->version = manifest.version;
  record->description = manifest.description;
  record->manifest_path = manifest.path;
  record->source = source;
  record->priority = manifest.priority;
  record->manifest_abi_major = manifest.abi_major;
  record->manifest_abi_minor = manifest.abi_minor;
  record->declared[ET_ENTRY_OPERATOR] = std::move(manifest.operators);
  record->declared[ET_ENTRY_BACKEND] = std::move(manifest.backends);
  record->declared[ET_ENTRY_TRACER] = std::move(manifest.tracers);
  std::string variant_error;
  if (!choose_variant(manifest, record.get(), &variant_error)) {
    // Recorded as failed, so a lookup of what it declares says why it is missing.
    record->failure = path + ": " + variant_error;
    record->failure_code = ET_ERR_LOAD_FAILED;
    record->state.store(ET_PLUGIN_FAILED);
    {
      std::unique_lock lock(mutex_);
      for (auto& other : plugins_)
        if (other->manifest_path == record->manifest_path) return nullptr;  // this very file, again
      plugins_.push_back(std::move(record));
    }
    reject(path, variant_error);
    return make_error(ET_ERR_LOAD_FAILED, path + ": " + variant_error);
  }
  std::string why_not;
  {
    std::unique_lock lock(mutex_);
    for (auto& other : plugins_)
      if (other->manifest_path == record->manifest_path) return nullptr;  // this very file, again
    retire_variant_drop_ins_locked(*record);
    if (add_record_locked(std::move(record), &why_not) != nullptr) return nullptr;
  }
  reject(path, why_not);
  return make_error(ET_ERR_ALREADY_EXISTS, path + ": " + why_not);
}

// A directory on ETRT_PLUGIN_PATH read before this manifest may have offered one
// of its CPU variants as a drop-in: that file is this plugin, not another one.
void Registry::retire_variant_drop_ins_locked(const PluginRecord& record) {
  for (auto& other : plugins_) {
    const auto& variants = record.variant_libraries;
    if (!other->manifest_path.empty() || std::find(variants.begin(), variants.end(), other->library_path) == variants.end())
      continue;
    std::unique_lock<std::mutex> other_loading(other->load_mutex, std::try_to_lock);
    if (!other_loading.owns_lock() || other->state.load() != ET_PLUGIN_DECLARED) continue;
    other->failure = "a CPU variant of plugin '" + record.name + "', declared by " + record.manifest_path;
    other->failure_code = ET_ERR_ALREADY_EXISTS;
    other->state.store(ET_PLUGIN_FAILED);
    rejections_.emplace_back(other->library_path, other->failure);
  }
}

et_error* Registry::add_drop_in(const std::string& path, int32_t source) {
  auto record = std::make_unique<PluginRecord>();
  record->library_path = real_path(path);
  record->source = source;
  record->name = "";  // known once loaded
  std::unique_lock lock(mutex_);
  if (find_record_by_library_locked(record->library_path) != nullptr) return nullptr;  // declared by a manifest
  for (auto& other : plugins_) {  // another CPU level's build of a declared plugin
    const auto& variants = other->variant_libraries;
    if (std::find(variants.begin(), variants.end(), record->library_path) != variants.end()) return nullptr;
  }
  plugins_.push_back(std::move(record));
  return nullptr;
}

void Registry::add_directory(const std::string& dir, int32_t source, bool accept_drop_ins) {
  std::error_code ec;
  std::vector<std::string> manifests, libraries;
  for (const auto& item : fs::directory_iterator(dir, ec)) {
    std::string file = item.path().string();
    // The manifest schema may be installed beside the manifests; it is the one .json that is not one.
    bool is_schema = item.path().filename() == kSchemaFileName;
    if (ends_with(file, ".json") && !is_schema) manifests.push_back(file);
    else if (accept_drop_ins && looks_like_shared_object(item.path().filename().string())) libraries.push_back(file);
  }
  if (ec) {
    reject(dir, "cannot read directory: " + ec.message());
    return;
  }
  // Sorted, so the order (and so every tie-break) never depends on the filesystem.
  std::sort(manifests.begin(), manifests.end());
  std::sort(libraries.begin(), libraries.end());
  for (const std::string& file : manifests) et_error_destroy(add_manifest_file(file, source));
  for (const std::string& file : libraries) et_error_destroy(add_drop_in(file, source));
}

et_error* Registry::add_manifest_path(const std::string& path, int32_t source) {
  std::error_code ec;
  std::string absolute = fs::absolute(path, ec).lexically_normal().string();
  {
    std::unique_lock lock(mutex_);
    for (const auto& [known, known_source] : manifests_)
      if (known == absolute) return nullptr;
    manifests_.emplace_back(absolute, source);
  }
  if (fs::is_directory(absolute, ec)) {
    add_directory(absolute, source, source == ET_SOURCE_ENV);
    return nullptr;
  }
  if (!fs::exists(absolute, ec)) {
    std::string reason = "no such file or directory";
    reject(absolute, reason);
    return make_error(ET_ERR_NOT_FOUND, absolute + ": " + reason);
  }
  if (source == ET_SOURCE_ENV && looks_like_shared_object(fs::path(absolute).filename().string()))
    return add_drop_in(absolute, source);
  return add_manifest_file(absolute, source);
}

et_error* Registry::load_path(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return make_error(ET_ERR_NOT_FOUND, "plugin " + path + ": no such file");
  PluginRecord* record = nullptr;
  if (ends_with(path, ".json")) {
    loader::Manifest manifest;
    std::string error;
    if (!loader::read_manifest(path, &manifest, &error)) {
      reject(path, error);
      return make_error(ET_ERR_INVALID_FILE, error);
    }
    et_error* added = add_manifest_path(path, ET_SOURCE_EXPLICIT);
    std::shared_lock lock(mutex_);
    // This manifest's own record (its library may be another CPU level's), else whoever has the file.
    PluginRecord* failed_own = nullptr;
    for (auto& other : plugins_) {
      if (other->manifest_path != manifest.path) continue;
      if (other->state.load() != ET_PLUGIN_FAILED) record = other.get();
      else failed_own = other.get();
    }
    if (record == nullptr) record = find_record_by_library_locked(real_path(manifest.library));
    if (record == nullptr) record = failed_own;
    if (record == nullptr) return added != nullptr ? added : make_error(ET_ERR_INTERNAL, path + ": not recorded");
    et_error_destroy(added);  // e.g. already declared: loading it again is a no-op
  } else {
    std::string real = real_path(path);
    {
      std::unique_lock lock(mutex_);
      record = find_record_by_library_locked(real);
      if (record == nullptr) {
        auto fresh = std::make_unique<PluginRecord>();
        fresh->library_path = real;
        fresh->source = ET_SOURCE_EXPLICIT;
        plugins_.push_back(std::move(fresh));
        record = plugins_.back().get();
      }
    }
  }
  return load(record);
}

et_error* Registry::load(PluginRecord* plugin) {
  std::lock_guard guard(plugin->load_mutex);
  int32_t state = plugin->state.load();
  if (state == ET_PLUGIN_LOADED) return nullptr;  // loading again is a no-op
  if (state == ET_PLUGIN_FAILED) return make_error(plugin->failure_code, plugin->failure);

  loader::PluginRequest request;
  request.library_path = plugin->library_path;
  request.manifest_path = plugin->manifest_path;
  request.manifest_name = plugin->name;
  request.expected_sha256 = plugin->expected_sha256;
  request.manifest_abi_major = plugin->manifest_abi_major;
  request.manifest_abi_minor = plugin->manifest_abi_minor;
  request.declared = plugin->manifest_path.empty() ? nullptr : plugin->declared;
  loader::LoadResult result = loader::load_plugin_library(request, host_api());
  if (!result.warnings.empty())
    log_message(LogLevel::Warn, "plugin " + plugin->library_path + ": " + result.warnings);

  std::unique_lock lock(mutex_);
  if (result.code == ET_OK) {
    // Two files may claim one identity; the first loaded keeps it.
    for (auto& other : plugins_) {
      if (other.get() != plugin && other->state.load() == ET_PLUGIN_LOADED && other->name == result.plugin_name) {
        result.code = ET_ERR_ALREADY_EXISTS;
        result.error = "plugin " + plugin->library_path + ": a plugin named '" + result.plugin_name +
                       "' is already loaded from " + other->library_path;
        break;
      }
    }
  }
  if (result.code != ET_OK && result.temporary) {
    // Nothing of the plugin ran and nothing is kept: it stays declared, and the next need tries again.
    plugin->failure = result.error + " (temporary: loading is tried again when the plugin is next needed)";
    plugin->failure_code = result.code;
    std::string message = plugin->failure;
    lock.unlock();
    log_message(LogLevel::Warn, message);
    return make_error(result.code, message);
  }
  plugin->warnings = std::move(result.warnings);
  plugin->library = result.library;
  plugin->handle = std::move(result.handle);
  if (result.code != ET_OK) {
    plugin->failure = result.error;
    plugin->failure_code = result.code;
    plugin->state.store(ET_PLUGIN_FAILED);
    rejections_.emplace_back(plugin->library_path, result.error);
    lock.unlock();
    log_message(LogLevel::Warn, result.error);
    return make_error(result.code, result.error, result.plugin_name);
  }
  plugin->failure.clear();  // a temporary failure of an earlier attempt
  plugin->failure_code = ET_OK;
  plugin->name = std::move(result.plugin_name);
  plugin->version = std::move(result.version);
  plugin->description = std::move(result.description);
  plugin->abi_major = result.abi_major;
  plugin->abi_minor = result.abi_minor;
  plugin->built_abi_major = result.built_abi_major;
  plugin->built_abi_minor = result.built_abi_minor;
  plugin->load_count += 1;
  for (loader::Registration& registration : result.registrations) {
    Provider provider;
    static_cast<loader::Registration&>(provider) = std::move(registration);
    provider.plugin = plugin;
    if (provider.kind == ET_ENTRY_BACKEND)  // handed out fenced (fenced_backend.h)
      provider.backend = fenced_backend_descriptor(plugin->fenced_backends.emplace_back(
          FencedBackend{provider.backend, plugin->name}));
    auto& list = providers_[provider.kind][provider.name];
    list.push_back(std::move(provider));
    std::stable_sort(list.begin(), list.end(), provider_before);
  }
  plugin->state.store(ET_PLUGIN_LOADED);
  std::string message = "loaded plugin '" + plugin->name + "' " + plugin->version + " from " + plugin->library_path;
  lock.unlock();
  log_message(LogLevel::Info, message);
  return nullptr;
}

et_error* Registry::load_all() {
  ensure_discovered();
  et_error* first = nullptr;
  for (PluginRecord* plugin : plugins()) {
    if (plugin->state.load() != ET_PLUGIN_DECLARED) continue;
    et_error* error = load(plugin);
    if (first == nullptr) first = error;
    else et_error_destroy(error);
  }
  return first;
}

PluginRecord* Registry::next_candidate_locked(int32_t kind, const std::string& name, const PluginRecord* winner) {
  // A declared plugin that outranks the current winner (or any, when there is none) is loaded first.
  PluginRecord* best = nullptr;
  for (auto& record : plugins_) {
    if (record->state.load() != ET_PLUGIN_DECLARED || !record->declares(kind, name)) continue;
    if (winner != nullptr && !record_before(*record, *winner)) continue;
    if (best == nullptr || record_before(*record, *best)) best = record.get();
  }
  if (best != nullptr || winner != nullptr) return best;
  // Last resort: drop-ins without a manifest, whose contents are unknown until loaded.
  for (auto& record : plugins_)
    if (record->state.load() == ET_PLUGIN_DECLARED && record->manifest_path.empty()) return record.get();
  return nullptr;
}

bool Registry::lookup_locked(int32_t kind, const std::string& name, Provider* out) {
  auto found = providers_[kind].find(name);
  if (found == providers_[kind].end() || found->second.empty()) return false;
  // The generic provider serves plain lookups; dtype variants are asked for by variant.
  auto generic = std::find_if(found->second.begin(), found->second.end(),
                              [](const Provider& p) { return p.variant.empty(); });
  *out = generic != found->second.end() ? *generic : found->second.front();
  return true;
}

et_error* Registry::find(int32_t kind, const std::string& name, Provider* out) {
  ensure_discovered();
  for (;;) {
    PluginRecord* candidate = nullptr;
    {
      // One lock for both questions: a plugin commits its providers and leaves
      // DECLARED atomically, so neither answer can race with its loading.
      std::shared_lock lock(mutex_);
      bool found = lookup_locked(kind, name, out);
      candidate = next_candidate_locked(kind, name, found ? out->plugin : nullptr);
      if (found && candidate == nullptr) return nullptr;
    }
    if (candidate == nullptr) return not_found(kind, name);
    // Each pass moves one plugin out of DECLARED, so the loop ends; one that a
    // temporary failure left declared fails this lookup (the next one tries again).
    et_error* error = load(candidate);
    if (error != nullptr && candidate->state.load() == ET_PLUGIN_DECLARED) {
      error->message = std::string(kind_name(kind)) + " '" + name + "': " + error->message;
      return error;
    }
    et_error_destroy(error);
  }
}

et_error* Registry::not_found(int32_t kind, const std::string& name) {
  std::shared_lock lock(mutex_);
  std::string message = std::string(kind_name(kind)) + " '" + name + "' is not provided by any plugin";
  std::string searched;
  lock.unlock();
  for (const std::string& manifest : manifests()) searched += (searched.empty() ? "" : ", ") + manifest;
  lock.lock();
  message += "; manifests searched: " + (searched.empty() ? std::string("(none)") : searched);
  for (auto& record : plugins_) {
    if (!record->declares(kind, name)) continue;
    if (record->state.load() == ET_PLUGIN_FAILED)
      message += "; plugin '" + record->name + "' declares it but failed to load: " + record->failure;
    else if (record->state.load() == ET_PLUGIN_LOADED)
      message += "; plugin '" + record->name + "' declares it but did not register it";
  }
  if (const char* env = secure_getenv("ETRT_PLUGIN_PATH"); env == nullptr || *env == '\0')
    message += " (ETRT_PLUGIN_PATH is not set)";
  return make_error(ET_ERR_NOT_FOUND, message);
}

std::vector<PluginRecord*> Registry::plugins() {
  std::shared_lock lock(mutex_);
  std::vector<PluginRecord*> out;
  for (auto& record : plugins_) out.push_back(record.get());
  return out;
}

bool Registry::describe(size_t index, et_plugin_record* out) {
  std::shared_lock lock(mutex_);
  if (index >= plugins_.size()) return false;
  const PluginRecord& p = *plugins_[index];
  int32_t state = p.state.load();
  bool settled = state != ET_PLUGIN_DECLARED;
  *out = et_plugin_record{};
  out->struct_size = sizeof(et_plugin_record);
  out->name = intern(p.name);
  out->version = intern(p.version);
  out->description = intern(p.description);
  out->library_path = intern(p.library_path);
  out->manifest_path = intern(p.manifest_path);
  out->state = state;
  out->source = p.source;
  out->priority = p.priority;
  out->abi_major = settled ? p.abi_major : 0;
  out->abi_minor = settled ? p.abi_minor : 0;
  out->built_abi_major = settled && p.built_abi_major != 0 ? p.built_abi_major : p.manifest_abi_major;
  out->built_abi_minor = settled && p.built_abi_major != 0 ? p.built_abi_minor : p.manifest_abi_minor;
  out->load_count = p.load_count;
  out->failure = intern(p.failure);
  out->warnings = intern(p.warnings);
  out->cpu_level = intern(p.cpu_level);
  out->cpu_level_reason = intern(p.cpu_level_reason);
  return true;
}

int64_t Registry::planned_provider(int32_t kind, const std::string& name) {
  ensure_discovered();
  std::shared_lock lock(mutex_);
  Provider provider;
  // The same rule as find(): a declared plugin outranking the loaded winner would be loaded and win.
  const PluginRecord* chosen = lookup_locked(kind, name, &provider) ? provider.plugin : nullptr;
  for (auto& record : plugins_) {
    // Only a plugin not loaded yet may still bring the name: a loaded one is among
    // the providers if it registered it, whatever its manifest declares.
    if (record->state.load() != ET_PLUGIN_DECLARED || !record->declares(kind, name)) continue;
    if (chosen == nullptr || record_before(*record, *chosen)) chosen = record.get();
  }
  for (size_t i = 0; chosen != nullptr && i < plugins_.size(); ++i)
    if (plugins_[i].get() == chosen) return static_cast<int64_t>(i);
  return -1;
}

std::vector<std::pair<Provider, std::string>> Registry::entries(int32_t kind) {
  std::shared_lock lock(mutex_);
  std::vector<std::pair<Provider, std::string>> out;
  for (const auto& [name, list] : providers_[kind]) {
    for (size_t i = 0; i < list.size(); ++i)
      out.emplace_back(list[i], i == 0 ? std::string() : loser_reason(list[i], list[0]));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Registry::rejections() {
  std::shared_lock lock(mutex_);
  return rejections_;
}

std::vector<std::string> Registry::manifests() {
  std::shared_lock lock(mutex_);
  // Search order: by source, then in the order they were given.
  auto ordered = manifests_;
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<std::string> out;
  for (auto& [path, source] : ordered) out.push_back(path);
  return out;
}

}  // namespace etrt
