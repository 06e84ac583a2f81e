#include "manifest.h"

#include <filesystem>

#include "loader/json.h"
#include "loader/json_schema.h"
#include "loader/plugin_file.h"

namespace etrt::loader {

// Defined in the file CMake generates from manifests/schema.json.
extern const char kManifestSchemaText[];

std::string_view manifest_schema() { return kManifestSchemaText; }

std::string plugin_name_in_soname(const std::string& soname) {
  static const std::string kPrefix = "libetrt_";
  size_t so = soname.rfind(".so.");
  if (soname.rfind(kPrefix, 0) != 0 || so == std::string::npos || so <= kPrefix.size()) return "";
  std::string major = soname.substr(so + 4);
  if (major.empty() || major.find_first_not_of("0123456789") != std::string::npos) return "";
  return soname.substr(kPrefix.size(), so - kPrefix.size());
}

std::string identity_mismatch_reason(const std::string& manifest_path, const std::string& manifest_name,
                                     const std::string& soname) {
  std::string name = plugin_name_in_soname(soname);
  if (name == manifest_name) return "";
  std::string names_it = "manifest " + manifest_path + " names it '" + manifest_name + "'";
  if (name.empty())
    return names_it + ", but its soname " + (soname.empty() ? std::string("is missing") : "'" + soname + "'") +
           " does not state a plugin name (libetrt_<name>.so.<ABI major>, which etrt_add_plugin gives every "
           "plugin): refused, its identity cannot be checked before its code runs";
  return names_it + " but the library calls itself '" + name + "' (its soname is " + soname +
         "): refused before any of its code ran";
}

namespace {

constexpr std::uintmax_t kMaxManifestBytes = 1 << 20;

const JsonValue& schema_value() {
  // Parsed once; a broken embedded schema is a build defect caught by tests.
  static const JsonValue* schema = [] {
    auto result = parse_json(manifest_schema());
    return new JsonValue(std::move(result.value));
  }();
  return *schema;
}

std::vector<std::string> string_list(const JsonValue* provides, std::string_view key) {
  std::vector<std::string> out;
  if (provides == nullptr) return out;
  if (const JsonValue* list = provides->find(key)) {
    for (const JsonValue& item : list->array) out.push_back(item.string);
  }
  return out;
}

// JSON allows "\u0000"; a C path or name would end there, silently. Refused instead.
bool find_nul_string(const JsonValue& value, const std::string& field, std::string* where, int* line) {
  if (value.type == JsonValue::Type::String && value.string.find('\0') != std::string::npos) {
    *where = field;
    *line = value.line;
    return true;
  }
  for (size_t i = 0; i < value.array.size(); ++i)
    if (find_nul_string(value.array[i], field + "[" + std::to_string(i) + "]", where, line)) return true;
  for (const auto& [key, item] : value.object)
    if (find_nul_string(item, field.empty() ? key : field + "." + key, where, line)) return true;
  return false;
}

std::string resolve_library(const std::filesystem::path& manifest_file, const std::string& library) {
  std::filesystem::path path = library;
  if (path.is_relative()) path = manifest_file.parent_path() / path;
  return path.lexically_normal().string();
}

// Two entries for one level, or one file for two levels, would make the choice ambiguous.
bool read_variants(const JsonValue& root, const std::filesystem::path& file, const std::string& shown_path,
                   Manifest* manifest, std::string* error) {
  const JsonValue* variants = root.find("variants");
  if (variants == nullptr) return true;
  for (size_t i = 0; i < variants->array.size(); ++i) {
    const JsonValue& item = variants->array[i];
    LibraryVariant variant;
    variant.cpu_level = item.find("cpu_level")->string;
    variant.library = resolve_library(file, item.find("library")->string);
    if (const JsonValue* h = item.find("sha256")) variant.sha256 = h->string;
    std::string where = shown_path + ":" + std::to_string(item.line) + ": field 'variants[" + std::to_string(i) + "]': ";
    for (const LibraryVariant& other : library_candidates(*manifest)) {
      if (other.cpu_level == variant.cpu_level) {
        *error = where + "CPU level '" + variant.cpu_level + "' is declared twice";
        return false;
      }
      if (other.library == variant.library) {
        *error = where + "library " + variant.library + " is already the library of level '" +
                 (other.cpu_level.empty() ? std::string("(none)") : other.cpu_level) + "'";
        return false;
      }
    }
    manifest->variants.push_back(std::move(variant));
  }
  return true;
}

}  // namespace

std::vector<LibraryVariant> library_candidates(const Manifest& manifest) {
  std::vector<LibraryVariant> out;
  out.push_back({manifest.cpu_level, manifest.library, manifest.sha256});
  out.insert(out.end(), manifest.variants.begin(), manifest.variants.end());
  return out;
}

bool read_manifest(const std::string& path, Manifest* out, std::string* error) {
  std::error_code ec;
  std::filesystem::path file = std::filesystem::absolute(path, ec);
  std::string text, problem;
  // Regular files only (a FIFO would block), never written by others (docs/TRUST.md).
  if (!read_regular_file(file.string(), kMaxManifestBytes, /*check_trust=*/true, &text, &problem)) {
    *error = path + ": cannot read manifest: " + problem;
    return false;
  }

  JsonParseResult parsed = parse_json(text);
  if (!parsed.ok) {
    *error = path + ":" + std::to_string(parsed.line) + ":" + std::to_string(parsed.column) +
             ": invalid JSON: " + parsed.error;
    return false;
  }
  std::vector<SchemaViolation> violations = validate_json(schema_value(), parsed.value);
  if (!violations.empty()) {
    std::string joined;
    for (const SchemaViolation& v : violations) {
      if (!joined.empty()) joined += '\n';
      joined += path + ":" + std::to_string(v.line) + ": field '" +
                (v.field.empty() ? std::string("(root)") : v.field) + "': " + v.message;
    }
    *error = joined;
    return false;
  }

  std::string nul_field;
  int nul_line = 0;
  if (find_nul_string(parsed.value, "", &nul_field, &nul_line)) {
    *error = path + ":" + std::to_string(nul_line) + ": field '" + nul_field +
             "': contains a NUL character (\\u0000), which would cut the text short";
    return false;
  }
  const JsonValue& root = parsed.value;
  Manifest manifest;
  manifest.path = file.lexically_normal().string();
  manifest.name = root.find("name")->string;
  manifest.version = root.find("version")->string;
  if (const JsonValue* d = root.find("description")) manifest.description = d->string;
  manifest.library = resolve_library(file, root.find("library")->string);
  if (const JsonValue* h = root.find("sha256")) manifest.sha256 = h->string;
  if (const JsonValue* level = root.find("cpu_level")) manifest.cpu_level = level->string;
  if (!read_variants(root, file, path, &manifest, error)) return false;
  const JsonValue* abi = root.find("abi");
  manifest.abi_major = static_cast<uint32_t>(abi->find("major")->integer);
  manifest.abi_minor = static_cast<uint32_t>(abi->find("minor")->integer);
  if (const JsonValue* p = root.find("priority")) manifest.priority = static_cast<int32_t>(p->integer);
  const JsonValue* provides = root.find("provides");
  manifest.operators = string_list(provides, "operators");
  manifest.backends = string_list(provides, "backends");
  manifest.tracers = string_list(provides, "tracers");
  *out = std::move(manifest);
  return true;
}

}  // namespace etrt::loader
