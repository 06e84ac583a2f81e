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

void EventLog::resolve_names() {
  if (!unresolved_) return;
  auto id_of = [&](const char* kept) {
    if (kept == nullptr || *kept == '\0') return kNoName;
    auto [it, inserted] = kept_ids_.try_emplace(kept, kNoName);
    if (inserted) it->second = intern(kept);
    return it->second;
  };
  for (ProfileRecord& record : profiles_) {
    if (record.kept_name != nullptr) record.name = id_of(record.kept_name);
    if (record.kept_plugin != nullptr) record.plugin = id_of(record.kept_plugin);
    record.kept_name = record.kept_plugin = nullptr;
  }
  unresolved_ = false;
}

void EventLog::clear() {
  blocks_.clear();
  events_.clear();
  profiles_.clear();
  debugs_.clear();
}

}  // namespace etrt::etdump
