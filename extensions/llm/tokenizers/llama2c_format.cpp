#include "llama2c_format.h"

#include <bit>
#include <cstring>
#include <optional>

#include "error.h"

namespace etrt::llm::detail {

namespace {

constexpr const char* kFormat = "llama2.c tokenizer";

class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  size_t left() const { return bytes_.size() - pos_; }
  size_t pos() const { return pos_; }
  int32_t int32() {
    uint32_t value = 0;
    std::memcpy(&value, bytes_.data() + pos_, 4);
    if constexpr (std::endian::native == std::endian::big) value = __builtin_bswap32(value);
    pos_ += 4;
    return static_cast<int32_t>(value);
  }
  float float32() { return std::bit_cast<float>(int32()); }
  std::string_view take(size_t count) {
    const std::string_view out = bytes_.substr(pos_, count);
    pos_ += count;
    return out;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// Reads tokens until `count` are read (count given) or the file ends (count nullopt). Returns the
// reason it could not, or "" on success.
std::string read_tokens(Cursor& cursor, std::optional<uint64_t> count, uint32_t max_length, Llama2cVocab& vocab) {
  for (uint64_t index = 0; count ? index < *count : cursor.left() > 0; ++index) {
    const std::string which = "token " + std::to_string(index) + (count ? " of " + std::to_string(*count) : "");
    if (cursor.left() < 8) {
      return "the file ends inside " + which + " (at byte " + std::to_string(cursor.pos()) + ": truncated)";
    }
    const float score = cursor.float32();
    const int32_t length = cursor.int32();
    if (length < 0 || static_cast<uint32_t>(length) > max_length) {
      return which + " has length " + std::to_string(length) + ", outside 0..max_token_length (" +
             std::to_string(max_length) + ")";
    }
    if (cursor.left() < static_cast<size_t>(length)) {
      return "the file ends inside " + which + "'s " + std::to_string(length) + " bytes (truncated)";
    }
    vocab.tokens.emplace_back(cursor.take(static_cast<size_t>(length)));
    vocab.scores.push_back(score);
  }
  if (cursor.left() > 0) return std::to_string(cursor.left()) + " bytes follow the last token";
  return "";
}

// ExecuTorch's layout; returns the reason it does not fit, or "".
std::string try_executorch_layout(std::string_view content, Llama2cVocab& vocab) {
  if (content.size() < 16) return "the file is shorter than the 16-byte header";
  Cursor cursor(content);
  const int32_t vocab_size = cursor.int32(), bos = cursor.int32(), eos = cursor.int32(), max_length = cursor.int32();
  if (vocab_size <= 0) return "the header's vocab_size " + std::to_string(vocab_size) + " is not positive";
  if (bos < 0 || bos >= vocab_size || eos < 0 || eos >= vocab_size) {
    return "the header's BOS " + std::to_string(bos) + " or EOS " + std::to_string(eos) + " is outside the vocabulary of " +
           std::to_string(vocab_size);
  }
  if (max_length <= 0) return "the header's max_token_length " + std::to_string(max_length) + " is not positive";
  // At least 8 bytes a token: a header claiming more tokens than that is false before any allocation.
  if (static_cast<uint64_t>(vocab_size) > cursor.left() / 8) {
    return "the header's vocab_size " + std::to_string(vocab_size) + " needs more bytes than the file's " +
           std::to_string(content.size()) + " (truncated?)";
  }
  vocab.bos_id = static_cast<uint64_t>(bos);
  vocab.eos_id = static_cast<uint64_t>(eos);
  vocab.max_token_length = static_cast<uint32_t>(max_length);
  vocab.tokens.reserve(static_cast<size_t>(vocab_size));
  vocab.scores.reserve(static_cast<size_t>(vocab_size));
  return read_tokens(cursor, static_cast<uint64_t>(vocab_size), vocab.max_token_length, vocab);
}

std::string try_original_layout(std::string_view content, Llama2cVocab& vocab) {
  if (content.size() < 4) return "the file is shorter than its 4-byte header";
  Cursor cursor(content);
  const int32_t max_length = cursor.int32();
  if (max_length <= 0) return "max_token_length " + std::to_string(max_length) + " is not positive";
  vocab.max_token_length = static_cast<uint32_t>(max_length);
  std::string reason = read_tokens(cursor, std::nullopt, vocab.max_token_length, vocab);
  if (reason.empty() && vocab.tokens.size() < 3) reason = "it holds fewer than the 3 tokens <unk>, <s>, </s>";
  vocab.bos_id = 1;
  vocab.eos_id = 2;
  return reason;
}

}  // namespace

Llama2cVocab parse_llama2c_vocab(std::string_view content, std::string_view name) {
  Llama2cVocab executorch;
  const std::string executorch_reason = try_executorch_layout(content, executorch);
  if (executorch_reason.empty()) return executorch;
  Llama2cVocab original;
  const std::string original_reason = try_original_layout(content, original);
  if (original_reason.empty()) return original;
  fail_file(name, kFormat, "neither ExecuTorch's layout (" + executorch_reason + ") nor the original llama2.c layout (" +
                               original_reason + ")");
}

bool looks_like_llama2c(std::string_view content) {
  Llama2cVocab vocab;
  return try_executorch_layout(content, vocab).empty() || (vocab = {}, try_original_layout(content, vocab).empty());
}

}  // namespace etrt::llm::detail
