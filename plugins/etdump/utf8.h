// Names in the traces come from programs and plugins, so they can hold any bytes;
// ETDump strings and Chrome trace JSON must be UTF-8 (ExecuTorch's reader and
// Perfetto reject anything else). Writers pass every name through here.
#pragma once

#include <string>
#include <string_view>

namespace etrt::etdump {

// Byte length of the valid UTF-8 sequence at text[i], 0 when it is not one
// (bad lead or continuation byte, truncated, overlong, surrogate, > U+10FFFF).
inline size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const size_t n = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (n <= 1 || i + n > text.size()) return n == 1 ? 1 : 0;
  char32_t cp = lead & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(text[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// The text with every invalid byte replaced by U+FFFD (the text itself when valid).
inline std::string repair_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace etrt::etdump
