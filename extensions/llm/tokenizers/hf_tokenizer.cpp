// Hugging Face tokenizer.json: added tokens are split out of the text first (those matched on the
// raw text, then, after the normalizer, those matched on normalized text), the rest is
// pre-tokenized and each piece is encoded with byte-pair merges, as `tokenizers` does.
#include <algorithm>
#include <cstdio>

#include "byte_level.h"
#include "error.h"
#include "formats.h"
#include "hf_components.h"
#include "special_tokens.h"

namespace etrt::llm::detail {

namespace {

constexpr const char* kFormat = "tokenizer.json";

struct Segment {
  std::string text;
  std::optional<uint64_t> id;  // an added token's id; nullopt: text still to encode
};

// The last character of `text` (valid UTF-8), or nullopt when empty.
std::optional<char32_t> last_char(std::string_view text) {
  if (text.empty()) return std::nullopt;
  size_t start = text.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return decode_utf8_char(text.substr(start));
}

size_t trailing_whitespace_start(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (!is_unicode_whitespace(decode_utf8_char(text.substr(start, end - start)))) break;
    end = start;
  }
  return end;
}

size_t leading_whitespace_length(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t length = utf8_char_length(text.substr(pos));
    if (length == 0 || !is_unicode_whitespace(decode_utf8_char(text.substr(pos)))) break;
    pos += length;
  }
  return pos;
}

class HfTokenizer final : public Tokenizer {
 public:
  HfTokenizer(HfComponents components, std::string_view name) : c_(std::move(components)) {
    for (size_t i = 0; i < c_.added_tokens.size(); ++i) {
      HfAddedToken& token = c_.added_tokens[i];
      if (token.normalized && !c_.normalizer.empty()) {
        // Matched, and decoded, in its normalized form.
        const std::string normalized = normalize(token.content);
        c_.id_to_token[token.id] = normalized;
        normalized_added_.add(normalized, token.id);
      } else if (token.normalized) {
        normalized_added_.add(token.content, token.id);
      } else {
        raw_added_.add(token.content, token.id);
      }
      added_by_id_[token.id] = i;
      lookup_.add(token.content, token.id);
    }
    choose_bos_eos();
  }

  std::vector<uint64_t> encode(std::string_view text, int bos, int eos) const override {
    check_bos_eos_counts(bos, eos);
    check_utf8_text(text, kFormat);
    std::vector<uint64_t> ids(static_cast<size_t>(bos), bos_id_);
    for (const Segment& raw : split_added(std::string(text), raw_added_)) {
      if (raw.id) {
        ids.push_back(*raw.id);
        continue;
      }
      for (const Segment& segment : split_added(normalize(raw.text), normalized_added_)) {
        if (segment.id) {
          ids.push_back(*segment.id);
          continue;
        }
        for (const std::string& piece : pre_tokenize(segment.text)) encode_piece(piece, ids);
      }
    }
    ids.insert(ids.end(), static_cast<size_t>(eos), eos_id_);
    return ids;
  }

  std::string decode(uint64_t prev_id, uint64_t id) const override {
    check_token_id(id, vocab_size(), kFormat);
    const std::string& token = c_.id_to_token[id];
    if (token.empty() && !c_.is_added[id]) {
      fail(ET_ERR_INVALID_ARGUMENT, "tokenizer.json: token id " + std::to_string(id) + " is not in the vocabulary");
    }
    return c_.byte_level_decoder ? byte_level_decode(token) : token;
  }

  std::string decode(std::span<const uint64_t> ids) const override {
    std::string text;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!c_.byte_level_decoder && i > 0) text += ' ';  // the null decoder joins tokens with spaces
      text += decode(0, ids[i]);
    }
    return c_.byte_level_decoder ? utf8_lossy(text) : text;
  }

  uint64_t vocab_size() const override { return c_.id_to_token.size(); }
  std::optional<uint64_t> special_token_id(std::string_view text) const override { return lookup_.find_id(text); }
  TokenizerFormat format() const override { return TokenizerFormat::kHuggingFaceJson; }

 private:
  std::string normalize(std::string text) const {
    for (NormalizationForm form : c_.normalizer) text = normalize_unicode(text, form);
    return text;
  }

  // Hugging Face's AddedVocabulary::find_matches: leftmost-longest matches, single_word ones kept
  // only between non-word characters, lstrip/rstrip taking the whitespace beside them.
  std::vector<Segment> split_added(std::string text, const SpecialTokenMatcher& matcher) const {
    std::vector<Segment> segments;
    size_t done = 0;
    for (const SpecialMatch& match : matcher.find_all(text)) {
      const HfAddedToken& token = c_.added_tokens[added_by_id_.at(match.id)];
      size_t start = match.start, stop = match.end;
      if (token.single_word) {
        const std::optional<char32_t> before = last_char(std::string_view(text).substr(0, start));
        const std::string_view after = std::string_view(text).substr(stop);
        const bool word_before = before && is_word_char(*before);
        const bool word_after = !after.empty() && is_word_char(decode_utf8_char(after));
        if (word_before || word_after) continue;
      }
      if (token.lstrip) start = std::max(trailing_whitespace_start(std::string_view(text).substr(0, start)), done);
      if (token.rstrip) stop += leading_whitespace_length(std::string_view(text).substr(stop));
      start = std::max(start, done);
      if (done < start) segments.push_back({text.substr(done, start - done), std::nullopt});
      segments.push_back({text.substr(start, stop - start), match.id});
      done = stop;
    }
    if (done < text.size() || segments.empty()) segments.push_back({text.substr(done), std::nullopt});
    return segments;
  }

  std::vector<std::string> pre_tokenize(const std::string& text) const {
    std::vector<std::string> pieces;
    if (!text.empty()) pieces.push_back(text);
    for (const HfPreTokenizerStep& step : c_.pre_tokenizer) {
      std::vector<std::string> next;
      for (std::string& piece : pieces) {
        if (step.kind == HfPreTokenizerStep::Kind::kByteLevel) {
          if (step.add_prefix_space && piece[0] != ' ') piece.insert(0, 1, ' ');
          if (step.regex) {
            for (std::string& part : split(piece, *step.regex, SplitBehavior::kIsolated, false)) {
              next.push_back(byte_level_encode(part));
            }
          } else {
            next.push_back(byte_level_encode(piece));
          }
        } else {
          for (std::string& part : split(piece, *step.regex, step.behavior, step.invert)) next.push_back(std::move(part));
        }
      }
      pieces = std::move(next);
    }
    return pieces;
  }

  // Hugging Face's NormalizedString::split: the text cut into matches and the gaps between them,
  // then grouped by the behavior. Empty pieces are dropped.
  static std::vector<std::string> split(const std::string& text, const Regex& regex, SplitBehavior behavior,
                                        bool invert) {
    struct Span {
      size_t start, end;
      bool is_match;
    };
    std::vector<Span> spans;
    size_t pos = 0;
    for (const Match& match : regex.find_all(text)) {
      if (pos != match.start) spans.push_back({pos, match.start, invert});
      spans.push_back({match.start, match.end, !invert});
      pos = match.end;
    }
    if (pos != text.size()) spans.push_back({pos, text.size(), invert});

    std::vector<Span> grouped;
    bool previous_match = false;
    switch (behavior) {
      case SplitBehavior::kRemoved:
        for (const Span& span : spans) {
          if (!span.is_match) grouped.push_back(span);
        }
        break;
      case SplitBehavior::kIsolated:
        grouped = spans;
        break;
      case SplitBehavior::kContiguous:
        for (const Span& span : spans) {
          if (span.is_match == previous_match && !grouped.empty()) {
            grouped.back().end = span.end;
          } else {
            grouped.push_back(span);
          }
          previous_match = span.is_match;
        }
        break;
      case SplitBehavior::kMergedWithPrevious:
        for (const Span& span : spans) {
          if (span.is_match && !previous_match && !grouped.empty()) {
            grouped.back().end = span.end;
          } else {
            grouped.push_back(span);
          }
          previous_match = span.is_match;
        }
        break;
      case SplitBehavior::kMergedWithNext:
        for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
          if (it->is_match && !previous_match && !grouped.empty()) {
            grouped.back().start = it->start;
          } else {
            grouped.push_back(*it);
          }
          previous_match = it->is_match;
        }
        std::reverse(grouped.begin(), grouped.end());
        break;
    }
    std::vector<std::string> pieces;
    for (const Span& span : grouped) {
      if (span.end > span.start) pieces.push_back(text.substr(span.start, span.end - span.start));
    }
    return pieces;
  }

  void encode_piece(const std::string& piece, std::vector<uint64_t>& ids) const {
    const HfBpeModel& model = c_.model;
    if (model.ignore_merges) {
      if (const auto it = model.vocab.find(piece); it != model.vocab.end()) {
        ids.push_back(it->second);
        return;
      }
    }
    // Hugging Face's BPE::merge_word: one part per character; a character outside the vocabulary
    // becomes its <0xXX> byte tokens (byte_fallback) or the unknown token, fused when fuse_unk.
    std::vector<BpePart> parts;
    std::optional<BpePart> unknown;
    const auto flush_unknown = [&] {
      if (unknown) parts.push_back(*unknown);
      unknown.reset();
    };
    size_t pos = 0;
    while (pos < piece.size()) {
      const size_t length = utf8_char_length(std::string_view(piece).substr(pos));
      const std::string_view character = std::string_view(piece).substr(pos, length);
      if (const auto it = model.vocab.find(character); it != model.vocab.end()) {
        flush_unknown();
        parts.push_back({pos, pos + length, it->second});
      } else if (!encode_byte_fallback(character, pos, parts) && model.unk_id) {
        if (unknown && model.fuse_unk) {
          unknown->end = pos + length;
        } else {
          flush_unknown();
          unknown = BpePart{pos, pos + length, *model.unk_id};
        }
      }
      pos += length;
    }
    flush_unknown();
    const auto lookup = [&](const BpePart& left, const BpePart& right) -> std::optional<BpeMerge> {
      const auto it = model.merges.find(left.id << 32 | right.id);
      if (it == model.merges.end()) return std::nullopt;
      return it->second;
    };
    for (const BpePart& part : bpe_merge(std::move(parts), lookup, BpeRecheck::kSameResult)) ids.push_back(part.id);
  }

  bool encode_byte_fallback(std::string_view character, size_t pos, std::vector<BpePart>& parts) const {
    if (!c_.model.byte_fallback) return false;
    std::vector<BpePart> bytes;
    for (size_t i = 0; i < character.size(); ++i) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", static_cast<unsigned char>(character[i]));
      const auto it = c_.model.vocab.find(std::string_view(name));
      if (it == c_.model.vocab.end()) return false;
      bytes.push_back({pos + i, pos + i + 1, it->second});
    }
    parts.insert(parts.end(), bytes.begin(), bytes.end());
    return true;
  }

  // A tokenizer_config.json's tokens, else ExecuTorch's guess: the one added token naming "bos" or
  // "begin" (and "text" when several do), likewise "eos"/"end"; one found stands for both.
  void choose_bos_eos() {
    if (c_.bos_id || c_.eos_id) {
      bos_id_ = c_.bos_id.value_or(c_.eos_id.value_or(0));
      eos_id_ = c_.eos_id.value_or(bos_id_);
      return;
    }
    const auto guess = [&](std::initializer_list<const char*> words) -> std::optional<uint64_t> {
      std::vector<const HfAddedToken*> candidates;
      for (const HfAddedToken& token : c_.added_tokens) {
        for (const char* word : words) {
          if (token.content.find(word) != std::string::npos) {
            candidates.push_back(&token);
            break;
          }
        }
      }
      if (candidates.size() > 1) {
        std::erase_if(candidates, [](const HfAddedToken* token) { return token->content.find("text") == std::string::npos; });
      }
      if (candidates.size() == 1) return candidates[0]->id;
      return std::nullopt;
    };
    const std::optional<uint64_t> bos = guess({"bos", "begin"}), eos = guess({"eos", "end"});
    bos_id_ = bos.value_or(eos.value_or(0));
    eos_id_ = eos.value_or(bos.value_or(0));
  }

  HfComponents c_;
  SpecialTokenMatcher raw_added_, normalized_added_, lookup_;
  std::unordered_map<uint64_t, size_t> added_by_id_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_hf_tokenizer(std::string_view content, std::string_view name,
                                             std::string_view config_json) {
  return std::make_unique<HfTokenizer>(parse_hf_tokenizer_json(content, name, config_json), name);
}

}  // namespace etrt::llm::detail
