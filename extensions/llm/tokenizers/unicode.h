// UTF-8 and Unicode helpers shared by the tokenizers. Character properties and normalization forms
// come from utf8proc (linked statically, its symbols hidden).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace etrt::llm::detail {

// Length of the well-formed UTF-8 sequence at the start of `text` (1-4), or 0 when the bytes there
// are not one (an empty `text` gives 0 too).
size_t utf8_char_length(std::string_view text);

// Byte offset of the first ill-formed UTF-8 sequence, or nullopt when `text` is valid UTF-8.
std::optional<size_t> first_invalid_utf8(std::string_view text);

// `text` with every maximal ill-formed subsequence replaced by U+FFFD, as Rust's
// String::from_utf8_lossy and Python's bytes.decode("utf-8", "replace") do.
std::string utf8_lossy(std::string_view text);

// Decodes the well-formed character at the start of `text` (utf8_char_length(text) > 0).
char32_t decode_utf8_char(std::string_view text);
void append_utf8(std::string& out, char32_t code_point);

// Unicode's White_Space property (Rust's char::is_whitespace).
bool is_unicode_whitespace(char32_t code_point);
// A word character as regular expressions' \w: letters, marks, decimal digits, connector punctuation.
bool is_word_char(char32_t code_point);

enum class NormalizationForm { kNfc, kNfd, kNfkc, kNfkd };
// `text` (valid UTF-8) in the given normalization form.
std::string normalize_unicode(std::string_view text, NormalizationForm form);

}  // namespace etrt::llm::detail
