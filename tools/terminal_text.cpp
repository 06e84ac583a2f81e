#include "terminal_text.h"

#include <cstdint>
#include <cstdio>

namespace etrt::tools {
namespace {

void append_escape(std::string* out, const char* format, uint32_t value) {
  char buffer[12];
  std::snprintf(buffer, sizeof buffer, format, static_cast<unsigned>(value));
  *out += buffer;
}

// The length of the well-formed UTF-8 sequence at the start of `text` (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF) and its code point; 0 when it is not one.
size_t utf8_sequence(std::string_view text, uint32_t* code_point) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(0);
  size_t length = 0;
  uint8_t low = 0x80, high = 0xbf;  // the range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
  uint32_t value = lead & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    value = (value << 6) | (byte(i) & 0x3f);
  }
  *code_point = value;
  return length;
}

bool is_format_control(uint32_t c) {
  return (c >= 0x80 && c <= 0x9f) ||      // C1 controls (0x9b is a CSI on its own)
         (c >= 0x202a && c <= 0x202e) ||  // bidirectional embeddings and overrides
         (c >= 0x2066 && c <= 0x2069) ||  // bidirectional isolates
         c == 0x2028 || c == 0x2029;      // line and paragraph separators
}

}  // namespace

std::string terminal_text(std::string_view text, Newlines newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const uint8_t c = static_cast<uint8_t>(text[at]);
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
    uint32_t code_point = 0;
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

}  // namespace etrt::tools
