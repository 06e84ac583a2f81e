// libFuzzer target for the etdump tracer plugin: the bytes are a script of calls
// a host makes on a tracing session through the plugin's own descriptor
// (plugin_api.h, ABI 1.3) -- spans begun and ended in any order, values of every
// kind with tensors of any dtype and shape, names and plugin names of any bytes
// (they come from programs), results fetched between runs -- and every result is
// checked: the ETDump is a size-prefixed flatbuffer with identifier ED00 that the
// generated verifier accepts, the Chrome trace is valid UTF-8 JSON (parsed in full
// at the end of the script), the debug buffer never exceeds the size asked for. Errors are expected; a crash, a
// sanitizer report, a failed check, a hang or a leak is a finding.
//
// The plugin is reached as a host reaches it: et_plugin_entry, then its init with
// a host table of our own that captures the registered tracer.
//
// Built by fuzz/CMakeLists.txt as etdump_fuzzer (clang, ETRT_BUILD_FUZZERS=ON)
// and, with any compiler, into etdump_fuzz_replay (fuzz/replay_main.cpp).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "etdump_generated.h"
#include "etrt/plugin_api.h"
#include "loader/json.h"

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
    bool expected = (error->code == ET_ERR_NOT_FOUND) ||
                    (error->code == ET_ERR_OUT_OF_MEMORY && error->message.find("debug buffer") != std::string::npos);
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
    if (trace_check == TraceCheck::kFullJson && !etrt::loader::parse_json(out).ok)
      finding("Chrome trace is not valid JSON");
  } else if (std::strcmp(what, "debug_buffer") == 0) {
    if (out.size() > debug_buffer_size) finding("debug buffer larger than asked for");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  tracer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Script s(data, size);
  const et_tracer_descriptor& t = tracer();
  size_t debug_buffer_size = (s.byte() & 1) ? static_cast<size_t>(s.u64(2)) * 8 : 0;  // up to 512 KiB
  std::string label = s.text();
  et_trace_session_args args{sizeof args, label.c_str(), debug_buffer_size};
  void* session = nullptr;
  if (et_error* error = t.session_create(t.user_data, &args, &session)) {
    destroy_error(error);
    return 0;
  }
  static const char* const kResults[] = {"etdump", "chrome_trace", "debug_buffer", "operator_summary", "nothing"};
  // Each fetch serialises and checks the whole session so far: unbounded, fetches made a
  // 512-step script quadratic (and the fuzzer ~200 exec/s). A few between steps cover
  // fetching mid-run; later fetch steps still read their byte, so scripts decode alike.
  constexpr int kMaxFetchesBetweenSteps = 8;
  int fetches = 0;
  int steps = 0;
  while (!s.done() && steps++ < 512) {
    uint8_t op = s.byte();
    std::string name = s.text(), plugin = s.text();
    et_trace_event event{};
    // Hosts of 1.2 and earlier pass the shorter event (no plugin, no thread).
    event.struct_size = (op & 0x80) ? offsetof(et_trace_event, plugin) : sizeof event;
    event.kind = static_cast<int32_t>(s.byte() % 7);  // 0..5 known, 6 unknown
    event.name = (op & 0x40) ? nullptr : name.c_str();
    event.id = s.small_int();
    event.chain_id = s.small_int();
    event.debug_handle = s.small_int();
    event.timestamp_ns = s.u64(3);
    event.plugin = (op & 0x20) ? nullptr : plugin.c_str();
    event.thread = s.byte() % 4;
    switch (op % 5) {
      case 0: t.session_begin(session, &event); break;
      case 1: t.session_end(session, &event); break;
      case 2: {
        if (t.session_value == nullptr) break;
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
        t.session_value(session, &event, &value, s.byte() & 1);
        break;
      }
      case 3:
      case 4: {
        const char* what = kResults[s.byte() % 5];
        if (fetches++ < kMaxFetchesBetweenSteps) fetch_and_check(session, what, debug_buffer_size, TraceCheck::kFraming);
        break;
      }
    }
  }
  for (const char* what : kResults) fetch_and_check(session, what, debug_buffer_size, TraceCheck::kFullJson);
  t.session_destroy(t.user_data, session);
  return 0;
}
