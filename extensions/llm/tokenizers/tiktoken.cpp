// tiktoken files (Llama 3's tokenizer.model): one "<base64 of the token's bytes> <rank>" line per
// token. The file holds neither the pattern nor the special tokens: they come from
// TokenizerOptions, Llama 3's by default, as in ExecuTorch's runner. Special tokens are numbered
// from the number of ranks on.
#include <charconv>
#include <unordered_map>

#include "bpe_merge.h"
#include "error.h"
#include "formats.h"
#include "regex.h"
#include "special_tokens.h"
#include "tiktoken_format.h"
#include "unicode.h"

namespace etrt::llm::detail {

namespace {

constexpr const char* kFormat = "tiktoken";

// Llama 3's pre-tokenizer pattern (as written in Meta's Llama 3 tokenizer and tiktoken's cl100k).
constexpr const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::vector<std::string> llama3_special_tokens() {
  std::vector<std::string> tokens = {
      "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
      "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>",
      "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"};
  for (int i = 2; tokens.size() < 256; ++i) tokens.push_back("<|reserved_special_token_" + std::to_string(i) + "|>");
  return tokens;
}

class TiktokenTokenizer final : public Tokenizer {
 public:
  TiktokenTokenizer(TiktokenRanks ranks, std::string_view name, const TokenizerOptions& options)
      : ranks_(std::move(ranks)),
        regex_(options.tiktoken_pattern.empty() ? kLlama3Pattern : options.tiktoken_pattern,
               std::string(name) + ": tiktoken pattern") {
    std::vector<std::string> specials =
        options.tiktoken_special_tokens.empty() ? llama3_special_tokens() : options.tiktoken_special_tokens;
    if (options.tiktoken_bos_index >= specials.size() || options.tiktoken_eos_index >= specials.size()) {
      fail(ET_ERR_INVALID_ARGUMENT, std::string(name) + ": tiktoken: BOS index " +
                                        std::to_string(options.tiktoken_bos_index) + " or EOS index " +
                                        std::to_string(options.tiktoken_eos_index) + " is not one of the " +
                                        std::to_string(specials.size()) + " special tokens");
    }
    const uint64_t first_special = ranks_.tokens.size();
    for (size_t i = 0; i < specials.size(); ++i) {
      special_texts_.push_back(specials[i]);
      specials_.add(specials[i], first_special + i);
    }
    bos_id_ = first_special + options.tiktoken_bos_index;
    eos_id_ = first_special + options.tiktoken_eos_index;
  }

  std::vector<uint64_t> encode(std::string_view text, int bos, int eos) const override {
    check_bos_eos_counts(bos, eos);
    check_utf8_text(text, kFormat);
    std::vector<uint64_t> ids(static_cast<size_t>(bos), bos_id_);
    size_t pos = 0;
    for (const SpecialMatch& special : specials_.find_all(text)) {
      encode_ordinary(text.substr(pos, special.start - pos), ids);
      ids.push_back(special.id);
      pos = special.end;
    }
    encode_ordinary(text.substr(pos), ids);
    ids.insert(ids.end(), static_cast<size_t>(eos), eos_id_);
    return ids;
  }

  std::string decode(uint64_t prev_id, uint64_t id) const override {
    check_token_id(id, vocab_size(), kFormat);
    return id < ranks_.tokens.size() ? ranks_.tokens[id] : special_texts_[id - ranks_.tokens.size()];
  }

  std::string decode(std::span<const uint64_t> ids) const override {
    std::string bytes;
    for (uint64_t id : ids) bytes += decode(0, id);
    return utf8_lossy(bytes);
  }

  uint64_t vocab_size() const override { return ranks_.tokens.size() + special_texts_.size(); }
  std::optional<uint64_t> special_token_id(std::string_view text) const override { return specials_.find_id(text); }
  TokenizerFormat format() const override { return TokenizerFormat::kTiktoken; }

 private:
  void encode_ordinary(std::string_view text, std::vector<uint64_t>& ids) const {
    for (const Match& match : regex_.find_all(text)) {
      const std::string_view piece = text.substr(match.start, match.end - match.start);
      if (const auto it = ranks_.ids.find(piece); it != ranks_.ids.end()) {
        ids.push_back(it->second);
        continue;
      }
      std::vector<BpePart> parts(piece.size());
      for (size_t i = 0; i < piece.size(); ++i) parts[i] = {i, i + 1, ranks_.byte_ids[static_cast<unsigned char>(piece[i])]};
      const auto lookup = [&](const BpePart& left, const BpePart& right) -> std::optional<BpeMerge> {
        const auto it = ranks_.ids.find(piece.substr(left.start, right.end - left.start));
        if (it == ranks_.ids.end()) return std::nullopt;
        return BpeMerge{it->second, it->second};
      };
      for (const BpePart& part : bpe_merge(std::move(parts), lookup)) ids.push_back(part.id);
    }
  }

  TiktokenRanks ranks_;
  Regex regex_;
  SpecialTokenMatcher specials_;
  std::vector<std::string> special_texts_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_tiktoken_tokenizer(std::string_view content, std::string_view name,
                                                   const TokenizerOptions& options) {
  return std::make_unique<TiktokenTokenizer>(parse_tiktoken_ranks(content, name), name, options);
}

}  // namespace etrt::llm::detail
