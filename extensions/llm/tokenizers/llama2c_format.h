// Reading llama2.c tokenizer.bin files (both layouts; see llama2c.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace etrt::llm::detail {

struct Llama2cVocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  uint64_t bos_id = 1, eos_id = 2;
  uint32_t max_token_length = 0;
};

// Tries ExecuTorch's layout, then the original one; throws ET_ERR_INVALID_FILE with the reason the
// file fits neither (for ExecuTorch's layout when its header is plausible, else the original's).
Llama2cVocab parse_llama2c_vocab(std::string_view content, std::string_view name);

// Whether `content` reads completely as either layout (format detection).
bool looks_like_llama2c(std::string_view content);

}  // namespace etrt::llm::detail
