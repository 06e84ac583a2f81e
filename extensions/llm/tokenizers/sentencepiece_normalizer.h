// SentencePiece's normalizer: the precompiled character map (a Darts double-array trie of rules and
// their replacement strings), user-defined symbols kept as they are, the dummy prefix, extra
// whitespace removal and the escape of spaces as U+2581.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sentencepiece_model.h"

namespace etrt::llm::detail {

// Longest-match lookup of user-defined symbols.
class PrefixMatcher {
 public:
  void add(std::string_view symbol);
  // Length of the longest symbol `text` starts with, or 0.
  size_t longest_match(std::string_view text) const;

 private:
  std::vector<std::string> symbols_;  // sorted by length, longest first
};

class SentencePieceNormalizer {
 public:
  // Throws ET_ERR_INVALID_FILE when the character map is malformed.
  SentencePieceNormalizer(const SentencePieceModel& model, const PrefixMatcher* user_symbols, std::string_view name);

  std::string normalize(std::string_view input) const;

 private:
  // The replacement of the longest rule at the start of `input` and how many bytes it consumes.
  std::pair<std::string_view, size_t> normalize_prefix(std::string_view input) const;
  // Darts-clone's commonPrefixSearch: the value and length of the longest key `input` starts with.
  bool longest_rule(std::string_view input, uint32_t& value, size_t& length) const;

  const PrefixMatcher* user_symbols_;
  std::vector<uint32_t> trie_;
  std::string replacements_;
  bool add_dummy_prefix_, remove_extra_whitespaces_, escape_whitespaces_;
};

}  // namespace etrt::llm::detail
