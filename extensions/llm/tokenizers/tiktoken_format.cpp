#include "tiktoken_format.h"

#include <charconv>

#include "error.h"

namespace etrt::llm::detail {

namespace {

constexpr const char* kFormat = "tiktoken";

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

struct Line {
  std::string_view token, rank;
  bool has_space = false;
};

Line split_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  Line out;
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) {
    out.token = line;
    return out;
  }
  out.has_space = true;
  out.token = line.substr(0, space);
  out.rank = line.substr(space + 1);
  return out;
}

bool parse_rank(std::string_view text, uint64_t& rank) {
  if (text.empty() || text.size() > 19) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return std::from_chars(text.data(), text.data() + text.size(), rank).ec == std::errc{};
}

}  // namespace

std::string decode_base64(std::string_view text, bool& ok) {
  ok = false;
  if (text.empty() || text.size() % 4 != 0) return {};
  size_t padding = 0;
  if (text.back() == '=') ++padding;
  if (text.size() >= 2 && text[text.size() - 2] == '=') ++padding;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t block = 0;
    const bool last = i + 4 == text.size();
    for (size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      int value = 0;
      if (c == '=') {
        if (!last || j < 4 - padding) return {};
      } else {
        value = base64_value(c);
        if (value < 0) return {};
      }
      block = (block << 6) | static_cast<uint32_t>(value);
    }
    out += static_cast<char>((block >> 16) & 0xFF);
    if (!last || padding < 2) out += static_cast<char>((block >> 8) & 0xFF);
    if (!last || padding < 1) out += static_cast<char>(block & 0xFF);
  }
  ok = true;
  return out;
}

bool looks_like_tiktoken(std::string_view content) {
  const size_t newline = content.find('\n');
  const Line line = split_line(content.substr(0, newline));
  uint64_t rank = 0;
  bool ok = false;
  decode_base64(line.token, ok);
  return ok && line.has_space && parse_rank(line.rank, rank);
}

TiktokenRanks parse_tiktoken_ranks(std::string_view content, std::string_view name) {
  TiktokenRanks ranks;
  std::vector<std::pair<uint64_t, std::string>> entries;
  size_t line_number = 0;
  size_t pos = 0;
  while (pos < content.size()) {
    size_t end = content.find('\n', pos);
    if (end == std::string_view::npos) end = content.size();
    const std::string_view raw = content.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (raw.empty() || raw == "\r") continue;  // blank lines are skipped, as tiktoken's loader does
    const Line line = split_line(raw);
    const std::string where = "line " + std::to_string(line_number);
    if (!line.has_space) fail_file(name, kFormat, where + " has no space between the token and its rank");
    bool ok = false;
    std::string token = decode_base64(line.token, ok);
    if (!ok) fail_file(name, kFormat, where + ": the token is not base64");
    uint64_t rank = 0;
    if (!parse_rank(line.rank, rank)) fail_file(name, kFormat, where + ": the rank is not a decimal number");
    entries.emplace_back(rank, std::move(token));
  }
  if (entries.empty()) fail_file(name, kFormat, "the file holds no token");
  const uint64_t count = entries.size();
  ranks.tokens.resize(count);
  std::vector<bool> seen(count, false);
  ranks.ids.reserve(count);
  for (auto& [rank, token] : entries) {
    if (rank >= count) {
      fail_file(name, kFormat, "rank " + std::to_string(rank) + " is not below the number of tokens (" +
                                   std::to_string(count) + "): ranks must be 0..N-1, and special tokens follow them");
    }
    if (seen[rank]) fail_file(name, kFormat, "rank " + std::to_string(rank) + " is given twice");
    seen[rank] = true;
    if (!ranks.ids.emplace(token, rank).second) {
      fail_file(name, kFormat, "the token of rank " + std::to_string(rank) + " is given twice");
    }
    ranks.tokens[rank] = std::move(token);
  }
  for (int byte = 0; byte < 256; ++byte) {
    const auto it = ranks.ids.find(std::string_view(std::string(1, static_cast<char>(byte))));
    if (it == ranks.ids.end()) fail_file(name, kFormat, "byte " + std::to_string(byte) + " has no rank of its own");
    ranks.byte_ids[byte] = it->second;
  }
  return ranks;
}

}  // namespace etrt::llm::detail
