// Byte-pair merging shared by the tiktoken and tokenizer.json tokenizers: adjacent parts merge,
// lowest rank first and leftmost first among equal ranks, until no adjacent pair has a rank. A heap
// keeps it O(n log n) for long pieces (a run of 100,000 spaces is one pre-token).
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

namespace etrt::llm::detail {

struct BpePart {
  size_t start = 0, end = 0;  // byte range in the piece
  uint64_t id = 0;
};

struct BpeMerge {
  uint64_t rank = 0;
  uint64_t merged_id = 0;
};

// When a queued merge is still valid. kUnchangedParts: neither part changed since it was queued
// (SentencePiece, tiktoken). kSameResult: the two parts now there still merge into the queued
// result (Hugging Face's BPE, which may then merge a pair that changed into the same token).
enum class BpeRecheck { kUnchangedParts, kSameResult };

// `lookup(left, right)` returns the merge of two adjacent parts, or nullopt when they do not merge.
template <class Lookup>
std::vector<BpePart> bpe_merge(std::vector<BpePart> parts, Lookup&& lookup,
                               BpeRecheck recheck = BpeRecheck::kUnchangedParts) {
  const size_t count = parts.size();
  if (count < 2) return parts;
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> next(count), prev(count);
  std::vector<uint32_t> version(count, 0);
  std::vector<bool> alive(count, true);
  for (size_t i = 0; i < count; ++i) {
    next[i] = i + 1 < count ? i + 1 : kNone;
    prev[i] = i > 0 ? i - 1 : kNone;
  }
  struct Candidate {
    uint64_t rank;
    size_t left, right;
    uint64_t merged_id;
    uint32_t left_version, right_version;
    bool operator>(const Candidate& other) const {
      if (rank != other.rank) return rank > other.rank;
      return left > other.left;  // part indices grow with byte offsets: leftmost first
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  const auto consider = [&](size_t left, size_t right) {
    if (left == kNone || right == kNone) return;
    if (const std::optional<BpeMerge> merge = lookup(parts[left], parts[right])) {
      heap.push({merge->rank, left, right, merge->merged_id, version[left], version[right]});
    }
  };
  for (size_t i = 0; i + 1 < count; ++i) consider(i, i + 1);
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    if (!alive[top.left] || next[top.left] == kNone) continue;
    const size_t right = next[top.left];
    if (recheck == BpeRecheck::kUnchangedParts) {
      if (right != top.right || version[top.left] != top.left_version || version[right] != top.right_version) {
        continue;  // one side merged since this candidate was queued
      }
    } else {
      const std::optional<BpeMerge> now = lookup(parts[top.left], parts[right]);
      if (!now || now->merged_id != top.merged_id) continue;
    }
    parts[top.left].end = parts[right].end;
    parts[top.left].id = top.merged_id;
    ++version[top.left];
    alive[right] = false;
    next[top.left] = next[right];
    if (next[right] != kNone) prev[next[right]] = top.left;
    consider(prev[top.left], top.left);
    consider(top.left, next[top.left]);
  }
  std::vector<BpePart> merged;
  for (size_t i = 0; i != kNone; i = next[i]) merged.push_back(parts[i]);
  return merged;
}

}  // namespace etrt::llm::detail
