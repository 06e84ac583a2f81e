// libFuzzer target for the etdump tracer plugin: the bytes are a script of calls
// a host makes on a tracing session through the plugin's own descriptor
// (plugin_api.h, ABI 1.3-1.6) -- spans begun and ended in any order, values of every
// kind with tensors of any dtype and shape, names and plugin names of any bytes
// (they come from programs), results fetched between runs, and (a 1.5/1.6 host,
// header bit 0x02) whole spans and batches of raw records: any count up to the
// host's buffer, runs open across batches, ET_TRACE_BATCH_IN_RUN, nanosecond
// records among tick records, any anchor and rate (0, negative, NaN, huge),
// ticks that jump or go backwards, records of other sizes than this build's --
// and every result is checked: the ETDump is a size-prefixed flatbuffer with
// identifier ED00 that the generated verifier accepts, the Chrome trace is valid
// UTF-8 JSON (its whole grammar checked at the end of the script), the debug buffer never
// exceeds the size asked for. Errors are expected; a crash, a sanitizer report,
// a failed check, a hang or a leak is a finding.
//
// The plugin is reached as a host reaches it: et_plugin_entry, then its init with
// a host table of our own that captures the registered tracer.
//
// Built by fuzz/CMakeLists.txt as etdump_fuzzer (clang, ETRT_BUILD_FUZZERS=ON)
// and, with any compiler, into etdump_fuzz_replay (fuzz/replay_main.cpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "etdump_generated.h"
#include "etrt/plugin_api.h"

// The host's error object is opaque to plugins; this host defines its own.
struct et_error {
  int32_t code;
  std::string message;
};

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "etdump_fuzzer: %s\n", what);
  std::abort();
}

et_error* make_error(int32_t code, const char* message) { return new et_error{code, message ? message : ""}; }
void destroy_error(et_error* error) { delete error; }

// ETRT_MAX_TRACE_MEMORY as this host's setting (empty: unset), chosen per script.
std::string g_trace_memory_setting;
const char* host_setting(et_plugin_handle*, const char* name) {
  if (std::strcmp(name, "ETRT_MAX_TRACE_MEMORY") != 0 || g_trace_memory_setting.empty()) return nullptr;
  return g_trace_memory_setting.c_str();
}

et_tracer_descriptor g_tracer{};
et_error* capture_tracer(et_plugin_handle*, const et_tracer_descriptor* tracer) {
  if (tracer == nullptr || tracer->struct_size < sizeof(et_tracer_descriptor)) finding("tracer descriptor too small");
  g_tracer = *tracer;
  return nullptr;
}

// Loads the plugin once, as the loader would (offer, answer, init).
const et_tracer_descriptor& tracer() {
  static const bool loaded = [] {
    static et_host_api host{};
    host.struct_size = sizeof host;
    host.abi_major = ET_ABI_MAJOR;
    host.abi_minor = ET_ABI_MINOR;
    host.error_create = make_error;
    host.error_destroy = destroy_error;
    host.register_tracer = capture_tracer;
    host.setting = host_setting;
    et_abi_offer offer{sizeof offer, ET_ABI_MAJOR, 0, ET_ABI_MINOR};
    et_abi_answer answer{};
    answer.struct_size = sizeof answer;
    if (et_plugin_entry(&offer, &answer) != ET_OK || answer.info == nullptr) finding("the plugin refused the offer");
    et_error* error = answer.info->init(&host, nullptr);
    if (error != nullptr || g_tracer.session_create == nullptr) finding("the plugin's init failed");
    return true;
  }();
  (void)loaded;
  return g_tracer;
}

// Reads the script; past its end every read gives zeros.
class Script {
 public:
  Script(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint64_t u64(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | byte();
    return v;
  }
  int64_t small_int() { return static_cast<int8_t>(byte()); }  // -128..127: ids, chains, handles
  // A string of up to 31 bytes, any bytes but NUL (C strings).
  std::string text() {
    size_t n = byte() % 32;
    std::string s;
    for (size_t i = 0; i < n && !done(); ++i) {
      char c = static_cast<char>(byte());
      if (c != '\0') s += c;
    }
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

size_t element_size(int32_t dtype) {
  switch (dtype) {
    case ET_DTYPE_UINT8: case ET_DTYPE_INT8: case ET_DTYPE_BOOL: return 1;
    case ET_DTYPE_INT16: case ET_DTYPE_FLOAT16: case ET_DTYPE_BFLOAT16: return 2;
    case ET_DTYPE_INT32: case ET_DTYPE_FLOAT32: return 4;
    default: return 8;
  }
}

// A tensor as a host would lend it: consistent sizes, strides and nbytes.
struct OwnedTensor {
  std::vector<int64_t> sizes, strides;
  std::vector<uint8_t> order;
  std::vector<uint8_t> data;
  et_tensor t{};

  explicit OwnedTensor(Script& s) {
    static constexpr int32_t kDtypes[] = {ET_DTYPE_UINT8, ET_DTYPE_INT8, ET_DTYPE_INT16, ET_DTYPE_INT32,
                                          ET_DTYPE_INT64, ET_DTYPE_FLOAT16, ET_DTYPE_FLOAT32,
                                          ET_DTYPE_FLOAT64, ET_DTYPE_BOOL, ET_DTYPE_BFLOAT16};
    int32_t dtype = kDtypes[s.byte() % (sizeof kDtypes / sizeof kDtypes[0])];
    int rank = s.byte() % 5;
    sizes.resize(rank);
    strides.resize(rank);
    order.resize(rank);
    size_t numel = 1;
    for (int d = 0; d < rank; ++d) numel *= static_cast<size_t>(sizes[d] = s.byte() % 6);
    for (int d = rank, stride = 1; d-- > 0;) {
      strides[d] = stride;
      order[d] = static_cast<uint8_t>(d);
      stride *= static_cast<int>(sizes[d] > 0 ? sizes[d] : 1);
    }
    data.resize(numel * element_size(dtype));
    for (auto& b : data) b = s.byte();
    t.struct_size = sizeof t;
    t.dtype = dtype;
    t.rank = rank;
    t.sizes = sizes.data();
    t.dim_order = order.data();
    t.strides = strides.data();
    t.data = data.empty() ? nullptr : data.data();
    t.nbytes = t.capacity_bytes = data.size();
  }
};

bool valid_utf8(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    // Traces are mostly ASCII: eight bytes at a time while none has its high bit set.
    if (uint64_t word; i + sizeof word <= text.size()) {
      std::memcpy(&word, text.data() + i, sizeof word);
      if ((word & 0x8080808080808080ull) == 0) {
        i += sizeof word;
        continue;
      }
    }
    auto c = static_cast<unsigned char>(text[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > text.size()) return false;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;  // overlong, surrogate
    i += n;
  }
  return true;
}

// Whether `text` is one JSON value (RFC 8259 grammar; its UTF-8 is checked by valid_utf8),
// without building the document: the loader's parse_json builds one, and that was a fifth
// of all the fuzzer's time.
class JsonGrammar {
 public:
  static bool accepts(std::string_view text) {
    JsonGrammar json(text);
    json.space();
    const bool ok = json.value(0);
    json.space();
    return ok && json.at_ == json.end_;
  }

 private:
  explicit JsonGrammar(std::string_view text) : at_(text.data()), end_(text.data() + text.size()) {}
  bool eat(char c) {
    if (at_ == end_ || *at_ != c) return false;
    ++at_;
    return true;
  }
  void space() {
    while (at_ != end_ && (*at_ == ' ' || *at_ == '\n' || *at_ == '\t' || *at_ == '\r')) ++at_;
  }
  bool digits() {
    const char* first = at_;
    while (at_ != end_ && *at_ >= '0' && *at_ <= '9') ++at_;
    return at_ != first;
  }
  bool word(std::string_view w) {
    if (static_cast<size_t>(end_ - at_) < w.size() || std::string_view(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }
  bool value(int depth) {
    if (at_ == end_ || depth > 64) return false;
    switch (*at_) {
      case '{': return members(depth);
      case '[': return elements(depth);
      case '"': return string();
      case 't': return word("true");
      case 'f': return word("false");
      case 'n': return word("null");
      default: return number();
    }
  }
  bool members(int depth) {
    ++at_;
    space();
    if (eat('}')) return true;
    do {
      space();
      if (!string()) return false;
      space();
      if (!eat(':')) return false;
      space();
      if (!value(depth + 1)) return false;
      space();
    } while (eat(','));
    return eat('}');
  }
  bool elements(int depth) {
    ++at_;
    space();
    if (eat(']')) return true;
    do {
      space();
      if (!value(depth + 1)) return false;
      space();
    } while (eat(','));
    return eat(']');
  }
  bool string() {
    if (!eat('"')) return false;
    while (at_ != end_) {
      const auto c = static_cast<unsigned char>(*at_++);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c != '\\') continue;
      if (at_ == end_) return false;
      const char escape = *at_++;
      if (escape == 'u') {
        for (int i = 0; i < 4; ++i, ++at_)
          if (at_ == end_ || std::string_view("0123456789abcdefABCDEF").find(*at_) == std::string_view::npos) return false;
      } else if (std::string_view("\"\\/bfnrt").find(escape) == std::string_view::npos) {
        return false;
      }
    }
    return false;
  }
  bool number() {
    eat('-');
    if (!eat('0') && !digits()) return false;
    if (eat('.') && !digits()) return false;
    if (eat('e') || eat('E')) {
      if (!eat('+')) eat('-');
      if (!digits()) return false;
    }
    return true;
  }

  const char* at_;
  const char* end_;
};

void append_to(void* context, const void* data, size_t size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), size);
}

// How much of the Chrome trace a fetch checks. Parsing it as JSON was half the harness
// (12% of all samples): the log only grows and every event is written the same way at
// every fetch, so the trace fetched at the end contains each fragment of an earlier one
// and its full parse covers them; earlier fetches check UTF-8 and the framing.
enum class TraceCheck { kFraming, kFullJson };

// Fetches one result and checks what the format promises.
void fetch_and_check(void* session, const char* what, size_t debug_buffer_size, TraceCheck trace_check) {
  std::string out;
  et_error* error = tracer().session_result(session, what, append_to, &out);
  if (error != nullptr) {
    // A limit on the session's memory (ETRT_MAX_TRACE_MEMORY) is set only by scripts that ask for one.
    bool expected = (error->code == ET_ERR_NOT_FOUND) ||
                    (error->code == ET_ERR_OUT_OF_MEMORY && error->message.find("debug buffer") != std::string::npos) ||
                    (error->code == ET_ERR_OUT_OF_MEMORY && !g_trace_memory_setting.empty() &&
                     error->message.find("ETRT_MAX_TRACE_MEMORY") != std::string::npos);
    if (!expected || error->message.empty()) finding("unexpected error from session_result");
    destroy_error(error);
    return;
  }
  if (std::strcmp(what, "etdump") == 0) {
    if (out.size() < 8 || std::memcmp(out.data() + 8, "ED00", 4) != 0) finding("ETDump without its identifier");
    uint32_t prefix;
    std::memcpy(&prefix, out.data(), 4);
    if (prefix != out.size() - 4) finding("ETDump size prefix does not match its size");
    flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(out.data()), out.size());
    if (!etrt::etdump::VerifySizePrefixedETDumpBuffer(verifier)) finding("ETDump fails the flatbuffer verifier");
  } else if (std::strcmp(what, "chrome_trace") == 0) {
    if (!valid_utf8(out)) finding("Chrome trace is not valid UTF-8");
    constexpr std::string_view kHead = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", kTail = "\n]}\n";
    if (out.size() < kHead.size() + kTail.size() || out.compare(0, kHead.size(), kHead) != 0 ||
        out.compare(out.size() - kTail.size(), kTail.size(), kTail) != 0)
      finding("Chrome trace without its framing");
    if (trace_check == TraceCheck::kFullJson && !JsonGrammar::accepts(out))
      finding("Chrome trace is not valid JSON");
  } else if (std::strcmp(what, "debug_buffer") == 0) {
    if (out.size() > debug_buffer_size) finding("debug buffer larger than asked for");
  }
}

// Names a 1.5/1.6 host keeps for the session (valid until session_destroy): spans and
// records point into it. An equal text at two addresses and invalid UTF-8 on purpose.
class KeptNames {
 public:
  KeptNames() {
    for (const char* text : {"forward", "aten::add.out", "aten::add.out", "\xff\xfe\"\\ op\xc3", "kernels_optimized"})
      keep(text);
  }
  const char* keep(std::string text) {
    texts_.push_back(std::move(text));  // a deque: the texts kept so far never move
    return texts_.back().c_str();
  }
  // One of the last eight kept.
  const char* recent(unsigned k) const { return texts_[texts_.size() - 1 - k % std::min<size_t>(texts_.size(), 8)].c_str(); }

 private:
  std::deque<std::string> texts_;
};

// The host's counter across a script's batches, and the next instruction of the run.
struct HostCounter {
  uint64_t ticks = 1000;
  int32_t next_instruction = 0;
};

// Records one script delivers in all: each becomes an event every later fetch writes
// and checks, so the total, not the count per batch, bounds a script's work.
constexpr size_t kMaxRecordsPerScript = 1024;
constexpr size_t kHostBatch = 256;  // the host's buffer (core/src/program/tracing.h kTraceRecordBatch)

// Conversion rates a host might report, and ones only a broken or hostile host would.
constexpr double kRates[] = {0.0, 1.0, 41.666666666666664, 1.0 / 3.0, 1e-9, 1e9, 1e300, -1.0,
                             std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), -0.0,
                             std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
                             1.0000001};  // index 15: eight bytes of the script

// One record, 2 bytes of the script (6 with 0x80 in the first):
//   k: bits 0-1 kind (operator, delegate, method, delegate event; explicit: any int32), 0x04 ET_TRACE_RECORD_NS,
//      0x08 no name, bits 4-5 which kept name, 0x40 no plugin, 0x80 explicit fields;
//   d: duration in ticks (explicit: signed, the span may end before it starts).
// Explicit: id, chain, the start's distance from the counter (signed: ticks go
// backwards), the flags (any bits), and for kind 3 any int32 kind.
et_trace_record read_record(Script& s, const KeptNames& kept, HostCounter& counter) {
  static constexpr int32_t kKinds[] = {ET_TRACE_OPERATOR, ET_TRACE_DELEGATE, ET_TRACE_METHOD, ET_TRACE_DELEGATE_EVENT};
  const uint8_t k = s.byte(), d = s.byte();
  et_trace_record r{};
  r.struct_size = sizeof r;
  r.kind = kKinds[k & 3];
  r.flags = (k & 0x04) ? ET_TRACE_RECORD_NS : 0u;
  r.name = (k & 0x08) ? nullptr : kept.recent((k >> 4) & 3);
  r.plugin = (k & 0x40) ? nullptr : kept.recent(((k >> 4) & 3) + 1);
  if (k & 0x80) {
    r.id = static_cast<int32_t>(s.small_int());
    r.chain_id = static_cast<int32_t>(s.small_int());
    r.start = counter.ticks + static_cast<uint64_t>(s.small_int());
    r.flags = s.byte();
    if ((k & 3) == 3) r.kind = static_cast<int32_t>(s.small_int());
    r.end = r.start + static_cast<uint64_t>(static_cast<int8_t>(d));
  } else {
    r.start = counter.ticks + 1;
    r.end = r.start + d;
    const bool run = r.kind == ET_TRACE_METHOD;
    r.id = run ? -1 : counter.next_instruction++;
    r.chain_id = run ? -1 : 0;
    if (run) counter.next_instruction = 0;
  }
  r.debug_handle = (d & 1) ? -1 : d;  // a delegate event's id, or -1: its name is the id
  counter.ticks = r.end;
  return r;
}

// A session_records call (ABI 1.6). Bytes: flags f, count, anchor mode a, then the
// counter's jump (8 bytes, f & 0x80), the anchor's bytes, the rate's (index 15), the records.
//   f: 0x01 ET_TRACE_BATCH_IN_RUN; bits 1-3 the records' size (this build's, a newer
//      host's longer ones, or too short to read); bits 4-5 the batch's own size (full,
//      a newer host's, the minimum, too small: ignored); 0x40 records null; 0x80 the
//      counter jumps to any value first.
//   count: 0-254, 255 means 256 (the host's buffer), within kMaxRecordsPerScript.
//   a: bits 0-1 how the anchor relates to the counter, bits 2-5 the rate (kRates).
// Returns how many records it delivered.
size_t deliver_batch(Script& s, const et_tracer_descriptor& t, void* session, const KeptNames& kept,
                     HostCounter& counter, size_t& records_left) {
  struct NewerBatch {  // a later ABI's batch: fields this plugin does not know after its own
    et_trace_batch batch;
    uint64_t newer[2];
  };
  constexpr size_t kRecord = sizeof(et_trace_record);
  static constexpr size_t kStrides[] = {kRecord, kRecord, kRecord, kRecord, kRecord + 8, kRecord + 72, kRecord - 8, 8};
  static constexpr size_t kBatchSizes[] = {sizeof(et_trace_batch), sizeof(NewerBatch),
                                           offsetof(et_trace_batch, reserved), offsetof(et_trace_batch, flags)};
  const uint8_t f = s.byte();
  size_t count = s.byte();
  if (count == 255) count = kHostBatch;
  count = std::min(count, records_left);
  records_left -= count;
  const uint8_t a = s.byte();
  if (f & 0x80) counter.ticks = s.u64(8);
  NewerBatch holder{};
  et_trace_batch& batch = holder.batch;
  batch.struct_size = kBatchSizes[(f >> 4) & 3];
  batch.flags = (f & 1) ? ET_TRACE_BATCH_IN_RUN : 0u;
  switch (a & 3) {
    case 0: batch.anchor_ticks = counter.ticks, batch.anchor_ns = s.u64(3); break;
    case 1: batch.anchor_ticks = counter.ticks - s.byte(), batch.anchor_ns = s.u64(4); break;  // records after it
    case 2: batch.anchor_ticks = s.u64(8), batch.anchor_ns = s.u64(8); break;
    case 3:  // records before the anchor; the clock at 0 or at its end
      batch.anchor_ticks = counter.ticks + s.u64(2);
      batch.anchor_ns = (a & 0x40) ? UINT64_MAX : 0;
      break;
  }
  const unsigned rate = (a >> 2) & 15;
  if (rate < std::size(kRates)) {
    batch.ns_per_tick = kRates[rate];
  } else {
    const uint64_t bits = s.u64(8);
    std::memcpy(&batch.ns_per_tick, &bits, sizeof bits);
  }
  std::vector<et_trace_record> records(count);
  for (et_trace_record& r : records) r = read_record(s, kept, counter);
  const size_t stride = kStrides[(f >> 1) & 7];
  std::vector<uint64_t> packed;  // records `stride` bytes apart, as a host of another ABI lays them out
  batch.count = count;
  batch.records = records.data();
  if (stride != kRecord && count > 0) {
    packed.assign((count * stride + 7) / 8 + 1, 0xA5A5A5A5A5A5A5A5ull);  // a newer host's fields: any bytes
    auto* bytes = reinterpret_cast<unsigned char*>(packed.data());
    for (size_t i = 0; i < count; ++i) {
      records[i].struct_size = stride;
      std::memcpy(bytes + i * stride, &records[i], std::min(stride, kRecord));
    }
    batch.records = reinterpret_cast<const et_trace_record*>(packed.data());
  }
  if (f & 0x40) batch.records = nullptr;
  t.session_records(session, &batch);
  return count;
}

// A session_value call: the value's tag, scalars and tensors come from the script.
void deliver_value(Script& s, const et_tracer_descriptor& t, void* session, const et_trace_event& event,
                   uint8_t op) {
  et_value value{};
  value.struct_size = sizeof value;
  std::vector<OwnedTensor> tensors;
  std::vector<et_tensor*> items;
  value.tag = s.byte() % 11;
  value.as_int = s.small_int();
  value.as_double = static_cast<double>(s.small_int()) / 3.0;
  if (value.tag == ET_VALUE_TENSOR) {
    tensors.emplace_back(s);
    value.tensor = (op & 0x10) ? nullptr : &tensors[0].t;
  } else if (value.tag == ET_VALUE_TENSOR_LIST || value.tag == ET_VALUE_OPTIONAL_TENSOR_LIST) {
    size_t n = s.byte() % 4;
    tensors.reserve(n);
    for (size_t i = 0; i < n; ++i) tensors.emplace_back(s);
    for (auto& owned : tensors) items.push_back(&owned.t);
    if (!items.empty() && (op & 0x10)) items[0] = nullptr;  // an absent optional tensor
    value.items = items.data();
    value.count = items.size();
  }
  const bool is_method_output = s.byte() & 1;
  if (t.session_value != nullptr) t.session_value(session, &event, &value, is_method_output);
}

enum class Step { kBegin, kEnd, kValue, kFetch, kSpan, kRecords };

// What an op byte asks: a 1.4 host (header bit 0x02 clear) decodes op % 5 as the
// harness always did, so older scripts replay alike; a 1.6 host op & 7, with its
// flags in the high bits.
Step step_of(uint8_t op, bool abi_1_6) {
  static constexpr Step kClassic[] = {Step::kBegin, Step::kEnd, Step::kValue, Step::kFetch, Step::kFetch};
  static constexpr Step k16[] = {Step::kBegin, Step::kEnd,     Step::kValue,    Step::kFetch,
                                 Step::kSpan,  Step::kRecords, Step::kRecords, Step::kFetch};
  return abi_1_6 ? k16[op & 7] : kClassic[op % 5];
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  tracer();
  // The JSON check must catch what it is there for.
  for (const char* bad : {"", "{", "{\"a\":1,}", "[1 2]", "\"\x01\"", "01", "{\"a\"}", "\"\\x\"", "[1] x", "1.", "-", "tru"})
    if (JsonGrammar::accepts(bad)) finding("the JSON check accepts malformed JSON");
  if (!JsonGrammar::accepts(" {\"a\":[1,-0.5e+3,true,false,null,\"\\u00e9\\n\",{}]}\n"))
    finding("the JSON check rejects valid JSON");
  return 0;
}

// Script: a header byte (0x01: a debug buffer of the next 2 bytes * 8 bytes; 0x02: a
// 1.6 host; 0x04: ETRT_MAX_TRACE_MEMORY of the next byte * 8 KiB, around what a
// session holds when it opens), the session's label, then up to 512 steps. A step other than records:
// op, name, plugin, the event's kind, id, chain, debug handle, timestamp (3 bytes),
// thread, then the step's own bytes.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Script s(data, size);
  const et_tracer_descriptor& t = tracer();
  const uint8_t header = s.byte();
  const bool abi_1_6 = (header & 2) != 0 && t.session_span != nullptr && t.session_records != nullptr;
  size_t debug_buffer_size = (header & 1) ? static_cast<size_t>(s.u64(2)) * 8 : 0;  // up to 512 KiB
  const size_t memory_limit = (header & 4) ? size_t{s.byte()} * 8 * 1024 : SIZE_MAX;
  g_trace_memory_setting = (header & 4) ? std::to_string(memory_limit / 1024) + "K" : "";
  std::string label = s.text();
  et_trace_session_args args{sizeof args, label.c_str(), debug_buffer_size};
  KeptNames kept;  // outlives the session
  HostCounter counter;
  size_t records_left = kMaxRecordsPerScript;
  void* session = nullptr;
  if (et_error* error = t.session_create(t.user_data, &args, &session)) {
    // Refused only for a debug buffer larger than the session may hold, saying so.
    if (error->code != ET_ERR_OUT_OF_MEMORY || debug_buffer_size <= memory_limit ||
        error->message.find("ETRT_MAX_TRACE_MEMORY") == std::string::npos)
      finding("session_create refused a session it should open");
    destroy_error(error);
    return 0;
  }
  if (debug_buffer_size > memory_limit) finding("session_create opened a session over its memory limit");
  static const char* const kResults[] = {"etdump", "chrome_trace", "debug_buffer", "operator_summary", "nothing"};
  // Each fetch serialises and checks the whole session so far: unbounded, fetches made a
  // 512-step script quadratic (and the fuzzer ~200 exec/s). A few between steps cover
  // fetching mid-run, within a budget of events written (the fetches at the end write
  // every event once more); later fetch steps still read their byte, so scripts decode alike.
  constexpr int kMaxFetchesBetweenSteps = 8;
  constexpr size_t kMidFetchEvents = 2048;
  int fetches = 0;
  size_t events = 0;          // events the session may hold: calls that can add one
  size_t events_fetched = 0;  // written by the fetches between steps so far
  int steps = 0;
  while (!s.done() && steps++ < 512) {
    const uint8_t op = s.byte();
    const Step step = step_of(op, abi_1_6);
    if (step == Step::kRecords) {
      events += deliver_batch(s, t, session, kept, counter, records_left);
      continue;
    }
    if (step != Step::kBegin && step != Step::kFetch) ++events;
    std::string name = s.text(), plugin = s.text();
    et_trace_event event{};
    // Hosts of 1.2 and earlier pass the shorter event (no plugin, no thread).
    event.struct_size = (op & 0x80) ? offsetof(et_trace_event, plugin) : sizeof event;
    event.kind = static_cast<int32_t>(s.byte() % 7);  // 0..5 known, 6 unknown
    // A span's texts are the host's for the session's life; others are borrowed for the call.
    const bool kept_texts = step == Step::kSpan;
    event.name = (op & 0x40) ? nullptr : kept_texts ? kept.keep(name) : name.c_str();
    event.id = s.small_int();
    event.chain_id = s.small_int();
    event.debug_handle = s.small_int();
    event.timestamp_ns = s.u64(3);
    event.plugin = (op & 0x20) ? nullptr : kept_texts ? kept.keep(plugin) : plugin.c_str();
    event.thread = s.byte() % 4;
    switch (step) {
      case Step::kBegin: t.session_begin(session, &event); break;
      case Step::kEnd: t.session_end(session, &event); break;
      case Step::kValue: deliver_value(s, t, session, event, op); break;
      case Step::kSpan: t.session_span(session, &event, s.u64(3)); break;  // starts at any time, even after its end
      case Step::kFetch: {
        const char* what = kResults[s.byte() % 5];
        if (fetches++ < kMaxFetchesBetweenSteps && events_fetched + events <= kMidFetchEvents) {
          events_fetched += events;
          fetch_and_check(session, what, debug_buffer_size, TraceCheck::kFraming);
        }
        break;
      }
      case Step::kRecords: break;  // handled above
    }
  }
  for (const char* what : kResults) fetch_and_check(session, what, debug_buffer_size, TraceCheck::kFullJson);
  t.session_destroy(t.user_data, session);
  return 0;
}
