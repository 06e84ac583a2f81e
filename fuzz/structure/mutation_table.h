// A table of named, weighted mutations of one kind of object (a program, an XNNPACK
// graph) and the draw that applies one of them.
#pragma once

#include <cstddef>
#include <vector>

#include "random_values.h"

namespace etrt_fuzz {

template <typename Target>
struct Mutation {
  const char* name;
  bool (*apply)(Target&, Random&);  // false: nothing to apply to
  unsigned weight;
};

// Draws one mutation by weight and applies it; its name, or nullptr when it had nothing to apply to.
template <typename Target, size_t N>
const char* apply_one(const Mutation<Target> (&table)[N], Target& target, Random& random) {
  unsigned total = 0;
  for (const Mutation<Target>& m : table) total += m.weight;
  auto draw = static_cast<unsigned>(random.below(total));
  for (const Mutation<Target>& m : table) {
    if (draw < m.weight) return m.apply(target, random) ? m.name : nullptr;
    draw -= m.weight;
  }
  return nullptr;
}

template <typename Target, size_t N>
std::vector<const char*> names_of(const Mutation<Target> (&table)[N]) {
  std::vector<const char*> names;
  for (const Mutation<Target>& m : table) names.push_back(m.name);
  return names;
}

}  // namespace etrt_fuzz
