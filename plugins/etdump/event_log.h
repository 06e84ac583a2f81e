// What a tracing session recorded, in memory, before it is written as ETDump or
// as a Chrome trace. Recording is cheap: an instruction's span keeps the
// pointers to the names the host keeps for the session (ABI 1.5) and they are
// interned only when a result is fetched; other names are interned at once (a
// name passed again at the same address is found by its address); events are
// plain structs appended to vectors shared by all run blocks, so a run adds no
// allocation once the vectors have grown; all formatting happens at write time.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "etrt/plugin_api.h"

namespace etrt::etdump {

// Index into EventLog's string table; 0 is "no string".
using NameId = uint32_t;
constexpr NameId kNoName = 0;

// A timed span (ETDump ProfileEvent).
struct ProfileRecord {
  NameId name = kNoName;
  int32_t chain = 0;
  int32_t instruction = -1;
  int32_t delegate_id_int = -1;
  NameId delegate_id_str = kNoName;
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t thread = 0;  // track in a Chrome trace; not part of ETDump
  NameId plugin = kNoName;  // who served it (profile table, Chrome trace args); not part of ETDump
  bool in_etdump = true;    // false: Chrome trace only (chunks of work on pool threads)
  // Set instead of name/plugin for a span whose texts the host keeps (ABI 1.5
  // session_span); EventLog::finish() turns them into ids.
  const char* kept_name = nullptr;
  const char* kept_plugin = nullptr;
  bool name_is_delegate_id = false;  // a delegate event without a numeric id: its name identifies it
};

// A tensor's metadata; its bytes are in the debug buffer at `offset`.
struct TensorRecord {
  int8_t scalar_type = 0;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

// An instruction's value captured after it ran (ETDump DebugEvent).
struct DebugRecord {
  enum class Kind : uint8_t { Null, Int, Bool, Double, Tensor, TensorList };
  uint64_t chain = 0;
  int32_t instruction = -1;
  int32_t delegate_id_int = -1;
  NameId delegate_id_str = kNoName;
  NameId name = kNoName;
  Kind kind = Kind::Null;
  bool is_output = false;
  int64_t int_value = 0;
  double double_value = 0;
  bool bool_value = false;
  std::vector<TensorRecord> tensors;  // one for Tensor, any number for TensorList
};

struct EventRecord {
  bool is_profile = true;
  uint32_t index = 0;  // into EventLog::profiles() or EventLog::debugs()
};

// One RunData: "Default" for loading a method, "Execute" for each run. Its
// events are a contiguous range of EventLog::events().
struct RunBlock {
  NameId name = kNoName;
  size_t first_event = 0, event_count = 0;
};

class EventLog {
 public:
  // Room for a few hundred runs of a small method before anything grows (a
  // reallocation copies every record so far: not while a run is measured).
  EventLog() {
    strings_.emplace_back();
    blocks_.reserve(256);
    events_.reserve(4096);
    profiles_.reserve(4096);
    raw_.reserve(4096);
    raw_batches_.reserve(256);
  }

  NameId intern(std::string_view text);
  // intern() for a C string the caller passes again and again at one address
  // (the host's instruction names): a hit in a small table keyed by the
  // address, confirmed by comparing the text (the address may have been reused).
  NameId intern_stable(const char* text) {
    if (text == nullptr || *text == '\0') return kNoName;
    AddressSlot& slot = by_address_[slot_of(text)];
    if (slot.address == text && std::strcmp(strings_[slot.id].c_str(), text) == 0) return slot.id;
    slot = {text, intern(text)};
    return slot.id;
  }
  const std::string& text(NameId id) const { return strings_[id]; }
  size_t name_count() const { return strings_.size(); }  // ids are below it (kNoName included)

  // Starts a block; events go to the newest block (one is started on demand).
  void begin_block(std::string_view name) { begin_block(intern(name)); }
  void begin_block(NameId name) {
    settle_raw();
    raw_run_open_ = false;
    blocks_.push_back({name, event_count(), 0});
  }
  void add(const ProfileRecord& record) {
    append({true, static_cast<uint32_t>(profiles_.size())});
    profiles_.push_back(record);
  }
  // A span named by host-kept pointers: no lookup now, finish() before reading.
  void add_unresolved(const ProfileRecord& record) {
    add(record);
    unresolved_ = true;
  }
  // ABI 1.6: a batch of the host's raw records of one or more runs, copied as
  // they are (no conversion, no name lookup, no event per record). Each run
  // gets a block named `run_block`, made when the records are next needed in
  // order (settle_raw(): before any other event, and by finish()); finish()
  // puts their events in place, as ProfileRecords.
  void add_raw(const et_trace_batch& batch, NameId run_block) {
    const size_t first = raw_.size();
    if (batch.count > 0 && batch.records[0].struct_size == sizeof(et_trace_record))
      copy_records(batch.records, batch.count);
    else if (batch.count > 0) [[unlikely]]
      copy_prefixes(batch);
    raw_batches_.push_back(
        {first, batch.count, events_.size() + raw_events_, batch.anchor_ticks, batch.anchor_ns, batch.ns_per_tick});
    raw_events_ += batch.count;
    raw_run_block_ = run_block;
    // A batch ending on a run's own record (or empty) but inside a run: the run
    // has begun with no record yet, and what follows belongs to it. Otherwise
    // nothing to do now (the records' kinds say where runs begin).
    if ((batch.flags & ET_TRACE_BATCH_IN_RUN) != 0 && (raw_.size() == first || raw_.back().kind == ET_TRACE_METHOD))
      [[unlikely]] open_raw_run();
  }
  // Before reading: converts raw records (their ticks to ns, `run_name` for
  // ET_TRACE_METHOD, `delegate_name` for ET_TRACE_DELEGATE) and interns the
  // kept names of add_unresolved() and raw records (each distinct pointer once).
  void finish(NameId run_name, NameId delegate_name);
  void add(DebugRecord record) {
    append({false, static_cast<uint32_t>(debugs_.size())});
    shape_bytes_ += record.tensors.capacity() * sizeof(TensorRecord);
    for (const TensorRecord& t : record.tensors) shape_bytes_ += (t.sizes.capacity() + t.strides.capacity()) * sizeof(int64_t);
    debugs_.push_back(std::move(record));
  }
  // What the log holds in memory (its arrays as allocated, the debug values'
  // shapes, the names), for the session's limit: an estimate within the
  // allocator's own overhead.
  size_t memory_bytes() const;

  const std::vector<RunBlock>& blocks() const { return blocks_; }
  std::span<const EventRecord> events(const RunBlock& block) const {
    return {events_.data() + block.first_event, block.event_count};
  }
  const ProfileRecord& profile(const EventRecord& event) const { return profiles_[event.index]; }
  const DebugRecord& debug(const EventRecord& event) const { return debugs_[event.index]; }
  size_t event_count() const { return events_.size() + raw_events_; }
  void clear();

 private:
  struct AddressSlot {
    const char* address = nullptr;
    NameId id = kNoName;
  };
  static constexpr size_t kAddressSlots = 512;
  static size_t slot_of(const char* text) {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(text) * 0x9E3779B97F4A7C15ull) >> 55) % kAddressSlots;
  }

  void append(EventRecord event) {
    if (settled_raw_ != raw_.size()) [[unlikely]] settle_raw();
    if (blocks_.empty()) [[unlikely]] begin_default_block();
    events_.push_back(event);
    ++blocks_.back().event_count;
  }
  [[gnu::noinline, gnu::cold]] void begin_default_block() { begin_block("Default"); }

  std::deque<std::string> strings_;  // stable: ids index it, the map views it
  std::unordered_map<std::string_view, NameId> ids_;
  std::array<AddressSlot, kAddressSlots> by_address_{};
  std::vector<RunBlock> blocks_;
  std::vector<EventRecord> events_;
  std::vector<ProfileRecord> profiles_;
  std::vector<DebugRecord> debugs_;
  struct RawBatch {
    size_t first = 0, count = 0;
    size_t at = 0;  // where its events go among all events
    uint64_t anchor_ticks = 0, anchor_ns = 0;
    double ns_per_tick = 0;
  };
  void convert_raw(NameId run_name, NameId delegate_name);
  // Counts raw records not yet in a block into run blocks: a record with no run
  // open begins one; an ET_TRACE_METHOD record ends it.
  void settle_raw();
  void open_raw_run();  // settle_raw(), then a run block if none is open
  void copy_prefixes(const et_trace_batch& batch);  // records of another size than this build's
  // Appends in pieces of 32 records (2 KiB): glibc copies a larger block with
  // `rep movsb`, which callgrind, the measure of tracing's cost here, counts per byte.
  void copy_records(const et_trace_record* records, size_t count) {
    // Geometric growth: reserving exactly size + count reallocated (and copied every record so far) at each
    // batch, quadratic over a session with many small batches (a 2-thread run delivers one per worker chunk).
    if (raw_.capacity() < raw_.size() + count) raw_.reserve(std::max(raw_.size() + count, 2 * raw_.capacity()));
    for (size_t done = 0; done < count; done += 32)
      raw_.insert(raw_.end(), records + done, records + done + std::min<size_t>(32, count - done));
  }
  void resolve_names();

  std::vector<et_trace_record> raw_;
  std::vector<RawBatch> raw_batches_;
  size_t raw_events_ = 0;   // raw records, not yet in events_
  size_t settled_raw_ = 0;  // raw_[0, settled_raw_) are counted in blocks
  bool raw_run_open_ = false;  // the newest block is a run of raw records not yet ended
  NameId raw_run_block_ = kNoName;
  bool unresolved_ = false;
  size_t shape_bytes_ = 0;  // debug values' TensorRecords and their sizes and strides
  size_t name_bytes_ = 0;   // interned texts, with their deque and map entries
  std::unordered_map<const char*, NameId> kept_ids_;  // host-kept pointers: valid for the session's life
};

}  // namespace etrt::etdump
