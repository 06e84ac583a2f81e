// `etrt plugins`: what the loader knows and decided, as text or JSON.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "commands.h"
#include "etrt/etrt.hpp"
#include "terminal_text.h"

namespace {

using etrt::tools::Newlines;
using etrt::tools::terminal_text;

// What the loader reports comes from manifests, plugins and file names: shown escaped.
std::string shown(const std::string& text) { return terminal_text(text); }

const char* state_text(int32_t state) {
  return state == ET_PLUGIN_LOADED ? "loaded" : state == ET_PLUGIN_FAILED ? "FAILED" : "not loaded";
}

const char* source_text(int32_t source) {
  switch (source) {
    case ET_SOURCE_EXPLICIT: return "explicit";
    case ET_SOURCE_HOST_MANIFEST: return "host manifest";
    case ET_SOURCE_ENV: return "ETRT_PLUGIN_PATH";
    default: return "default";
  }
}

void print_list(const char* label, const std::vector<std::string>& items) {
  if (items.empty()) return;
  std::printf("    %s (%zu):", label, items.size());
  for (const std::string& item : items) std::printf(" %s", shown(item).c_str());
  std::printf("\n");
}

void print_text(etrt::Runtime& runtime) {
  const size_t threads = runtime.num_threads();
  std::printf("etrt %s — plugin ABI %d.0-%d.%d, thread pool: %zu thread%s\n\n", et_version(), ET_ABI_MAJOR,
              ET_ABI_MAJOR, ET_ABI_MINOR, threads, threads == 1 ? "" : "s");
  std::printf("Manifests searched (in order):\n");
  for (const std::string& manifest : runtime.manifests()) std::printf("  %s\n", shown(manifest).c_str());

  // What each plugin provides: registered names once loaded, declared names before.
  std::map<std::string, std::vector<std::string>> provided[3];
  for (int32_t kind = 0; kind < 3; ++kind)
    for (const etrt::RegistryEntry& entry : runtime.entries(kind))
      provided[kind][entry.plugin_path].push_back(entry.name);

  std::printf("\nPlugins:\n");
  for (const etrt::PluginInfo& plugin : runtime.plugins()) {
    std::printf("  %s %s [%s] priority %d, from %s\n", plugin.name.empty() ? "(unnamed drop-in)" : shown(plugin.name).c_str(),
                shown(plugin.version).c_str(), state_text(plugin.state), plugin.priority, source_text(plugin.source));
    std::printf("    library:  %s\n", shown(plugin.library_path).c_str());
    if (!plugin.cpu_level.empty() || !plugin.cpu_level_reason.empty())
      std::printf("    CPU level: %s%s%s\n", plugin.cpu_level.empty() ? "(none named)" : shown(plugin.cpu_level).c_str(),
                  plugin.cpu_level_reason.empty() ? "" : " — ", shown(plugin.cpu_level_reason).c_str());
    if (!plugin.manifest_path.empty()) std::printf("    manifest: %s\n", shown(plugin.manifest_path).c_str());
    if (plugin.loaded())
      std::printf("    ABI:      speaks %u.%u (built against %u.%u)\n", plugin.abi_major, plugin.abi_minor,
                  plugin.built_abi_major, plugin.built_abi_minor);
    else
      std::printf("    ABI:      declares %u.%u\n", plugin.built_abi_major, plugin.built_abi_minor);
    if (plugin.loaded()) {
      print_list("operators", provided[ET_ENTRY_OPERATOR][plugin.library_path]);
      print_list("backends", provided[ET_ENTRY_BACKEND][plugin.library_path]);
      print_list("tracers", provided[ET_ENTRY_TRACER][plugin.library_path]);
    }
    if (!plugin.failure.empty()) std::printf("    failure:  %s\n", terminal_text(plugin.failure, Newlines::keep).c_str());
    if (!plugin.warnings.empty()) std::printf("    warnings: %s", terminal_text(plugin.warnings, Newlines::keep).c_str());
  }

  bool any_override = false;
  for (int32_t kind = 0; kind < 3; ++kind) {
    for (const etrt::RegistryEntry& entry : runtime.entries(kind)) {
      if (entry.is_winner) continue;
      if (!any_override) std::printf("\nProviders that lost:\n");
      any_override = true;
      std::printf("  %s from '%s': %s\n", shown(entry.name).c_str(), shown(entry.plugin).c_str(), shown(entry.reason).c_str());
    }
  }
  auto rejections = runtime.rejections();
  if (!rejections.empty()) {
    std::printf("\nRejected:\n");
    for (const etrt::Rejection& r : rejections)
      std::printf("  %s\n    %s\n", shown(r.path).c_str(), terminal_text(r.reason, Newlines::keep).c_str());
  }
}

}  // namespace

int run_plugins_command(int argc, char** argv) {
  bool json = false, load_all = false;
  etrt::Runtime& runtime = etrt::Runtime::get();
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "usage: etrt plugins [--json] [--load-all] [--manifest PATH]...\n\n"
          "Lists the manifests searched, the plugins they declare (loaded or not), what each provides, and the\n"
          "loader's decisions (providers that lost, files rejected and why).\n\n"
          "options:\n"
          "  --json            one JSON document instead of text\n"
          "  --load-all        load every declared plugin first (failures are listed as rejections)\n"
          "  --manifest PATH   also search this manifest file or directory (repeatable)\n"
          "  -h, --help        this help\n");
      return 0;
    }
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--load-all") == 0) {
      load_all = true;
    } else if (std::strcmp(argv[i], "--manifest") == 0 && i + 1 == argc) {
      std::fprintf(stderr, "etrt plugins: --manifest needs a value (PATH)\n");
      return 2;
    } else if (std::strcmp(argv[i], "--manifest") == 0) {
      try {
        runtime.add_manifest(argv[++i]);
      } catch (const etrt::Error& error) {
        std::fprintf(stderr, "etrt: %s\n", terminal_text(error.what(), Newlines::keep).c_str());  // also listed under "Rejected"
      }
    } else {
      std::fprintf(stderr, "etrt plugins: unknown option '%s' (etrt plugins --help lists the options)\n",
                   shown(argv[i]).c_str());
      return 2;
    }
  }
  if (load_all) runtime.load_all_plugins();  // failures show up as rejections
  if (json) {
    std::printf("%s\n", runtime.report_json().c_str());
  } else {
    print_text(runtime);
  }
  return 0;
}
