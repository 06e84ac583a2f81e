#include "plugin_loader.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "../core/src/error.h"
#include "../core/src/logging.h"
#include "dynamic_library.h"
#include "elf_inspect.h"
#include "sha256.h"

namespace etrt::loader {
namespace {

std::string version_text(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string host_range_text(const et_abi_offer& offer) {
  return version_text(offer.major, offer.min_minor) + "-" + version_text(offer.major, offer.max_minor);
}

// Fields of et_plugin_info every ABI 1.x plugin has.
constexpr size_t kMinPluginInfoSize = offsetof(et_plugin_info, init) + sizeof(void*);

et_error* fail(int32_t code, const PluginRecord& plugin, const std::string& reason) {
  return make_error(code, "plugin " + plugin.library_path + ": " + reason);
}

}  // namespace

et_error* load_plugin_library(PluginRecord* plugin, const et_host_api* host, LoadOutcome* outcome) {
  // 1. The file itself: an ELF for this machine that exports the entry symbol.
  ElfInfo elf = inspect_elf_file(plugin->library_path);
  if (!elf.ok) return fail(ET_ERR_INVALID_FILE, *plugin, elf.error);
  if (!elf.has_exported(ET_PLUGIN_ENTRY_SYMBOL))
    return fail(ET_ERR_INVALID_FILE, *plugin,
                "does not export the entry symbol " ET_PLUGIN_ENTRY_SYMBOL
                " (not an etrt plugin, or built without ET_PLUGIN_EXPORT)");
  std::string extra;
  for (const ElfSymbol& symbol : elf.exported) {
    if (symbol.name == ET_PLUGIN_ENTRY_SYMBOL) continue;
    extra += (extra.empty() ? "" : ", ") + symbol.name;
  }
  if (!extra.empty()) {
    outcome->warnings += "exports symbols besides " ET_PLUGIN_ENTRY_SYMBOL ": " + extra + "\n";
    log_message(LogLevel::Warn, "plugin " + plugin->library_path + " exports extra symbols: " + extra);
  }

  // 2. Integrity, when the manifest pins the file.
  if (!plugin->expected_sha256.empty()) {
    std::string actual, error;
    if (!sha256_file_hex(plugin->library_path, &actual, &error))
      return fail(ET_ERR_INVALID_FILE, *plugin, error);
    if (actual != plugin->expected_sha256)
      return fail(ET_ERR_INVALID_FILE, *plugin,
                  "SHA-256 mismatch: manifest " + plugin->manifest_path + " expects " +
                      plugin->expected_sha256 + ", file has " + actual);
  }

  // 3. dlopen; RTLD_LOCAL keeps its symbols out of everyone else's lookups.
  std::string error;
  void* library = open_library(plugin->library_path, &error);
  if (library == nullptr) return fail(ET_ERR_LOAD_FAILED, *plugin, "dlopen failed: " + error);
  auto entry = reinterpret_cast<et_plugin_entry_fn>(find_symbol(library, ET_PLUGIN_ENTRY_SYMBOL, &error));
  if (entry == nullptr) return fail(ET_ERR_INVALID_FILE, *plugin, "entry symbol not found: " + error);
  outcome->library = library;  // never closed: what it registered may be referenced anywhere

  // 4. Negotiate before running any other plugin code.
  et_abi_offer offer{sizeof(et_abi_offer), ET_ABI_MAJOR, 0, ET_ABI_MINOR};
  et_abi_answer answer{};
  answer.struct_size = sizeof(et_abi_answer);
  int32_t status = entry(&offer, &answer);
  if (status != ET_OK || answer.major != offer.major || answer.minor > offer.max_minor) {
    return fail(ET_ERR_ABI_MISMATCH, *plugin,
                "plugin speaks ABI " + version_text(answer.major, answer.minor) +
                    ", this host speaks ABI " + host_range_text(offer));
  }
  const et_plugin_info* info = answer.info;
  if (info == nullptr || info->struct_size < kMinPluginInfoSize || info->init == nullptr)
    return fail(ET_ERR_ABI_MISMATCH, *plugin, "plugin info is missing or smaller than ABI 1.0's");
  if (info->name == nullptr || *info->name == '\0')
    return fail(ET_ERR_INVALID_FILE, *plugin, "plugin info has no name");
  if (!plugin->manifest_path.empty() && plugin->name != info->name)
    return fail(ET_ERR_INVALID_FILE, *plugin,
                "manifest " + plugin->manifest_path + " names it '" + plugin->name +
                    "' but the library calls itself '" + info->name + "'");
  if (!plugin->manifest_path.empty() &&
      (plugin->manifest_abi_major != info->abi_major || plugin->manifest_abi_minor != info->abi_minor))
    outcome->warnings += "manifest declares ABI " +
                        version_text(plugin->manifest_abi_major, plugin->manifest_abi_minor) +
                        ", library was built against " + version_text(info->abi_major, info->abi_minor) + "\n";
  outcome->name = info->name;
  outcome->version = info->version != nullptr ? info->version : "";
  outcome->description = info->description != nullptr ? info->description : "";
  outcome->built_abi_major = info->abi_major;
  outcome->built_abi_minor = info->abi_minor;
  outcome->abi_major = answer.major;
  outcome->abi_minor = answer.minor;
  plugin->loading_name = outcome->name;

  // 5. Init: the plugin registers what it provides (staged until it succeeds).
  plugin->in_init = true;
  plugin->staged.clear();
  et_error* init_error = info->init(host, reinterpret_cast<et_plugin_handle*>(plugin));
  plugin->in_init = false;
  if (init_error != nullptr) {
    plugin->staged.clear();
    std::string message = "init failed: " + init_error->message;
    int32_t code = init_error->code;
    delete init_error;
    et_error* error_out = fail(code == ET_OK ? ET_ERR_LOAD_FAILED : code, *plugin, message);
    error_out->plugin = outcome->name;
    return error_out;
  }

  // A manifest that lies about what the plugin provides misleads lazy loading.
  if (!plugin->manifest_path.empty()) {
    for (int32_t kind = 0; kind < 3; ++kind) {
      for (const Provider& provider : plugin->staged) {
        if (provider.kind == kind && !plugin->declares(kind, provider.name))
          outcome->warnings += std::string("registers ") + kind_name(kind) + " '" + provider.name +
                              "' that its manifest does not list\n";
      }
      for (const std::string& name : plugin->declared[kind]) {
        bool registered = std::any_of(plugin->staged.begin(), plugin->staged.end(), [&](const Provider& p) {
          return p.kind == kind && p.name == name;
        });
        if (!registered)
          outcome->warnings += std::string("manifest lists ") + kind_name(kind) + " '" + name +
                              "' that the plugin did not register\n";
      }
    }
  }
  return nullptr;
}

}  // namespace etrt::loader
