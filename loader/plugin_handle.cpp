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
  if (!in_init_.load()) {
    *why_not = "registration is only allowed during the plugin's init";
    return ET_ERR_INVALID_STATE;
  }
  for (const etrt::loader::Registration& existing : staged_) {
    if (existing.kind == registration.kind && existing.name == registration.name &&
        existing.variant == registration.variant) {
      *why_not = std::string(etrt::loader::kind_name(registration.kind)) + " '" + registration.name +
                 "' registered twice by plugin '" + plugin_name + "'";
      return ET_ERR_ALREADY_EXISTS;
    }
  }
  staged_.push_back(std::move(registration));
  return ET_OK;
}

const char* et_plugin_handle::keep_string(const char* text) {
  strings_.emplace_back(text != nullptr ? text : "");
  return strings_.back().c_str();
}

std::vector<etrt::loader::Registration> et_plugin_handle::end_init() {
  in_init_.store(false);
  return std::exchange(staged_, {});
}
