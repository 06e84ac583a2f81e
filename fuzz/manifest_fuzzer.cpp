// libFuzzer target for plugin manifests: any bytes go through the JSON parser
// and the schema validation against the compiled-in manifest schema; a document
// the schema accepts is then read back by read_manifest (from a private temporary file), which
// relies on the schema for every field it extracts, and its CPU variants go
// through the loader's choice for this host. Errors are expected; a
// crash, a sanitizer report, a hang or a leak is a finding.
//
// Built by fuzz/CMakeLists.txt as manifest_fuzzer (clang, ETRT_BUILD_FUZZERS=ON)
// and, with any compiler, into manifest_fuzz_replay (fuzz/replay_main.cpp).
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "loader/cpu_level.h"
#include "loader/json.h"
#include "loader/json_schema.h"
#include "loader/manifest.h"

namespace {

const etrt::loader::JsonValue& schema() {
  static const etrt::loader::JsonValue* value = [] {
    auto parsed = etrt::loader::parse_json(etrt::loader::manifest_schema());
    if (!parsed.ok) std::abort();  // the compiled-in schema is broken: a build defect
    return new etrt::loader::JsonValue(std::move(parsed.value));
  }();
  return *value;
}

// One file reused for every input: read_manifest takes a path, resolves it and
// checks it as it would a real manifest (a regular file in a directory nobody
// else can write), so a memfd's /proc/self/fd link would not do.
// Never destroyed: the exit handler that removes the file runs after static destructors would have freed it
// (it is registered before the path's initialisation completes, so it runs after the path's destructor).
const std::string& manifest_path() {
  static const std::string& path = *[] {
    char dir[] = "/tmp/etrt_manifest_fuzz.XXXXXX";
    if (mkdtemp(dir) == nullptr) std::abort();
    std::atexit([] {
      unlink(manifest_path().c_str());
      rmdir(manifest_path().substr(0, manifest_path().rfind('/')).c_str());
    });
    return new std::string(std::string(dir) + "/manifest.json");
  }();
  return path;
}

int manifest_fd() {
  static int fd = open(manifest_path().c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  schema();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  etrt::loader::JsonParseResult parsed = etrt::loader::parse_json(text);
  if (!parsed.ok) return 0;
  if (!etrt::loader::validate_json(schema(), parsed.value).empty()) return 0;
  // Valid: read_manifest must accept it and extract every field without trusting more than the schema says.
  int fd = manifest_fd();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
  etrt::loader::Manifest manifest;
  std::string error;
  if (!etrt::loader::read_manifest(manifest_path(), &manifest, &error)) {
    // The file and the in-memory check saw the same bytes: only the size limit and the
    // checks the schema cannot express (one library per CPU level) may differ.
    if (size <= (size_t{1} << 20) && error.find("field 'variants[") == std::string::npos) std::abort();
    return 0;
  }
  // Whatever levels it declares, the choice among them is an index or an error, never a crash.
  std::vector<etrt::loader::LibraryVariant> candidates = etrt::loader::library_candidates(manifest);
  const etrt::loader::CpuHost& host = etrt::loader::this_cpu();
  for (const char* forced : {static_cast<const char*>(nullptr), "x86-64", "armv8-a"}) {
    etrt::loader::VariantChoice choice =
        etrt::loader::choose_library_variant(candidates, host, etrt::loader::cpu_level_limit(host, forced));
    if (choice.ok && choice.index >= candidates.size()) std::abort();
    if (!choice.ok && choice.error.empty()) std::abort();
  }
  return 0;
}
