// The parts of a Hugging Face tokenizer.json the tokenizers implement, read by hf_json.cpp and run by
// hf_tokenizer.cpp. Supported (what GPT-2, Llama 3 and Qwen files use):
//   normalizer     null, NFC, NFD, NFKC, NFKD, Sequence of those
//   pre_tokenizer  null, ByteLevel, Split (Regex or String pattern, every behavior, invert), Sequence
//   model          BPE (vocab, merges in either form, unk_token, fuse_unk, byte_fallback,
//                  ignore_merges; no dropout, no subword prefix or suffix)
//   decoder        null, ByteLevel
//   added_tokens   special or not, normalized or not, single_word, lstrip, rstrip
// post_processor, truncation and padding do not change encode(text, bos, eos) and are ignored.
// Anything else is refused with ET_ERR_NOT_SUPPORTED naming the field and its type.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bpe_merge.h"
#include "regex.h"
#include "string_map.h"
#include "unicode.h"

namespace etrt::llm::detail {

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct HfPreTokenizerStep {
  enum class Kind { kSplit, kByteLevel } kind = Kind::kSplit;
  // kSplit; kByteLevel with use_regex splits with GPT-2's pattern, Isolated.
  std::shared_ptr<Regex> regex;
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  bool add_prefix_space = false;  // kByteLevel
};

struct HfAddedToken {
  uint64_t id = 0;
  std::string content;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = false;
};

struct HfBpeModel {
  StringMap<uint64_t> vocab;
  std::unordered_map<uint64_t, BpeMerge> merges;  // rank = position in the merges list  // key: left id << 32 | right id
  std::optional<uint64_t> unk_id;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
};

struct HfComponents {
  std::vector<NormalizationForm> normalizer;  // applied in order
  std::vector<HfPreTokenizerStep> pre_tokenizer;
  HfBpeModel model;
  bool byte_level_decoder = false;  // false: the null decoder (tokens joined by spaces)
  std::vector<HfAddedToken> added_tokens;
  std::vector<std::string> id_to_token;  // model vocab and added tokens (added win), "" for gaps
  std::vector<bool> is_added;
  std::optional<uint64_t> bos_id, eos_id;
};

// Throws ET_ERR_INVALID_FILE for malformed JSON or fields, ET_ERR_NOT_SUPPORTED for unsupported parts.
HfComponents parse_hf_tokenizer_json(std::string_view content, std::string_view name, std::string_view config_json);

}  // namespace etrt::llm::detail
