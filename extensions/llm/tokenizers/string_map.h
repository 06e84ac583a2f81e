// Hash maps keyed by std::string that are looked up with a std::string_view, without a copy.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace etrt::llm::detail {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

template <class Value>
using StringMap = std::unordered_map<std::string, Value, StringHash, std::equal_to<>>;

}  // namespace etrt::llm::detail
