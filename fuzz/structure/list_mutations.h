// Length changes of one list of the object tree: an entry removed, inserted,
// duplicated, swapped, or the list cut short. Shared by the program and the
// XNNPACK graph mutations.
#pragma once

#include <memory>
#include <vector>

#include "random_values.h"

namespace etrt_fuzz {

// A list of plain entries (indices, sizes, bytes); `fresh` is what an insertion adds.
template <typename T, typename Fresh>
bool change_length(std::vector<T>& list, Random& random, Fresh fresh) {
  auto at = [&](size_t extra) { return list.begin() + static_cast<std::ptrdiff_t>(random.below(list.size() + extra)); };
  switch (random.below(5)) {
    case 0:
      if (list.empty()) return false;
      list.erase(at(0));
      return true;
    case 1: list.insert(at(1), static_cast<T>(fresh)); return true;
    case 2: {
      if (list.empty()) return false;
      T copy = list[random.below(list.size())];
      list.insert(at(1), copy);
      return true;
    }
    case 3: {
      if (list.size() < 2) return false;
      size_t a = random.below(list.size()), b = random.below(list.size());
      T first = list[a];
      list[a] = list[b];
      list[b] = first;
      return true;
    }
    default:
      if (list.empty()) return false;
      list.resize(random.below(list.size()));
      return true;
  }
}

// A list of tables (instructions, values, nodes): copies go through the object API's copy constructors.
template <typename T>
bool change_owned_length(std::vector<std::unique_ptr<T>>& list, Random& random) {
  switch (random.below(4)) {
    case 0:
      if (list.empty()) return false;
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(random.below(list.size())));
      return true;
    case 1: {
      if (list.empty()) return false;
      auto copy = std::make_unique<T>(*list[random.below(list.size())]);
      list.insert(list.begin() + static_cast<std::ptrdiff_t>(random.below(list.size() + 1)), std::move(copy));
      return true;
    }
    case 2:
      if (list.size() < 2) return false;
      std::swap(list[random.below(list.size())], list[random.below(list.size())]);
      return true;
    default:
      if (list.empty()) return false;
      list.pop_back();
      return true;
  }
}

}  // namespace etrt_fuzz
