// The tokenizer of each format, built from a file's content (loader.cpp picks the format).
#pragma once

#include <memory>
#include <string_view>

#include "etrt/llm/tokenizer.h"

namespace etrt::llm::detail {

std::unique_ptr<Tokenizer> make_tiktoken_tokenizer(std::string_view content, std::string_view name,
                                                   const TokenizerOptions& options);
std::unique_ptr<Tokenizer> make_hf_tokenizer(std::string_view content, std::string_view name,
                                             std::string_view config_json);
std::unique_ptr<Tokenizer> make_sentencepiece_tokenizer(std::string_view content, std::string_view name);
std::unique_ptr<Tokenizer> make_llama2c_tokenizer(std::string_view content, std::string_view name);

// Helpers the formats share.
// Throws ET_ERR_INVALID_ARGUMENT for a negative count of BOS or EOS ids.
void check_bos_eos_counts(int bos, int eos);
// Throws ET_ERR_INVALID_ARGUMENT when `text` is not UTF-8 (formats whose reference takes Unicode text).
void check_utf8_text(std::string_view text, std::string_view format);
// Throws ET_ERR_INVALID_ARGUMENT for an id at or past `vocab_size`.
void check_token_id(uint64_t id, uint64_t vocab_size, std::string_view format);

}  // namespace etrt::llm::detail
