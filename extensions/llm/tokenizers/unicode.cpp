#include "unicode.h"

#include <cstdlib>
#include <memory>

#include <utf8proc.h>

#include "error.h"

namespace etrt::llm::detail {

namespace {

// What a lead byte starts: the sequence's length and the range of its second byte (Unicode's table
// of well-formed UTF-8); length 0 for a byte that starts nothing.
struct LeadByte {
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;
};

LeadByte lead_byte(unsigned char lead) {
  if (lead < 0x80) return {1};
  if (lead >= 0xC2 && lead <= 0xDF) return {2};
  if (lead >= 0xE0 && lead <= 0xEF) return {3, static_cast<unsigned char>(lead == 0xE0 ? 0xA0 : 0x80),
                                            static_cast<unsigned char>(lead == 0xED ? 0x9F : 0xBF)};
  if (lead >= 0xF0 && lead <= 0xF4) return {4, static_cast<unsigned char>(lead == 0xF0 ? 0x90 : 0x80),
                                            static_cast<unsigned char>(lead == 0xF4 ? 0x8F : 0xBF)};
  return {};
}

// How many bytes from the start of `text` continue the sequence its lead byte starts (the lead included).
size_t valid_prefix(std::string_view text, const LeadByte& lead) {
  size_t length = 1;
  while (length < lead.length && length < text.size()) {
    const auto next = static_cast<unsigned char>(text[length]);
    const unsigned char low = length == 1 ? lead.low : 0x80, high = length == 1 ? lead.high : 0xBF;
    if (next < low || next > high) break;
    ++length;
  }
  return length;
}

}  // namespace

size_t utf8_char_length(std::string_view text) {
  if (text.empty()) return 0;
  const LeadByte lead = lead_byte(static_cast<unsigned char>(text[0]));
  if (lead.length == 0) return 0;
  return valid_prefix(text, lead) == lead.length ? lead.length : 0;
}

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t length = utf8_char_length(text.substr(pos));
    if (length == 0) return pos;
    pos += length;
  }
  return std::nullopt;
}

namespace {

// Length of the maximal subpart of an ill-formed sequence at the start of `text`: the longest
// prefix that starts a well-formed sequence (at least 1 byte).
size_t ill_formed_length(std::string_view text) {
  const LeadByte lead = lead_byte(static_cast<unsigned char>(text[0]));
  return lead.length == 0 ? 1 : valid_prefix(text, lead);
}

}  // namespace

std::string utf8_lossy(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const std::string_view rest = text.substr(pos);
    const size_t length = utf8_char_length(rest);
    if (length > 0) {
      out.append(rest.substr(0, length));
      pos += length;
    } else {
      out.append("\xEF\xBF\xBD");
      pos += ill_formed_length(rest);
    }
  }
  return out;
}

char32_t decode_utf8_char(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(text[i])); };
  switch (utf8_char_length(text)) {
    case 1: return byte(0);
    case 2: return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    case 3: return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
    case 4:
      return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
    default: return 0xFFFD;
  }
}

void append_utf8(std::string& out, char32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

bool is_unicode_whitespace(char32_t c) {
  // The White_Space property's 25 characters; stable since Unicode 6.3.
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

bool is_word_char(char32_t c) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return c == 0x200C || c == 0x200D;  // Join_Control
  }
}

std::string normalize_unicode(std::string_view text, NormalizationForm form) {
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalizationForm::kNfc: options |= UTF8PROC_COMPOSE; break;
    case NormalizationForm::kNfd: options |= UTF8PROC_DECOMPOSE; break;
    case NormalizationForm::kNfkc: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case NormalizationForm::kNfkd: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  utf8proc_uint8_t* result = nullptr;
  const utf8proc_ssize_t length =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &result, static_cast<utf8proc_option_t>(options));
  if (length < 0) fail(ET_ERR_INVALID_ARGUMENT, std::string("Unicode normalization failed: ") + utf8proc_errmsg(length));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(result, &std::free);
  return std::string(reinterpret_cast<const char*>(result), static_cast<size_t>(length));
}

}  // namespace etrt::llm::detail
