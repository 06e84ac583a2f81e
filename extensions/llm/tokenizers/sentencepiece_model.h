// Reading a SentencePiece model file: the ModelProto message of sentencepiece_model.proto, read with
// a small protobuf wire-format reader (only the fields encoding and decoding need; others skipped).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etrt::llm::detail {

enum class PieceType : int { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

struct SentencePiece {
  std::string piece;
  float score = 0;
  PieceType type = PieceType::kNormal;
};

struct SentencePieceModel {
  std::vector<SentencePiece> pieces;
  enum class Type { kUnigram = 1, kBpe = 2, kWord = 3, kChar = 4 } type = Type::kUnigram;
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  std::string unk_surface = " \xE2\x81\x87 ";
  std::string bos_piece = "<s>", eos_piece = "</s>";
  // NormalizerSpec
  std::string precompiled_charsmap;
  bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;
  std::string denormalizer_charsmap;
};

// Throws ET_ERR_INVALID_FILE naming the byte offset for a truncated or malformed message.
SentencePieceModel parse_sentencepiece_model(std::string_view content, std::string_view name);

// Whether `content` is a well-formed protobuf message whose field 1 holds pieces (format detection).
bool looks_like_sentencepiece(std::string_view content);

}  // namespace etrt::llm::detail
