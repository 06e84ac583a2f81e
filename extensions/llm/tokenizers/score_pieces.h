// What the SentencePiece and llama2.c tokenizers share: their merge order (highest piece score
// first) and their byte pieces, written "<0x0A>".
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string_view>

namespace etrt::llm::detail {

// A bpe_merge rank that orders scores from the highest down (-0 and +0 tie, as floats compare).
inline uint64_t rank_of_score(float score) {
  if (score == 0.0f) score = 0.0f;
  const uint32_t bits = std::bit_cast<uint32_t>(score);
  const uint32_t ascending = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return static_cast<uint32_t>(~ascending);
}

// The byte of a piece "<0xHH>" (sentencepiece writes upper case; llama2.c's reader also takes lower).
inline std::optional<unsigned char> byte_piece_value(std::string_view piece, bool lower_case_too) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return std::nullopt;
  unsigned value = 0;
  for (char c : piece.substr(3, 2)) {
    value <<= 4;
    if (c >= '0' && c <= '9') {
      value |= static_cast<unsigned>(c - '0');
    } else if (c >= 'A' && c <= 'F') {
      value |= static_cast<unsigned>(c - 'A' + 10);
    } else if (lower_case_too && c >= 'a' && c <= 'f') {
      value |= static_cast<unsigned>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
  }
  return static_cast<unsigned char>(value);
}

}  // namespace etrt::llm::detail
