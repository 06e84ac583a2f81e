#include "report_json.h"

#include <mutex>
#include <set>

#include "../../threadpool/threadpool.h"
#include "etrt/base/utf8.h"
#include "etrt/etrt.h"
#include "registry.h"
#include "version.h"

namespace etrt {
namespace {

// JSON holds UTF-8 only, and names from programs, manifests and plugins (file names above all) may
// not be. A byte that starts no UTF-8 sequence is written as the escape of the lone surrogate
// U+DC00 + byte, as Python's surrogateescape decodes it: a JSON reader in Python gets the very
// string os.fsdecode gives for the name (os.fsencode returns its bytes); others see one odd
// character per byte. The output stays valid JSON, and ASCII where the name was not UTF-8.
void append_string(std::string& out, std::string_view text) {
  char escape[8];
  out += '"';
  for (size_t at = 0; at < text.size();) {
    char32_t code_point = 0;
    const size_t length = base::utf8_sequence(text.substr(at), &code_point);
    if (length == 0) {
      std::snprintf(escape, sizeof escape, "\\udc%02x", static_cast<unsigned char>(text[at]));
      out += escape;
      ++at;
      continue;
    }
    switch (code_point) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (code_point < 0x20) {
          std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(code_point));
          out += escape;
        } else {
          out.append(text, at, length);
        }
    }
    at += length;
  }
  out += '"';
}

// Writes "key": value pairs with commas handled by the caller's `first` flag.
struct ObjectWriter {
  std::string& out;
  bool first = true;
  explicit ObjectWriter(std::string& o) : out(o) { out += '{'; }
  ObjectWriter& key(std::string_view k) {
    if (!first) out += ',';
    first = false;
    append_string(out, k);
    out += ':';
    return *this;
  }
  ObjectWriter& str(std::string_view k, std::string_view v) { key(k); append_string(out, v); return *this; }
  ObjectWriter& num(std::string_view k, long long v) { key(k); out += std::to_string(v); return *this; }
  void close() { out += '}'; }
};

const char* state_name(int32_t state) {
  return state == ET_PLUGIN_LOADED ? "loaded" : state == ET_PLUGIN_FAILED ? "failed" : "declared";
}

const char* source_key(int32_t source) {
  switch (source) {
    case ET_SOURCE_EXPLICIT: return "explicit";
    case ET_SOURCE_HOST_MANIFEST: return "host_manifest";
    case ET_SOURCE_ENV: return "env";
    default: return "default";
  }
}

void append_string_list(std::string& out, const std::vector<std::string>& items) {
  out += '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    append_string(out, items[i]);
  }
  out += ']';
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

const char* intern(const std::string& text) {
  static std::mutex* mutex = new std::mutex;
  static std::set<std::string>* strings = new std::set<std::string>;
  std::lock_guard lock(*mutex);
  return strings->insert(text).first->c_str();
}

std::string report_json() {
  Registry& registry = Registry::instance();
  registry.ensure_discovered();
  std::string out;
  ObjectWriter root(out);
  root.str("etrt_version", ETRT_VERSION_STRING);
  root.key("host_abi");
  {
    ObjectWriter abi(out);
    abi.num("major", ET_ABI_MAJOR).num("min_minor", 0).num("max_minor", ET_ABI_MINOR);
    abi.close();
  }
  root.key("manifests");
  append_string_list(out, registry.manifests());

  root.key("plugins");
  out += '[';
  std::vector<PluginRecord*> plugins = registry.plugins();
  for (size_t index = 0; index < plugins.size(); ++index) {
    PluginRecord* plugin = plugins[index];
    if (index > 0) out += ',';
    et_plugin_record record{};
    record.struct_size = sizeof record;
    registry.describe(index, &record);  // the same view the C API gives
    ObjectWriter w(out);
    w.str("name", record.name).str("version", record.version).str("description", record.description);
    w.str("library", record.library_path).str("manifest", record.manifest_path);
    w.str("state", state_name(record.state)).str("source", source_key(record.source));
    w.num("priority", record.priority);
    w.str("abi", std::to_string(record.abi_major) + "." + std::to_string(record.abi_minor));
    w.str("built_abi", std::to_string(record.built_abi_major) + "." + std::to_string(record.built_abi_minor));
    w.num("load_count", record.load_count);
    w.str("failure", record.failure);
    w.str("cpu_level", record.cpu_level).str("cpu_level_reason", record.cpu_level_reason);
    w.key("warnings");
    append_string_list(out, split_lines(record.warnings));
    w.key("declares");
    {
      ObjectWriter declares(out);
      declares.key("operators");
      append_string_list(out, plugin->declared[ET_ENTRY_OPERATOR]);
      declares.key("backends");
      append_string_list(out, plugin->declared[ET_ENTRY_BACKEND]);
      declares.key("tracers");
      append_string_list(out, plugin->declared[ET_ENTRY_TRACER]);
      declares.close();
    }
    w.close();
  }
  out += ']';

  const char* sections[3] = {"operators", "backends", "tracers"};
  for (int32_t kind = 0; kind < 3; ++kind) {
    root.key(sections[kind]);
    out += '[';
    bool first = true;
    for (const auto& [provider, reason] : registry.entries(kind)) {
      if (!first) out += ',';
      first = false;
      ObjectWriter w(out);
      w.str("name", provider.name);
      if (kind == ET_ENTRY_OPERATOR) w.str("variant", provider.variant);
      w.str("plugin", provider.plugin->name).str("library", provider.plugin->library_path);
      w.num("priority", provider.plugin->priority);
      w.key("selected");
      out += reason.empty() ? "true" : "false";
      w.str("reason", reason);
      w.close();
    }
    out += ']';
  }

  root.key("rejected");
  out += '[';
  bool first_rejection = true;
  for (const auto& [path, reason] : registry.rejections()) {
    if (!first_rejection) out += ',';
    first_rejection = false;
    ObjectWriter w(out);
    w.str("path", path).str("reason", reason);
    w.close();
  }
  out += ']';

  root.key("threadpool");
  {
    ObjectWriter pool(out);
    pool.num("threads", static_cast<long long>(ThreadPool::instance().size()));
    pool.close();
  }
  root.close();
  return out;
}

}  // namespace etrt
