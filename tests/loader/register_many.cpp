// Loads tests/plugins/many_registrations_plugin.c registering N kernels, with a
// manifest declaring each, through loader::load_plugin_library and libetrt's
// host table: `register_many N`. Exits 0 when all N were registered and matched
// the manifest. Counted by plugin_loader_test under callgrind.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "etrt/etrt.h"
#include "loader/plugin_loader.h"

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: register_many N\n"), 2;
  const size_t count = std::strtoull(argv[1], nullptr, 10);
  std::vector<std::string> declared[3];
  for (size_t i = 0; i < count; ++i) declared[ET_ENTRY_OPERATOR].push_back("test_many::op_" + std::to_string(i));
  etrt::loader::PluginRequest request;
  request.library_path = std::string(ETRT_TEST_PLUGIN_DIR) + "/libetrt_test_many_registrations.so.1";
  request.manifest_path = "(register_many)";
  request.manifest_name = "test_many_registrations";
  request.manifest_abi_major = ET_ABI_MAJOR;
  request.manifest_abi_minor = ET_ABI_MINOR;
  request.declared = declared;
  setenv("ETRT_TEST_REGISTRATIONS", argv[1], 1);
  etrt::loader::LoadResult result = etrt::loader::load_plugin_library(request, et_host_api_get());
  if (!result.error.empty()) return std::fprintf(stderr, "%s\n", result.error.c_str()), 1;
  if (result.registrations.size() != count || !result.warnings.empty())
    return std::fprintf(stderr, "%zu registered; warnings: %s\n", result.registrations.size(),
                        result.warnings.c_str()),
           1;
  return 0;
}
