#include "loader/plugin_loader.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>

#include "etrt/plugin.hpp"
#include "loader/dependency_check.h"
#include "loader/dynamic_library.h"
#include "loader/elf_inspect.h"
#include "loader/manifest.h"
#include "loader/plugin_file.h"
#include "loader/sha256.h"
#include "loader/trust.h"

namespace etrt::loader {
namespace {

BeforeDlopenHook g_before_dlopen = nullptr;
void* g_before_dlopen_context = nullptr;

std::string version_text(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string host_range_text(const et_abi_offer& offer) {
  return version_text(offer.major, offer.min_minor) + "-" + version_text(offer.major, offer.max_minor);
}

constexpr const char* kNoExceptions = " (C++ exceptions must not cross the plugin ABI)";

// Runs a call into the plugin; false with *thrown set ("std::runtime_error: boom")
// when it throws, so the exception becomes this load's failure, never the host's.
template <typename Call>
bool call_fenced(Call&& call, std::string* thrown) noexcept {
  try {
    call();
    return true;
  } catch (...) {
    try {
      *thrown = plugin::current_exception_text();
    } catch (...) {  // out of memory: the message says less, the load still fails
      *thrown = "an exception";
    }
    return false;
  }
}

// Fields of et_plugin_info every ABI 1.x plugin has.
constexpr size_t kMinPluginInfoSize = offsetof(et_plugin_info, init) + sizeof(void*);

LoadResult& fail(LoadResult& result, int32_t code, const PluginRequest& request, const std::string& reason) {
  result.code = code;
  result.error = "plugin " + request.library_path + ": " + reason;
  return result;
}

// For failures before any plugin code ran (reading, checking, mapping the file).
LoadResult& fail_maybe_temporarily(LoadResult& result, int32_t code, const PluginRequest& request,
                                   const std::string& reason) {
  result.temporary = is_temporary_failure(reason);
  return fail(result, code, request, reason);
}

// A manifest that lies about what the plugin provides misleads lazy loading.
// Linear in the names (a plugin may register tens of thousands).
void compare_with_manifest(const PluginRequest& request, LoadResult& result) {
  if (request.declared == nullptr) return;
  for (int32_t kind = 0; kind < 3; ++kind) {
    const std::vector<std::string>& declared = request.declared[kind];
    std::unordered_set<std::string_view> declared_names(declared.begin(), declared.end());
    std::unordered_set<std::string_view> registered_names;
    for (const Registration& registration : result.registrations) {
      if (registration.kind != kind) continue;
      registered_names.insert(registration.name);
      if (declared_names.count(registration.name) == 0)
        result.warnings += std::string("registers ") + kind_name(kind) + " '" + registration.name +
                           "' that its manifest does not list\n";
    }
    for (const std::string& name : declared)
      if (registered_names.count(name) == 0)
        result.warnings +=
            std::string("manifest lists ") + kind_name(kind) + " '" + name + "' that the plugin did not register\n";
  }
}

// 1-2. The file itself, before any of its code runs.
bool check_file(const PluginRequest& request, const PluginFile& file, LoadResult& result) {
  ElfInfo elf = inspect_elf(file.data(), file.size());
  if (!elf.ok) return fail(result, ET_ERR_INVALID_FILE, request, elf.error), false;
  if (!elf.has_exported(ET_PLUGIN_ENTRY_SYMBOL))
    return fail(result, ET_ERR_INVALID_FILE, request,
                "does not export the entry symbol " ET_PLUGIN_ENTRY_SYMBOL
                " (not an etrt plugin, or built without ET_PLUGIN_EXPORT)"),
           false;
  std::string extra;
  for (const ElfSymbol& symbol : elf.exported) {
    if (symbol.name == ET_PLUGIN_ENTRY_SYMBOL) continue;
    extra += (extra.empty() ? "" : ", ") + symbol.name;
  }
  if (!extra.empty()) result.warnings += "exports symbols besides " ET_PLUGIN_ENTRY_SYMBOL ": " + extra + "\n";

  // Who it says it is (its soname), and every library dlopen would bring in with it.
  if (!request.manifest_path.empty()) {
    std::string mismatch = identity_mismatch_reason(request.manifest_path, request.manifest_name, elf.soname);
    if (!mismatch.empty()) return fail(result, ET_ERR_INVALID_FILE, request, mismatch), false;
  }
  bool pinned = false;
  std::string untrusted = untrusted_dependency_reason(file.data(), file.size(), file.load_path(&pinned));
  if (!untrusted.empty()) return fail_maybe_temporarily(result, ET_ERR_LOAD_FAILED, request, untrusted), false;

  AllowList allowlist = allowlist_from_env();
  if (request.expected_sha256.empty() && !allowlist.active) return true;
  if (!allowlist.error.empty())
    return fail_maybe_temporarily(result, ET_ERR_LOAD_FAILED, request, allowlist.error), false;
  std::string actual = sha256_hex(file.data(), file.size());
  if (!request.expected_sha256.empty() && actual != request.expected_sha256)
    return fail(result, ET_ERR_INVALID_FILE, request,
                "SHA-256 mismatch: manifest " + request.manifest_path + " expects " + request.expected_sha256 +
                    ", file has " + actual),
           false;
  if (allowlist.active && allowlist.digests.count(actual) == 0)
    return fail(result, ET_ERR_LOAD_FAILED, request,
                "refused: SHA-256 " + actual + " is not in the allow-list " + allowlist.source +
                    " (ETRT_PLUGIN_ALLOWLIST)"),
           false;
  return true;
}

}  // namespace

bool is_temporary_failure(const std::string& error) {
  // strerror's words in this process' locale, as the failing call wrote them; the
  // dynamic loader restores errno, so its text is all there is to go by.
  for (int code : {EMFILE, ENFILE, ENOMEM}) {
    std::string_view words = std::strerror(code);
    if (error.size() >= words.size() && error.compare(error.size() - words.size(), words.size(), words) == 0)
      return true;
  }
  return error.find("failed to map segment from shared object") != std::string::npos;
}

void set_before_dlopen_hook_for_testing(BeforeDlopenHook hook, void* context) {
  g_before_dlopen = hook;
  g_before_dlopen_context = context;
}

LoadResult load_plugin_library(const PluginRequest& request, const et_host_api* host) {
  LoadResult result;
  PluginFile file;
  std::string error;
  if (!file.open(request.library_path, &error))
    return std::move(fail_maybe_temporarily(result, ET_ERR_INVALID_FILE, request, error));
  if (!check_file(request, file, result)) return result;

  // 3. dlopen the descriptor that was checked; RTLD_LOCAL keeps its symbols out of everyone else's lookups.
  if (g_before_dlopen != nullptr) g_before_dlopen(request.library_path, g_before_dlopen_context);
  bool pinned = false;
  std::string load_path = file.load_path(&pinned);
  if (!pinned)
    result.warnings += "/proc/self/fd is not available: loaded by path, so the file could change after its checks\n";
  void* library = open_library(load_path, &error);
  if (library == nullptr)
    return std::move(fail_maybe_temporarily(result, ET_ERR_LOAD_FAILED, request, "dlopen failed: " + error));
  file.keep_descriptor_open();
  result.library = library;  // never closed: what it registered may be referenced anywhere
  auto entry = reinterpret_cast<et_plugin_entry_fn>(find_symbol(library, ET_PLUGIN_ENTRY_SYMBOL, &error));
  if (entry == nullptr) return std::move(fail(result, ET_ERR_INVALID_FILE, request, "entry symbol not found: " + error));

  // 4. Negotiate before running any other plugin code.
  et_abi_offer offer{sizeof(et_abi_offer), ET_ABI_MAJOR, 0, ET_ABI_MINOR};
  et_abi_answer answer{};
  answer.struct_size = sizeof(et_abi_answer);
  int32_t status = ET_OK;
  std::string thrown;
  if (!call_fenced([&] { status = entry(&offer, &answer); }, &thrown))
    return std::move(
        fail(result, ET_ERR_LOAD_FAILED, request, ET_PLUGIN_ENTRY_SYMBOL " threw " + thrown + kNoExceptions));
  if (status != ET_OK || answer.major != offer.major || answer.minor > offer.max_minor)
    return std::move(fail(result, ET_ERR_ABI_MISMATCH, request,
                          "plugin speaks ABI " + version_text(answer.major, answer.minor) +
                              ", this host speaks ABI " + host_range_text(offer)));
  const et_plugin_info* info = answer.info;
  if (info == nullptr || info->struct_size < kMinPluginInfoSize || info->init == nullptr)
    return std::move(fail(result, ET_ERR_ABI_MISMATCH, request, "plugin info is missing or smaller than ABI 1.0's"));
  if (info->name == nullptr || *info->name == '\0')
    return std::move(fail(result, ET_ERR_INVALID_FILE, request, "plugin info has no name"));
  if (!request.manifest_path.empty() && request.manifest_name != info->name)
    return std::move(fail(result, ET_ERR_INVALID_FILE, request,
                          "manifest " + request.manifest_path + " names it '" + request.manifest_name +
                              "' but the library calls itself '" + info->name + "'"));
  if (!request.manifest_path.empty() &&
      (request.manifest_abi_major != info->abi_major || request.manifest_abi_minor != info->abi_minor))
    result.warnings += "manifest declares ABI " + version_text(request.manifest_abi_major, request.manifest_abi_minor) +
                       ", library was built against " + version_text(info->abi_major, info->abi_minor) + "\n";
  result.plugin_name = info->name;
  result.version = info->version != nullptr ? info->version : "";
  result.description = info->description != nullptr ? info->description : "";
  result.built_abi_major = info->abi_major;
  result.built_abi_minor = info->abi_minor;
  result.abi_major = answer.major;
  result.abi_minor = answer.minor;

  // 5. Init: the plugin registers what it provides, staged on its handle until init succeeds.
  result.handle = std::make_unique<et_plugin_handle>(result.plugin_name);
  result.handle->begin_init();
  et_error* init_error = nullptr;
  bool returned = call_fenced([&] { init_error = info->init(host, result.handle.get()); }, &thrown);
  std::vector<Registration> registrations = result.handle->end_init();  // dropped unless init succeeded
  if (!returned) return std::move(fail(result, ET_ERR_LOAD_FAILED, request, "init threw " + thrown + kNoExceptions));
  if (init_error != nullptr) {
    int32_t code = et_error_code(init_error);
    std::string message = std::string("init failed: ") + et_error_message(init_error);
    et_error_destroy(init_error);
    return std::move(fail(result, code == ET_OK ? ET_ERR_LOAD_FAILED : code, request, message));
  }
  result.registrations = std::move(registrations);
  compare_with_manifest(request, result);
  return result;
}

}  // namespace etrt::loader
