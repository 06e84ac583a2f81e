// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing above U+10FFFF.
// Names that reach etrt's outputs come from programs, manifests and plugins: any bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace etrt::base {

// The length of the well-formed UTF-8 sequence at the start of `text` and its code point;
// 0 when there is none (a bad lead or continuation byte, a truncated, overlong or surrogate
// form, a value above U+10FFFF). ASCII is a sequence of length 1.
inline size_t utf8_sequence(std::string_view text, char32_t* code_point) {
  if (text.empty()) return 0;
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  }
  size_t length = 0;
  uint8_t low = 0x80, high = 0xbf;  // the range of the second byte excludes overlong and surrogate forms
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
  char32_t value = lead & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    value = (value << 6) | (byte(i) & 0x3f);
  }
  *code_point = value;
  return length;
}

// `text` with every byte that starts no well-formed sequence replaced by U+FFFD, for formats
// that must hold UTF-8 (JSON, ETDump strings, Chrome traces).
inline std::string repair_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    char32_t code_point = 0;
    const size_t length = utf8_sequence(text.substr(at), &code_point);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++at;
    } else {
      out.append(text, at, length);
      at += length;
    }
  }
  return out;
}

}  // namespace etrt::base
