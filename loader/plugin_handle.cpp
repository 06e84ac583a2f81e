#include "plugin_handle.h"

#include <utility>

namespace etrt::loader {

const char* kind_name(int32_t kind) {
  switch (kind) {
    case ET_ENTRY_OPERATOR: return "operator";
    case ET_ENTRY_BACKEND: return "backend";
    default: return "tracer";
  }
}

}  // namespace etrt::loader

int32_t et_plugin_handle::stage(etrt::loader::Registration registration, std::string* why_not) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!in_init_.load(std::memory_order_relaxed)) {
    *why_not = "registration is only allowed during the plugin's init";
    return ET_ERR_INVALID_STATE;
  }
  // '\0' cannot occur in a C name, so the key is unambiguous.
  std::string key = std::to_string(registration.kind) + '\0' + registration.name + '\0' + registration.variant;
  if (!staged_keys_.insert(std::move(key)).second) {
    *why_not = std::string(etrt::loader::kind_name(registration.kind)) + " '" + registration.name +
               "' registered twice by plugin '" + plugin_name + "'";
    return ET_ERR_ALREADY_EXISTS;
  }
  auto keep = [this](const std::string& text) { return strings_.emplace_back(text).c_str(); };
  switch (registration.kind) {
    case ET_ENTRY_OPERATOR:
      registration.kernel.name = keep(registration.name);
      registration.kernel.variant = keep(registration.variant);
      break;
    case ET_ENTRY_BACKEND: registration.backend.id = keep(registration.name); break;
    default: registration.tracer.name = keep(registration.name); break;
  }
  staged_.push_back(std::move(registration));
  return ET_OK;
}

void et_plugin_handle::begin_init() {
  std::lock_guard<std::mutex> lock(mutex_);
  in_init_.store(true, std::memory_order_release);
}

std::vector<etrt::loader::Registration> et_plugin_handle::end_init() {
  std::lock_guard<std::mutex> lock(mutex_);
  in_init_.store(false, std::memory_order_release);
  staged_keys_.clear();
  return std::exchange(staged_, {});
}
