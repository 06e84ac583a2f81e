#include "sentencepiece_normalizer.h"

#include <algorithm>
#include <cstring>

#include "error.h"
#include "unicode.h"

namespace etrt::llm::detail {

namespace {

constexpr std::string_view kSpaceSymbol = "\xe2\x96\x81";
constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

}  // namespace

void PrefixMatcher::add(std::string_view symbol) {
  if (symbol.empty()) return;
  symbols_.emplace_back(symbol);
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

size_t PrefixMatcher::longest_match(std::string_view text) const {
  for (const std::string& symbol : symbols_) {
    if (text.starts_with(symbol)) return symbol.size();
  }
  return 0;
}

SentencePieceNormalizer::SentencePieceNormalizer(const SentencePieceModel& model, const PrefixMatcher* user_symbols,
                                                 std::string_view name)
    : user_symbols_(user_symbols),
      add_dummy_prefix_(model.add_dummy_prefix),
      remove_extra_whitespaces_(model.remove_extra_whitespaces),
      escape_whitespaces_(model.escape_whitespaces) {
  const std::string_view blob = model.precompiled_charsmap;
  if (blob.empty()) return;
  // <trie size: uint32 little endian><trie units><NUL-terminated replacement strings>
  uint32_t trie_size = 0;
  if (blob.size() <= 4) fail_file(name, "SentencePiece model", "the precompiled character map is truncated");
  std::memcpy(&trie_size, blob.data(), 4);
  if (trie_size == 0 || trie_size % 4 != 0 || trie_size > blob.size() - 4) {
    fail_file(name, "SentencePiece model",
              "the precompiled character map's trie size " + std::to_string(trie_size) + " does not fit its " +
                  std::to_string(blob.size()) + " bytes");
  }
  trie_.resize(trie_size / 4);
  std::memcpy(trie_.data(), blob.data() + 4, trie_size);
  replacements_ = std::string(blob.substr(4 + trie_size));
}

bool SentencePieceNormalizer::longest_rule(std::string_view input, uint32_t& value, size_t& length) const {
  // Units of darts-clone: bit 8 has_leaf, bits 0-7 the label (bit 31 set for a value unit),
  // offset = (unit >> 10) << ((unit & (1 << 9)) >> 6).
  const auto offset = [](uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); };
  const auto has_leaf = [](uint32_t unit) { return ((unit >> 8) & 1) == 1; };
  const auto label = [](uint32_t unit) { return unit & ((1u << 31) | 0xFF); };
  bool found = false;
  size_t node = 0;
  if (trie_.empty()) return false;
  node ^= offset(trie_[0]);
  for (size_t i = 0; i < input.size(); ++i) {
    const auto byte = static_cast<unsigned char>(input[i]);
    node ^= byte;
    if (node >= trie_.size()) break;
    const uint32_t unit = trie_[node];
    if (label(unit) != byte) break;
    node ^= offset(unit);
    if (node >= trie_.size()) break;
    if (has_leaf(unit)) {
      value = trie_[node] & ((1u << 31) - 1);
      length = i + 1;
      found = true;
    }
  }
  return found;
}

std::pair<std::string_view, size_t> SentencePieceNormalizer::normalize_prefix(std::string_view input) const {
  if (user_symbols_ != nullptr) {
    if (const size_t length = user_symbols_->longest_match(input)) return {input.substr(0, length), length};
  }
  uint32_t value = 0;
  size_t length = 0;
  if (longest_rule(input, value, length) && value < replacements_.size()) {
    const std::string_view rest = std::string_view(replacements_).substr(value);
    return {rest.substr(0, std::min(rest.find('\0'), rest.size())), length};
  }
  const size_t char_length = utf8_char_length(input);
  if (char_length == 0) return {kReplacementChar, 1};  // a malformed byte becomes U+FFFD, one byte consumed
  return {input.substr(0, char_length), char_length};
}

std::string SentencePieceNormalizer::normalize(std::string_view input) const {
  if (remove_extra_whitespaces_) {
    while (!input.empty()) {
      const auto [replacement, consumed] = normalize_prefix(input);
      if (replacement != " ") break;
      input.remove_prefix(consumed);
    }
  }
  std::string out;
  if (input.empty()) return out;
  const auto add_space = [&] { out += escape_whitespaces_ ? kSpaceSymbol : std::string_view(" "); };
  if (add_dummy_prefix_) add_space();
  bool previous_space = remove_extra_whitespaces_;
  while (!input.empty()) {
    auto [replacement, consumed] = normalize_prefix(input);
    while (previous_space && replacement.starts_with(' ')) replacement.remove_prefix(1);
    if (!replacement.empty()) {
      for (char c : replacement) {
        if (escape_whitespaces_ && c == ' ') {
          out += kSpaceSymbol;
        } else {
          out += c;
        }
      }
      previous_space = replacement.ends_with(' ');
    }
    input.remove_prefix(consumed);
    if (!remove_extra_whitespaces_) previous_space = false;
  }
  if (remove_extra_whitespaces_) {
    const std::string_view space = escape_whitespaces_ ? kSpaceSymbol : std::string_view(" ");
    while (std::string_view(out).ends_with(space)) out.resize(out.size() - space.size());
  }
  return out;
}

}  // namespace etrt::llm::detail
