#include "event_log.h"

#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <cstring>

namespace etrt::etdump {

NameId EventLog::intern(std::string_view text) {
  if (text.empty()) return kNoName;
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  strings_.emplace_back(text);
  name_bytes_ += sizeof(std::string) + strings_.back().capacity() + 4 * sizeof(void*);  // + a map node
  auto id = static_cast<NameId>(strings_.size() - 1);
  ids_.emplace(strings_.back(), id);
  return id;
}

void EventLog::finish(NameId run_name, NameId delegate_name) {
  settle_raw();
  convert_raw(run_name, delegate_name);
  resolve_names();
}

void EventLog::settle_raw() {
  size_t index = event_count() - (raw_.size() - settled_raw_);  // unsettled records are the newest events
  for (size_t i = settled_raw_; i < raw_.size(); ++i, ++index) {
    if (!raw_run_open_) {
      blocks_.push_back({raw_run_block_, index, 0});
      raw_run_open_ = true;
    }
    ++blocks_.back().event_count;
    if (raw_[i].kind == ET_TRACE_METHOD) raw_run_open_ = false;
  }
  settled_raw_ = raw_.size();
}

void EventLog::open_raw_run() {
  settle_raw();
  if (raw_run_open_) return;
  blocks_.push_back({raw_run_block_, event_count(), 0});
  raw_run_open_ = true;
}

void EventLog::convert_raw(NameId run_name, NameId delegate_name) {
  if (raw_batches_.empty()) return;
  std::vector<EventRecord> merged;
  merged.reserve(events_.size() + raw_events_);
  size_t cursor = 0;
  // Instruction spans end in order and each starts after the one before ended:
  // readings converted with a later anchor may come out a few ns early, so they
  // are clamped as the host's clock clamps its own readings.
  uint64_t last = 0, run_first = UINT64_MAX;  // run_first: the earliest start of the run's instructions
  for (const RawBatch& batch : raw_batches_) {
    while (merged.size() < batch.at) merged.push_back(events_[cursor++]);
    auto ns = [&](uint64_t reading, uint32_t flags) -> uint64_t {
      if ((flags & ET_TRACE_RECORD_NS) != 0 || batch.ns_per_tick <= 0) return reading;
      // Signed: a batch's earlier runs may precede its anchor. In double, range-checked (any input is valid).
      const auto delta = static_cast<double>(static_cast<int64_t>(reading - batch.anchor_ticks));
      const double at = static_cast<double>(batch.anchor_ns) + delta * batch.ns_per_tick;
      if (!(at > 0)) return 0;
      return at < 1.8e19 ? static_cast<uint64_t>(at) : UINT64_MAX;
    };
    for (size_t i = batch.first; i < batch.first + batch.count; ++i) {
      const et_trace_record& raw = raw_[i];
      ProfileRecord record;
      record.start_ns = ns(raw.start, raw.flags);
      record.end_ns = ns(raw.end, raw.flags);
      if (raw.kind == ET_TRACE_DELEGATE_EVENT) {  // inside the delegate call whose record follows
        record.start_ns = std::max(record.start_ns, last);
        record.end_ns = std::max(record.end_ns, record.start_ns);
        record.instruction = raw.id;
        record.chain = raw.chain_id < 0 ? 0 : raw.chain_id;
        record.kept_name = raw.name != nullptr ? raw.name : "";
        if (raw.debug_handle >= 0)
          record.delegate_id_int = static_cast<int32_t>(std::min<int64_t>(raw.debug_handle, INT32_MAX));
        else
          record.name_is_delegate_id = true;
        record.kept_plugin = raw.plugin;
        merged.push_back({true, static_cast<uint32_t>(profiles_.size())});
        profiles_.push_back(record);
        continue;  // `last` stays the previous instruction's end: the call began before its events
      }
      if (raw.kind == ET_TRACE_METHOD) {  // the run: began before its instructions, ends after them
        record.end_ns = std::max(record.end_ns, last);
        record.start_ns = std::min({record.start_ns, record.end_ns, run_first});
        run_first = UINT64_MAX;
        record.name = run_name;
        record.instruction = -1;
      } else {
        record.start_ns = std::max(record.start_ns, last);
        record.end_ns = std::max(record.end_ns, record.start_ns);
        run_first = std::min(run_first, record.start_ns);
        record.instruction = raw.id;
        record.chain = raw.chain_id < 0 ? 0 : raw.chain_id;
        if (raw.kind == ET_TRACE_DELEGATE)
          record.name = delegate_name;
        else
          record.kept_name = raw.name != nullptr ? raw.name : "";
      }
      last = record.end_ns;
      record.kept_plugin = raw.plugin;
      merged.push_back({true, static_cast<uint32_t>(profiles_.size())});
      profiles_.push_back(record);
    }
  }
  merged.insert(merged.end(), events_.begin() + static_cast<std::ptrdiff_t>(cursor), events_.end());
  events_.swap(merged);
  raw_.clear();
  raw_batches_.clear();
  raw_events_ = 0;
  settled_raw_ = 0;
  unresolved_ = true;
}

void EventLog::copy_prefixes(const et_trace_batch& batch) {
  const size_t stride = batch.records[0].struct_size;
  const auto* bytes = reinterpret_cast<const unsigned char*>(batch.records);
  for (size_t i = 0; i < batch.count; ++i) {
    et_trace_record record{};
    record.debug_handle = -1;  // a shorter record has none
    if (stride >= offsetof(et_trace_record, flags) + sizeof(record.flags))  // else: too short to be 1.6
      std::memcpy(&record, bytes + i * stride, std::min(stride, sizeof record));
    raw_.push_back(record);
  }
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
    if (record.name_is_delegate_id) record.delegate_id_str = record.name;
    record.name_is_delegate_id = false;
    record.kept_name = record.kept_plugin = nullptr;
  }
  unresolved_ = false;
}

size_t EventLog::memory_bytes() const {
  return blocks_.capacity() * sizeof(RunBlock) + events_.capacity() * sizeof(EventRecord) +
         profiles_.capacity() * sizeof(ProfileRecord) + debugs_.capacity() * sizeof(DebugRecord) +
         raw_.capacity() * sizeof(et_trace_record) + raw_batches_.capacity() * sizeof(RawBatch) + shape_bytes_ +
         name_bytes_;
}

void EventLog::clear() {
  raw_.clear();
  raw_batches_.clear();
  raw_events_ = 0;
  settled_raw_ = 0;
  raw_run_open_ = false;
  blocks_.clear();
  events_.clear();
  profiles_.clear();
  debugs_.clear();
  shape_bytes_ = 0;
}

}  // namespace etrt::etdump
