// Helpers shared by the behaviour tests: paths of built artefacts, tensors
// for calling kernels, and views of the process (/proc/self).
#pragma once

#include <dirent.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "float_input.h"
#include <gtest/gtest.h>

namespace etrt_test {

inline std::string plugin_path(const std::string& name) {
  return std::string(ETRT_TEST_PLUGIN_DIR) + "/libetrt_test_" + name + ".so.1";
}
inline std::string manifest_path(const std::string& name) {
  return std::string(ETRT_TEST_MANIFEST_DIR) + "/test_" + name + ".json";
}

// Lines of /proc/self/maps naming a file that contains `needle`.
inline std::vector<std::string> mapped_files_containing(const std::string& needle) {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> found;
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string file = line.substr(slash);
    if (file.find(needle) != std::string::npos &&
        (found.empty() || found.back() != file))
      found.push_back(file);
  }
  return found;
}

inline bool is_mapped(const std::string& needle) { return !mapped_files_containing(needle).empty(); }

inline size_t thread_count() {
  size_t count = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir))
      if (entry->d_name[0] != '.') ++count;
    closedir(dir);
  }
  return count;
}

// A one-element int64 tensor the test kernels write their answer into.
struct Int64Slot {
  int64_t value = -1;
  int64_t size = 1, stride = 1;
  uint8_t order = 0;
  et_tensor tensor{};
  et_value arg{};
  Int64Slot() {
    tensor.struct_size = sizeof tensor;
    tensor.dtype = ET_DTYPE_INT64;
    tensor.rank = 1;
    tensor.sizes = &size;
    tensor.strides = &stride;
    tensor.dim_order = &order;
    tensor.data = &value;
    tensor.nbytes = tensor.capacity_bytes = sizeof value;
    arg.struct_size = sizeof arg;
    arg.tag = ET_VALUE_TENSOR;
    arg.tensor = &tensor;
  }
};

// Calls the kernel registered under `name` and returns what it wrote, or
// throws with the runtime's message.
inline int64_t call_reporting_kernel(const std::string& name) {
  et_kernel_descriptor kernel{};
  kernel.struct_size = sizeof kernel;
  et_error* error = nullptr;
  if (et_find_kernel(name.c_str(), &kernel, &error) != ET_OK) {
    std::string message = et_error_message(error);
    et_error_destroy(error);
    throw std::runtime_error(message);
  }
  Int64Slot slot;
  et_value* args[] = {&slot.arg};
  if (et_error* failed = kernel.fn(kernel.user_data, nullptr, args, 1)) {
    std::string message = et_error_message(failed);
    et_error_destroy(failed);
    throw std::runtime_error(message);
  }
  return slot.value;
}

// The error of a failing C call, as a string, released.
template <typename Call>
std::string error_of(Call&& call) {
  et_error* error = nullptr;
  int32_t status = call(&error);
  if (status == ET_OK) return "";
  std::string message = error ? et_error_message(error) : "(no error object)";
  et_error_destroy(error);
  return message;
}

// The record of the plugin called `name`; a test failure if there is none.
inline etrt::PluginInfo plugin_named(const std::string& name) {
  for (const auto& plugin : etrt::Runtime::get().plugins())
    if (plugin.name == name) return plugin;
  ADD_FAILURE() << "no plugin named " << name;
  return {};
}

}  // namespace etrt_test
