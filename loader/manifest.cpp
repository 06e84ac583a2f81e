#include "manifest.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "json.h"
#include "json_schema.h"

namespace etrt::loader {

// Defined in the file CMake generates from manifests/schema.json.
extern const char kManifestSchemaText[];

std::string_view manifest_schema() { return kManifestSchemaText; }

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

}  // namespace

bool read_manifest(const std::string& path, Manifest* out, std::string* error) {
  std::error_code ec;
  std::filesystem::path file = std::filesystem::absolute(path, ec);
  auto size = std::filesystem::file_size(file, ec);
  if (ec) {
    *error = path + ": cannot read manifest: " + ec.message();
    return false;
  }
  if (size > kMaxManifestBytes) {
    *error = path + ": manifest is " + std::to_string(size) + " bytes, larger than the 1 MiB limit";
    return false;
  }
  std::ifstream stream(file, std::ios::binary);
  std::stringstream buffer;
  buffer << stream.rdbuf();
  if (!stream) {
    *error = path + ": cannot read manifest";
    return false;
  }
  std::string text = buffer.str();

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

  const JsonValue& root = parsed.value;
  Manifest manifest;
  manifest.path = file.lexically_normal().string();
  manifest.name = root.find("name")->string;
  manifest.version = root.find("version")->string;
  if (const JsonValue* d = root.find("description")) manifest.description = d->string;
  std::filesystem::path library = root.find("library")->string;
  if (library.is_relative()) library = file.parent_path() / library;
  manifest.library = library.lexically_normal().string();
  if (const JsonValue* h = root.find("sha256")) manifest.sha256 = h->string;
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
