#include "chrome_trace.h"

#include <cinttypes>
#include <cstdio>
#include <set>
#include <vector>

#include "utf8.h"

namespace etrt::etdump {
namespace {

void append_json_string(std::string& out, const std::string& raw) {
  out += '"';
  for (unsigned char c : repair_utf8(raw)) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

// Each name's JSON string, escaped when first needed (a run repeats a few names).
class JsonNames {
 public:
  explicit JsonNames(const EventLog& log) : log_(log), escaped_(log.name_count()) {}
  const std::string& operator()(NameId id) {
    std::string& escaped = escaped_[id];
    if (escaped.empty()) append_json_string(escaped, log_.text(id));  // never empty once written: quoted
    return escaped;
  }

 private:
  const EventLog& log_;
  std::vector<std::string> escaped_;
};

// Microseconds with nanosecond precision, as the format expects.
void append_micros(std::string& out, uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
  out += text;
}

}  // namespace

std::string write_chrome_trace(const EventLog& log, const std::string& process_name) {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  out += "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":";
  append_json_string(out, process_name);
  out += "}}";
  std::set<uint32_t> threads;
  JsonNames json_name(log);
  for (const RunBlock& block : log.blocks()) {
    for (const EventRecord& event : log.events(block)) {
      if (!event.is_profile) continue;
      const ProfileRecord& p = log.profile(event);
      threads.insert(p.thread);
      out += ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(p.thread) + ",\"name\":";
      out += json_name(p.name);
      out += ",\"cat\":";
      out += json_name(block.name);
      out += ",\"ts\":";
      append_micros(out, p.start_ns);
      out += ",\"dur\":";
      append_micros(out, p.end_ns >= p.start_ns ? p.end_ns - p.start_ns : 0);
      out += ",\"args\":{\"chain\":" + std::to_string(p.chain) + ",\"instruction\":" +
             std::to_string(p.instruction);
      if (p.plugin != kNoName) {
        out += ",\"plugin\":";
        out += json_name(p.plugin);
      }
      if (p.delegate_id_int >= 0) out += ",\"delegate_debug_id\":" + std::to_string(p.delegate_id_int);
      if (p.delegate_id_str != kNoName) {
        out += ",\"delegate_debug_name\":";
        out += json_name(p.delegate_id_str);
      }
      out += "}}";
    }
  }
  for (uint32_t thread : threads) {
    out += ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(thread) +
           ",\"name\":\"thread_name\",\"args\":{\"name\":\"" +
           (thread == 0 ? std::string("caller") : "pool worker " + std::to_string(thread)) + "\"}}";
  }
  out += "\n]}\n";
  return out;
}

}  // namespace etrt::etdump
