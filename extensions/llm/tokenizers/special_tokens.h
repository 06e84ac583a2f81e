// Special tokens written inside text: "<|eot_id|>" in a prompt is the one id, not its characters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace etrt::llm::detail {

struct SpecialMatch {
  size_t start = 0, end = 0;
  uint64_t id = 0;
};

class SpecialTokenMatcher {
 public:
  void add(std::string text, uint64_t id);
  bool empty() const { return ids_.empty(); }
  std::optional<uint64_t> find_id(std::string_view text) const;
  // Non-overlapping occurrences, leftmost first and the longest of those starting at one place
  // (Hugging Face's leftmost-longest matching; tiktoken's special tokens never prefix each other).
  std::vector<SpecialMatch> find_all(std::string_view text) const;

 private:
  std::unordered_map<std::string, uint64_t> ids_;
  // Token texts by their first byte, longest first.
  std::vector<std::vector<const std::string*>> by_first_byte_ = std::vector<std::vector<const std::string*>>(256);
};

}  // namespace etrt::llm::detail
