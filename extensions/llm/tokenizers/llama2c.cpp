// llama2.c's tokenizer.bin, in ExecuTorch's layout (int32 vocab_size, bos_id, eos_id,
// max_token_length, then per token: float32 score, int32 length, bytes) or the original llama2.c
// layout (int32 max_token_length, then the tokens to the end of the file; BOS 1, EOS 2). Encoding is
// llama2.c's: a dummy-prefix space, one token per character (its bytes + 3 when the character is not
// in the vocabulary), then the pair whose merged text has the highest score merges, leftmost first.
#include "bpe_merge.h"
#include "error.h"
#include "formats.h"
#include "score_pieces.h"
#include "llama2c_format.h"
#include "string_map.h"

namespace etrt::llm::detail {

namespace {

constexpr const char* kFormat = "llama2.c tokenizer";

class Llama2cTokenizer final : public Tokenizer {
 public:
  explicit Llama2cTokenizer(Llama2cVocab vocab) : vocab_(std::move(vocab)) {
    bos_id_ = vocab_.bos_id;
    eos_id_ = vocab_.eos_id;
    for (size_t i = 0; i < vocab_.tokens.size(); ++i) ids_.emplace(vocab_.tokens[i], i);  // the first of duplicates
  }

  std::vector<uint64_t> encode(std::string_view text, int bos, int eos) const override {
    check_bos_eos_counts(bos, eos);
    std::vector<uint64_t> ids(static_cast<size_t>(bos), bos_id_);
    std::vector<BpePart> parts;
    if (!text.empty()) {
      const auto space = ids_.find(std::string_view(" "));
      if (space == ids_.end()) fail(ET_ERR_INVALID_ARGUMENT, "llama2.c tokenizer: the vocabulary has no ' ' token for the dummy prefix");
      parts.push_back({0, 0, space->second});
    }
    // Characters as llama2.c groups bytes: a non-continuation byte and up to 3 continuation bytes.
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = pos + 1;
      while (end < text.size() && end - pos < 4 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
      const std::string_view character = text.substr(pos, end - pos);
      if (const auto it = ids_.find(character); it != ids_.end()) {
        parts.push_back({0, 0, it->second});
      } else {
        for (char byte : character) parts.push_back({0, 0, static_cast<uint64_t>(static_cast<unsigned char>(byte)) + 3});
      }
      pos = end;
    }
    for (const BpePart& part : parts) {
      if (part.id >= vocab_.tokens.size()) {
        fail(ET_ERR_INVALID_ARGUMENT, "llama2.c tokenizer: byte fallback id " + std::to_string(part.id) +
                                          " is outside the vocabulary of " + std::to_string(vocab_.tokens.size()));
      }
    }
    const auto lookup = [&](const BpePart& left, const BpePart& right) -> std::optional<BpeMerge> {
      const auto it = ids_.find(vocab_.tokens[left.id] + vocab_.tokens[right.id]);
      // llama2.c starts its search for the best score at -1e10: lower scores never merge.
      if (it == ids_.end() || !(vocab_.scores[it->second] > -1e10f)) return std::nullopt;
      return BpeMerge{rank_of_score(vocab_.scores[it->second]), it->second};
    };
    for (const BpePart& part : bpe_merge(std::move(parts), lookup)) ids.push_back(part.id);
    ids.insert(ids.end(), static_cast<size_t>(eos), eos_id_);
    return ids;
  }

  std::string decode(uint64_t prev_id, uint64_t id) const override {
    check_token_id(id, vocab_size(), kFormat);
    std::string_view piece = vocab_.tokens[id];
    // After BOS the decoder drops the dummy prefix's space, as sentencepiece's does.
    if (prev_id == bos_id_ && piece.starts_with(' ')) piece.remove_prefix(1);
    if (const std::optional<unsigned char> byte = byte_piece_value(piece, true)) return std::string(1, static_cast<char>(*byte));
    return std::string(piece);
  }

  // The pieces one after another, the first as if it followed BOS.
  std::string decode(std::span<const uint64_t> ids) const override {
    std::string text;
    uint64_t prev = bos_id_;
    for (uint64_t id : ids) {
      text += decode(prev, id);
      prev = id;
    }
    return text;
  }

  uint64_t vocab_size() const override { return vocab_.tokens.size(); }
  std::optional<uint64_t> special_token_id(std::string_view text) const override {
    for (uint64_t id : {bos_id_, eos_id_}) {
      if (id < vocab_.tokens.size() && vocab_.tokens[id] == text) return id;
    }
    return std::nullopt;
  }
  TokenizerFormat format() const override { return TokenizerFormat::kLlama2c; }

 private:
  Llama2cVocab vocab_;
  StringMap<uint64_t> ids_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_llama2c_tokenizer(std::string_view content, std::string_view name) {
  return std::make_unique<Llama2cTokenizer>(parse_llama2c_vocab(content, name));
}

}  // namespace etrt::llm::detail
