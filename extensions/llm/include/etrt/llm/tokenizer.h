// Tokenizers of the LLM runner: text to token ids and back, for the tokenizer files ExecuTorch's
// runner reads (Hugging Face tokenizer.json, tiktoken, SentencePiece .model, llama2.c tokenizer.bin).
//
// Errors are etrt::Error exceptions: a status code of etrt's C API and a message naming the file,
// the format and the problem. ET_ERR_INVALID_FILE: truncated or malformed file; ET_ERR_NOT_SUPPORTED:
// a valid file using a feature this library does not implement (named in the message);
// ET_ERR_INVALID_ARGUMENT: a token id outside the vocabulary, a negative BOS/EOS count, text that is
// not UTF-8 where the format needs it; ET_ERR_NOT_FOUND: no such file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "etrt/etrt.hpp"

namespace etrt::llm {

enum class TokenizerFormat {
  kHuggingFaceJson,  // tokenizer.json of Hugging Face `tokenizers` (byte-level BPE)
  kTiktoken,         // one "<base64 token> <rank>" line per token (Llama 3)
  kSentencePiece,    // SentencePiece ModelProto (.model; BPE or unigram)
  kLlama2c,          // llama2.c tokenizer.bin, ExecuTorch's layout or the original one
};

const char* tokenizer_format_name(TokenizerFormat format);

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // The ids of `text`, after `bos` BOS ids and before `eos` EOS ids.
  virtual std::vector<uint64_t> encode(std::string_view text, int bos = 0, int eos = 0) const = 0;

  // The bytes token `id` adds to the text when it follows `prev_id`, as the runner streams them. A
  // piece may be part of a UTF-8 sequence (byte-level and byte-fallback tokens split characters).
  virtual std::string decode(uint64_t prev_id, uint64_t id) const = 0;

  // The text of a whole sequence, as the reference library decodes it (special tokens included;
  // invalid UTF-8 becomes U+FFFD where the reference library does that).
  virtual std::string decode(std::span<const uint64_t> ids) const = 0;

  // Number of ids the tokenizer knows: the largest id + 1 (special tokens included).
  virtual uint64_t vocab_size() const = 0;

  // The id of a special (control, added) token written as `text`, e.g. "<|eot_id|>".
  virtual std::optional<uint64_t> special_token_id(std::string_view text) const = 0;

  virtual TokenizerFormat format() const = 0;

  uint64_t bos_id() const { return bos_id_; }
  uint64_t eos_id() const { return eos_id_; }

 protected:
  uint64_t bos_id_ = 0, eos_id_ = 0;
};

// Options for formats whose files do not carry everything: tiktoken files hold only the ranks.
struct TokenizerOptions {
  // tiktoken: the pre-tokenizer pattern and the special tokens, numbered from the number of ranks
  // on. Empty: Llama 3's (its pattern, 256 special tokens, BOS <|begin_of_text|>, EOS <|eot_id|>).
  std::string tiktoken_pattern;
  std::vector<std::string> tiktoken_special_tokens;
  size_t tiktoken_bos_index = 0, tiktoken_eos_index = 1;
};

// Which format `content` is, from the content alone (never the file name); throws
// ET_ERR_INVALID_FILE when it is none of them.
TokenizerFormat detect_tokenizer_format(std::string_view content);

// Reads the file at `path`, detects its format and builds the tokenizer. A tokenizer.json's BOS and
// EOS come from a tokenizer_config.json beside it when there is one.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, const TokenizerOptions& options = {});

// The same from bytes already in memory; `name` is used in error messages. `config_json` is the
// content of a tokenizer_config.json for a tokenizer.json (empty: none).
std::unique_ptr<Tokenizer> parse_tokenizer(std::string_view content, std::string_view name,
                                           const TokenizerOptions& options = {},
                                           std::string_view config_json = {});

}  // namespace etrt::llm
