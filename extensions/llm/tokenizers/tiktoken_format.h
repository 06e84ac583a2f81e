// Reading a tiktoken file: "<base64 token> <rank>" lines.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "string_map.h"

namespace etrt::llm::detail {

struct TiktokenRanks {
  std::vector<std::string> tokens;     // by rank: ranks are 0..N-1
  StringMap<uint64_t> ids;             // token bytes -> rank
  std::array<uint64_t, 256> byte_ids{};  // the rank of each single byte
};

// Throws ET_ERR_INVALID_FILE naming the line for bad base64, a bad rank, a duplicate token or rank,
// ranks that are not 0..N-1, a byte without a rank of its own, or an empty file.
TiktokenRanks parse_tiktoken_ranks(std::string_view content, std::string_view name);

// Whether the first line of `content` is a tiktoken line (used to detect the format).
bool looks_like_tiktoken(std::string_view content);

// Standard base64 with '=' padding; nullopt-like failure reported through `ok`.
std::string decode_base64(std::string_view text, bool& ok);

}  // namespace etrt::llm::detail
