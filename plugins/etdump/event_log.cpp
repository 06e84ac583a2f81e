#include "event_log.h"

namespace etrt::etdump {

NameId EventLog::intern(std::string_view text) {
  if (text.empty()) return kNoName;
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  strings_.emplace_back(text);
  auto id = static_cast<NameId>(strings_.size() - 1);
  ids_.emplace(strings_.back(), id);
  return id;
}

void EventLog::clear() {
  blocks_.clear();
  events_.clear();
  profiles_.clear();
  debugs_.clear();
}

}  // namespace etrt::etdump
