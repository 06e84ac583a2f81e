// Which format a tokenizer file is, from its content, and building the tokenizer for it.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "error.h"
#include "formats.h"
#include "llama2c_format.h"
#include "sentencepiece_model.h"
#include "tiktoken_format.h"
#include "unicode.h"

namespace etrt::llm {

const char* tokenizer_format_name(TokenizerFormat format) {
  switch (format) {
    case TokenizerFormat::kHuggingFaceJson: return "tokenizer.json";
    case TokenizerFormat::kTiktoken: return "tiktoken";
    case TokenizerFormat::kSentencePiece: return "SentencePiece model";
    case TokenizerFormat::kLlama2c: return "llama2.c tokenizer";
  }
  return "unknown";
}

TokenizerFormat detect_tokenizer_format(std::string_view content) {
  const size_t first = content.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && content[first] == '{') return TokenizerFormat::kHuggingFaceJson;
  if (detail::looks_like_tiktoken(content)) return TokenizerFormat::kTiktoken;
  if (detail::looks_like_sentencepiece(content)) return TokenizerFormat::kSentencePiece;
  if (detail::looks_like_llama2c(content)) return TokenizerFormat::kLlama2c;
  // Nothing reads completely: name the format the file starts like, so its parser names the damage.
  if (!content.empty() && content[0] == '\x0a') return TokenizerFormat::kSentencePiece;
  // llama2.c files start with a vocabulary size and BOS and EOS ids inside it (ExecuTorch's
  // layout) or with a token length (the original layout).
  if (content.size() >= 12) {
    const auto int32_at = [&](size_t at) {
      uint32_t value = 0;
      for (size_t i = 0; i < 4; ++i) value |= static_cast<uint32_t>(static_cast<unsigned char>(content[at + i])) << (8 * i);
      return static_cast<int32_t>(value);
    };
    const int32_t first = int32_at(0), bos = int32_at(4), eos = int32_at(8);
    const bool executorch_header = first > 0 && first < (1 << 26) && bos >= 0 && bos < first && eos >= 0 && eos < first;
    const bool original_header = first > 0 && first < (1 << 16);
    if (executorch_header || original_header) return TokenizerFormat::kLlama2c;
  }
  detail::fail(ET_ERR_INVALID_FILE, "not a tokenizer file: " + std::to_string(content.size()) +
                                        " bytes that are neither a tokenizer.json, a tiktoken file, a SentencePiece "
                                        "model nor a llama2.c tokenizer.bin");
}

std::unique_ptr<Tokenizer> parse_tokenizer(std::string_view content, std::string_view name,
                                           const TokenizerOptions& options, std::string_view config_json) {
  switch (detect_tokenizer_format(content)) {
    case TokenizerFormat::kHuggingFaceJson: return detail::make_hf_tokenizer(content, name, config_json);
    case TokenizerFormat::kTiktoken: return detail::make_tiktoken_tokenizer(content, name, options);
    case TokenizerFormat::kSentencePiece: return detail::make_sentencepiece_tokenizer(content, name);
    case TokenizerFormat::kLlama2c: return detail::make_llama2c_tokenizer(content, name);
  }
  detail::fail(ET_ERR_INTERNAL, "unknown tokenizer format");
}

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    detail::fail(std::filesystem::exists(path, error) ? ET_ERR_INVALID_ARGUMENT : ET_ERR_NOT_FOUND,
                 path.string() + ": " + (std::filesystem::exists(path, error) ? "not a regular file" : "no such file"));
  }
  std::ifstream file(path, std::ios::binary);
  std::ostringstream content;
  content << file.rdbuf();
  if (!file && !file.eof()) detail::fail(ET_ERR_INVALID_ARGUMENT, path.string() + ": cannot be read");
  return std::move(content).str();
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, const TokenizerOptions& options) {
  std::filesystem::path file = path;
  std::error_code error;
  // A directory stands for the tokenizer.json inside it, as Hugging Face lays models out.
  if (std::filesystem::is_directory(file, error)) file /= "tokenizer.json";
  const std::string content = read_file(file);
  std::string config;
  if (detect_tokenizer_format(content) == TokenizerFormat::kHuggingFaceJson) {
    const std::filesystem::path config_path = file.parent_path() / "tokenizer_config.json";
    if (std::filesystem::is_regular_file(config_path, error)) config = read_file(config_path);
  }
  return parse_tokenizer(content, file.string(), options, config);
}

}  // namespace etrt::llm

namespace etrt::llm::detail {

void check_bos_eos_counts(int bos, int eos) {
  if (bos < 0 || eos < 0) {
    fail(ET_ERR_INVALID_ARGUMENT, "tokenizer: the BOS and EOS counts must not be negative (got " + std::to_string(bos) +
                                      " and " + std::to_string(eos) + ")");
  }
}

void check_utf8_text(std::string_view text, std::string_view format) {
  if (const std::optional<size_t> at = first_invalid_utf8(text)) {
    fail(ET_ERR_INVALID_ARGUMENT, std::string(format) + ": the text is not valid UTF-8 at byte " + std::to_string(*at));
  }
}

void check_token_id(uint64_t id, uint64_t vocab_size, std::string_view format) {
  if (id >= vocab_size) {
    fail(ET_ERR_INVALID_ARGUMENT, std::string(format) + ": token id " + std::to_string(id) +
                                      " is outside the vocabulary of " + std::to_string(vocab_size));
  }
}

}  // namespace etrt::llm::detail
