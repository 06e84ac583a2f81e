#include "etrt/base/printable_text.h"

#include <cstdint>
#include <cstdio>

#include "etrt/base/utf8.h"

namespace etrt::base {
namespace {

void append_escape(std::string* out, const char* format, uint32_t value) {
  char buffer[12];
  std::snprintf(buffer, sizeof buffer, format, static_cast<unsigned>(value));
  *out += buffer;
}

bool is_format_control(char32_t c) {
  return (c >= 0x80 && c <= 0x9f) ||      // C1 controls (0x9b is a CSI on its own)
         (c >= 0x202a && c <= 0x202e) ||  // bidirectional embeddings and overrides
         (c >= 0x2066 && c <= 0x2069) ||  // bidirectional isolates
         c == 0x2028 || c == 0x2029;      // line and paragraph separators
}

}  // namespace

std::string printable_text(std::string_view text, Newlines newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const auto c = static_cast<uint8_t>(text[at]);
    if (c < 0x80) {
      if (c == '\\') out += "\\\\";
      else if (c == '\n') out += newlines == Newlines::keep ? "\n" : "\\n";
      else if (c == '\t') out += "\\t";
      else if (c == '\r') out += "\\r";
      else if (c < 0x20 || c == 0x7f) append_escape(&out, "\\x%02x", c);
      else out += static_cast<char>(c);
      ++at;
      continue;
    }
    char32_t code_point = 0;
    const size_t length = utf8_sequence(text.substr(at), &code_point);
    if (length == 0) {
      append_escape(&out, "\\x%02x", c);
      ++at;
    } else if (is_format_control(code_point)) {
      append_escape(&out, "\\u%04x", code_point);
      at += length;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

}  // namespace etrt::base
