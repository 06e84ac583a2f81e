#include "special_tokens.h"

#include <algorithm>

namespace etrt::llm::detail {

void SpecialTokenMatcher::add(std::string text, uint64_t id) {
  if (text.empty()) return;  // an empty token matches nowhere
  auto [it, inserted] = ids_.emplace(std::move(text), id);
  if (!inserted) {
    it->second = id;
    return;
  }
  auto& bucket = by_first_byte_[static_cast<unsigned char>(it->first[0])];
  bucket.push_back(&it->first);
  std::stable_sort(bucket.begin(), bucket.end(),
                   [](const std::string* a, const std::string* b) { return a->size() > b->size(); });
}

std::optional<uint64_t> SpecialTokenMatcher::find_id(std::string_view text) const {
  const auto it = ids_.find(std::string(text));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::vector<SpecialMatch> SpecialTokenMatcher::find_all(std::string_view text) const {
  std::vector<SpecialMatch> matches;
  if (ids_.empty()) return matches;
  size_t pos = 0;
  while (pos < text.size()) {
    const auto& bucket = by_first_byte_[static_cast<unsigned char>(text[pos])];
    const std::string* found = nullptr;
    for (const std::string* candidate : bucket) {
      if (text.compare(pos, candidate->size(), *candidate) == 0) {
        found = candidate;
        break;
      }
    }
    if (found != nullptr) {
      matches.push_back({pos, pos + found->size(), ids_.at(*found)});
      pos += found->size();
    } else {
      ++pos;
    }
  }
  return matches;
}

}  // namespace etrt::llm::detail
