// GPT-2's byte-level alphabet: every byte is written as one printable character, so byte-level BPE
// vocabularies are strings ("Ġ" is the space byte).
#pragma once

#include <string>
#include <string_view>

namespace etrt::llm::detail {

// `bytes` with each byte replaced by its character (UTF-8).
std::string byte_level_encode(std::string_view bytes);

// The bytes a token stands for: each character mapped back to its byte. A token with a character
// outside the alphabet (an added token such as "<|im_start|>" in some files) is its own UTF-8 bytes.
std::string byte_level_decode(std::string_view token);

}  // namespace etrt::llm::detail
