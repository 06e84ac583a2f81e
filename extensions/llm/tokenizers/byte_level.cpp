#include "byte_level.h"

#include <array>
#include <optional>
#include <unordered_map>

#include "unicode.h"

namespace etrt::llm::detail {

namespace {

struct Alphabet {
  std::array<std::string, 256> chars;
  std::unordered_map<char32_t, unsigned char> bytes;

  Alphabet() {
    // Printable bytes stand for themselves; the others take code points from 256 on, in byte order.
    const auto printable = [](int byte) {
      return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
    };
    char32_t next = 256;
    for (int byte = 0; byte < 256; ++byte) {
      const char32_t code_point = printable(byte) ? static_cast<char32_t>(byte) : next++;
      append_utf8(chars[byte], code_point);
      bytes[code_point] = static_cast<unsigned char>(byte);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet instance;
  return instance;
}

}  // namespace

std::string byte_level_encode(std::string_view bytes) {
  const Alphabet& table = alphabet();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += table.chars[static_cast<unsigned char>(c)];
  return out;
}

std::string byte_level_decode(std::string_view token) {
  const Alphabet& table = alphabet();
  std::string out;
  size_t pos = 0;
  while (pos < token.size()) {
    const size_t length = utf8_char_length(token.substr(pos));
    if (length == 0) return std::string(token);
    const auto it = table.bytes.find(decode_utf8_char(token.substr(pos)));
    if (it == table.bytes.end()) return std::string(token);
    out += static_cast<char>(it->second);
    pos += length;
  }
  return out;
}

}  // namespace etrt::llm::detail
