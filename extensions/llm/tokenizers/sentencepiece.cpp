// SentencePiece models (Llama 2's tokenizer.model): the normalizer, then BPE (merges by piece score)
// or unigram (Viterbi over piece scores), unknown characters as <0xXX> byte pieces when the model
// has byte fallback, as the sentencepiece library encodes and decodes.
#include <cfloat>
#include <functional>
#include <unordered_map>

#include "bpe_merge.h"
#include "error.h"
#include "formats.h"
#include "score_pieces.h"
#include "sentencepiece_model.h"
#include "sentencepiece_normalizer.h"
#include "string_map.h"
#include "unicode.h"

namespace etrt::llm::detail {

namespace {

constexpr const char* kFormat = "SentencePiece model";
constexpr std::string_view kSpaceSymbol = "\xe2\x96\x81";

class SentencePieceTokenizer final : public Tokenizer {
 public:
  SentencePieceTokenizer(SentencePieceModel model, std::string_view name)
      : model_(std::move(model)), normalizer_(model_, &user_symbols_, name) {
    if (model_.type != SentencePieceModel::Type::kBpe && model_.type != SentencePieceModel::Type::kUnigram) {
      fail_unsupported(name, kFormat, "model_type " + std::to_string(static_cast<int>(model_.type)) +
                                          " (WORD or CHAR) is not supported; supported: UNIGRAM and BPE");
    }
    if (model_.treat_whitespace_as_suffix) {
      fail_unsupported(name, kFormat, "treat_whitespace_as_suffix is not supported");
    }
    if (!model_.denormalizer_charsmap.empty()) fail_unsupported(name, kFormat, "a denormalizer is not supported");
    index_pieces(name);
  }

  std::vector<uint64_t> encode(std::string_view text, int bos, int eos) const override {
    check_bos_eos_counts(bos, eos);
    if (bos > 0 && !bos_) fail(ET_ERR_INVALID_ARGUMENT, "SentencePiece model: it has no BOS piece '" + model_.bos_piece + "'");
    if (eos > 0 && !eos_) fail(ET_ERR_INVALID_ARGUMENT, "SentencePiece model: it has no EOS piece '" + model_.eos_piece + "'");
    std::vector<uint64_t> ids(static_cast<size_t>(bos), bos_id_);
    const std::string normalized = normalizer_.normalize(text);
    const std::vector<std::pair<std::string_view, int64_t>> pieces =
        model_.type == SentencePieceModel::Type::kBpe ? encode_bpe(normalized) : encode_unigram(normalized);
    // Unknown pieces: their bytes as byte pieces with byte fallback, else runs of them fused into one.
    bool previous_unknown = false;
    for (const auto& [piece, id] : pieces) {
      const bool unknown = id == unk_id_;
      if (unknown && model_.byte_fallback) {
        for (char byte : piece) ids.push_back(byte_ids_[static_cast<unsigned char>(byte)]);
      } else if (!(unknown && previous_unknown)) {
        ids.push_back(static_cast<uint64_t>(id));
      }
      previous_unknown = unknown;
    }
    ids.insert(ids.end(), static_cast<size_t>(eos), eos_id_);
    return ids;
  }

  // As the sentencepiece decoder, one piece at a time: the dummy prefix's space is dropped after BOS.
  std::string decode(uint64_t prev_id, uint64_t id) const override {
    check_token_id(id, vocab_size(), kFormat);
    const SentencePiece& piece = model_.pieces[id];
    switch (piece.type) {
      // A control id (<s>, </s>) streams as one space, as ExecuTorch's runner streams it (its
      // SentencePiece tokenizer's decode(prev, id)), so the streamed text is the same; the whole
      // sequence's decode below drops control ids, as sentencepiece does.
      case PieceType::kControl: return " ";
      case PieceType::kUnknown: return model_.unk_surface;
      case PieceType::kByte: return std::string(1, static_cast<char>(byte_of_piece(id)));
      default: break;
    }
    std::string_view text = piece.piece;
    if (bos_ && prev_id == bos_id_ && (model_.add_dummy_prefix || model_.remove_extra_whitespaces)) {
      if (text.starts_with(kSpaceSymbol)) text.remove_prefix(kSpaceSymbol.size());
    }
    return unescape(text);
  }

  // sentencepiece's SentencePieceProcessor::Decode.
  std::string decode(std::span<const uint64_t> ids) const override {
    std::string text, bytes;
    const auto flush_bytes = [&] {
      // Each byte that does not start a valid character becomes one U+FFFD.
      size_t pos = 0;
      while (pos < bytes.size()) {
        const size_t length = utf8_char_length(std::string_view(bytes).substr(pos));
        if (length == 0) {
          text += "\xEF\xBF\xBD";
          pos += 1;
        } else {
          text.append(bytes, pos, length);
          pos += length;
        }
      }
      bytes.clear();
    };
    bool expect_bos_space = true, bos_space_seen = false;
    for (uint64_t id : ids) {
      check_token_id(id, vocab_size(), kFormat);
      const SentencePiece& piece = model_.pieces[id];
      if (piece.type == PieceType::kByte) {
        bytes += static_cast<char>(byte_of_piece(id));
        continue;
      }
      flush_bytes();
      if (bos_space_seen || !text.empty()) expect_bos_space = false;
      bos_space_seen = false;
      if (piece.type == PieceType::kControl) continue;
      if (piece.type == PieceType::kUnknown) {
        text += model_.unk_surface;
        continue;
      }
      std::string_view surface = piece.piece;
      if (expect_bos_space && (model_.add_dummy_prefix || model_.remove_extra_whitespaces)) {
        bos_space_seen = surface.starts_with(kSpaceSymbol);
        if (bos_space_seen) surface.remove_prefix(kSpaceSymbol.size());
        if (model_.remove_extra_whitespaces) bos_space_seen = false;
      }
      text += unescape(surface);
    }
    flush_bytes();
    return text;
  }

  uint64_t vocab_size() const override { return model_.pieces.size(); }
  std::optional<uint64_t> special_token_id(std::string_view text) const override {
    const auto it = reserved_.find(text);
    if (it != reserved_.end() && model_.pieces[it->second].type == PieceType::kControl) return it->second;
    const auto user = pieces_.find(text);
    if (user != pieces_.end() && model_.pieces[user->second].type == PieceType::kUserDefined) return user->second;
    return std::nullopt;
  }
  TokenizerFormat format() const override { return TokenizerFormat::kSentencePiece; }

 private:
  void index_pieces(std::string_view name) {
    std::vector<bool> byte_found(256, false);
    for (size_t i = 0; i < model_.pieces.size(); ++i) {
      const SentencePiece& piece = model_.pieces[i];
      const std::string where = "piece " + std::to_string(i);
      if (piece.piece.empty()) fail_file(name, kFormat, where + " is empty");
      const bool normal = piece.type == PieceType::kNormal || piece.type == PieceType::kUserDefined ||
                          piece.type == PieceType::kUnused;
      if (!(normal ? pieces_ : reserved_).emplace(piece.piece, i).second) {
        fail_file(name, kFormat, where + " '" + piece.piece + "' is defined twice");
      }
      if (piece.type == PieceType::kUserDefined) user_symbols_.add(piece.piece);
      if (piece.type == PieceType::kUnknown) {
        if (unk_id_ >= 0) fail_file(name, kFormat, where + ": a second unknown piece");
        unk_id_ = static_cast<int64_t>(i);
      }
      if (piece.type == PieceType::kNormal) {
        min_score_ = std::min(min_score_, piece.score);
        max_score_ = std::max(max_score_, piece.score);
      }
      if (piece.type == PieceType::kByte) {
        if (!model_.byte_fallback) fail_file(name, kFormat, where + " is a byte piece but byte_fallback is off");
        const int byte = parse_byte_piece(piece.piece);
        if (byte < 0) fail_file(name, kFormat, where + " '" + piece.piece + "' is not a byte piece <0xXX>");
        byte_found[byte] = true;
        byte_ids_[byte] = i;
      }
    }
    if (unk_id_ < 0) fail_file(name, kFormat, "the model has no unknown piece");
    if (model_.byte_fallback && std::find(byte_found.begin(), byte_found.end(), false) != byte_found.end()) {
      fail_file(name, kFormat, "byte_fallback is on but the model lacks some of the 256 byte pieces");
    }
    // As sentencepiece computes them (FLT_MIN, the smallest positive float, is the start of the max).
    if (min_score_ == FLT_MAX) min_score_ = 0;
    if (max_score_ == FLT_MIN) max_score_ = 0;
    const auto control = [&](const std::string& text) -> std::optional<uint64_t> {
      const auto it = reserved_.find(text);
      if (it == reserved_.end() || model_.pieces[it->second].type != PieceType::kControl) return std::nullopt;
      return it->second;
    };
    bos_ = control(model_.bos_piece);
    eos_ = control(model_.eos_piece);
    bos_id_ = bos_.value_or(0);
    eos_id_ = eos_.value_or(0);
    for (const auto& [text, id] : pieces_) {
      if (model_.pieces[id].type == PieceType::kUnused) continue;
      max_piece_length_ = std::max(max_piece_length_, text.size());
    }
  }

  static int parse_byte_piece(std::string_view piece) {
    const std::optional<unsigned char> byte = byte_piece_value(piece, false);
    return byte ? *byte : -1;
  }

  unsigned char byte_of_piece(uint64_t id) const { return static_cast<unsigned char>(parse_byte_piece(model_.pieces[id].piece)); }

  static std::string unescape(std::string_view text) {
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
      if (text.substr(pos).starts_with(kSpaceSymbol)) {
        out += ' ';
        pos += kSpaceSymbol.size();
      } else {
        out += text[pos++];
      }
    }
    return out;
  }

  // The id of a normal, user-defined or unused piece (what merges and lattices may produce).
  int64_t piece_id(std::string_view text) const {
    const auto it = pieces_.find(text);
    return it == pieces_.end() ? -1 : static_cast<int64_t>(it->second);
  }
  // sentencepiece's PieceToId: reserved pieces, then the others, else the unknown piece.
  int64_t any_piece_id(std::string_view text) const {
    if (const auto it = reserved_.find(text); it != reserved_.end()) return static_cast<int64_t>(it->second);
    const int64_t id = piece_id(text);
    return id >= 0 ? id : unk_id_;
  }

  // One character, or a user-defined symbol (which never merges).
  size_t symbol_length(std::string_view text, bool& frozen) const {
    frozen = false;
    if (const size_t length = user_symbols_.longest_match(text)) {
      frozen = true;
      return length;
    }
    const size_t length = utf8_char_length(text);
    return length == 0 ? 1 : length;
  }

  std::vector<std::pair<std::string_view, int64_t>> encode_bpe(std::string_view normalized) const {
    std::vector<BpePart> parts;
    std::vector<bool> frozen_at;  // by start offset of the initial symbols
    for (size_t pos = 0; pos < normalized.size();) {
      bool frozen = false;
      const size_t length = symbol_length(normalized.substr(pos), frozen);
      parts.push_back({pos, pos + length, 0});
      frozen_at.push_back(frozen);
      pos += length;
    }
    std::vector<bool> is_frozen(normalized.size() + 1, false);
    for (size_t i = 0; i < parts.size(); ++i) is_frozen[parts[i].start] = frozen_at[i];
    // An unused piece made by a merge is split again into the two pieces it was made of.
    StringMap<std::pair<std::string_view, std::string_view>> unmerge;
    const auto lookup = [&](const BpePart& left, const BpePart& right) -> std::optional<BpeMerge> {
      if (is_frozen[left.start] || is_frozen[right.start]) return std::nullopt;
      const std::string_view merged = normalized.substr(left.start, right.end - left.start);
      const int64_t id = piece_id(merged);
      if (id < 0) return std::nullopt;
      if (model_.pieces[id].type == PieceType::kUnused) {
        unmerge[std::string(merged)] = {normalized.substr(left.start, left.end - left.start),
                                        normalized.substr(right.start, right.end - right.start)};
      }
      return BpeMerge{rank_of_score(model_.pieces[id].score), static_cast<uint64_t>(id)};
    };
    std::vector<std::pair<std::string_view, int64_t>> out;
    const std::function<void(std::string_view)> resegment = [&](std::string_view piece) {
      const int64_t id = any_piece_id(piece);
      const auto it = unmerge.find(piece);
      if (id < 0 || model_.pieces[id].type != PieceType::kUnused || it == unmerge.end()) {
        out.emplace_back(piece, id);
        return;
      }
      const auto [left, right] = it->second;
      resegment(left);
      resegment(right);
    };
    for (const BpePart& part : bpe_merge(std::move(parts), lookup)) {
      resegment(normalized.substr(part.start, part.end - part.start));
    }
    return out;
  }

  // sentencepiece's optimized unigram Viterbi: the best path ending at each byte position.
  std::vector<std::pair<std::string_view, int64_t>> encode_unigram(std::string_view normalized) const {
    struct Best {
      int64_t id = -1;
      float score = 0;
      int64_t starts_at = -1;
    };
    const size_t size = normalized.size();
    const float unk_score = min_score_ - 10.0f;
    std::vector<Best> best(size + 1);
    for (size_t start = 0; start < size;) {
      const float score_here = best[start].score;
      const size_t char_length = std::min(std::max<size_t>(utf8_char_length(normalized.substr(start)), 1), size - start);
      bool has_single = false;
      for (size_t length = 1; length <= std::min(max_piece_length_, size - start); ++length) {
        const int64_t id = piece_id(normalized.substr(start, length));
        if (id < 0 || model_.pieces[id].type == PieceType::kUnused) continue;
        // In float, as the sentencepiece library's scores compare (ties keep the earlier path).
        const float score = model_.pieces[id].type == PieceType::kUserDefined
                                ? static_cast<float>(static_cast<double>(static_cast<float>(length) * max_score_) - 0.1)
                                : model_.pieces[id].score;
        const float candidate = score + score_here;
        Best& target = best[start + length];
        if (target.starts_at == -1 || candidate > target.score) {
          target = {id, static_cast<float>(candidate), static_cast<int64_t>(start)};
        }
        if (length == char_length) has_single = true;
      }
      if (!has_single) {
        Best& target = best[start + char_length];
        const float candidate = unk_score + score_here;
        if (target.starts_at == -1 || candidate > target.score) target = {unk_id_, candidate, static_cast<int64_t>(start)};
      }
      start += char_length;
    }
    std::vector<std::pair<std::string_view, int64_t>> out;
    for (size_t end = size; end > 0;) {
      const Best& node = best[end];
      out.emplace_back(normalized.substr(node.starts_at, end - node.starts_at), node.id);
      end = static_cast<size_t>(node.starts_at);
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

  SentencePieceModel model_;
  PrefixMatcher user_symbols_;
  SentencePieceNormalizer normalizer_;
  StringMap<uint64_t> pieces_, reserved_;
  std::array<uint64_t, 256> byte_ids_{};
  int64_t unk_id_ = -1;
  float min_score_ = FLT_MAX, max_score_ = FLT_MIN;
  size_t max_piece_length_ = 0;
  std::optional<uint64_t> bos_, eos_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_sentencepiece_tokenizer(std::string_view content, std::string_view name) {
  return std::make_unique<SentencePieceTokenizer>(parse_sentencepiece_model(content, name), name);
}

}  // namespace etrt::llm::detail
