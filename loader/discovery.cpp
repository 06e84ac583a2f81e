#include "discovery.h"

#include <cstdlib>
#include <filesystem>

#include "dynamic_library.h"

namespace etrt::loader {

std::vector<std::string> plugin_path_from_env() {
  std::vector<std::string> entries;
  const char* text = secure_getenv("ETRT_PLUGIN_PATH");
  if (text == nullptr) return entries;
  std::string value = text;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(':', start);
    if (end == std::string::npos) end = value.size();
    if (end > start) entries.push_back(value.substr(start, end - start));
    start = end + 1;
  }
  return entries;
}

std::string default_manifest_dir() {
  std::string self = path_of_address(reinterpret_cast<const void*>(&default_manifest_dir));
  if (self.empty()) return "";
  std::error_code ec;
  auto dir = std::filesystem::canonical(self, ec).parent_path() / "etrt" / "manifests";
  return ec ? "" : dir.string();
}

}  // namespace etrt::loader
