#include "sentencepiece_model.h"

#include <bit>
#include <cstring>

#include "error.h"

namespace etrt::llm::detail {

namespace {

constexpr const char* kFormat = "SentencePiece model";

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// One protobuf message's bytes. Every read is bounds-checked; a failure names the byte offset in
// the file (`base` is where this message starts in it).
class WireReader {
 public:
  WireReader(std::string_view bytes, size_t base, std::string_view name) : bytes_(bytes), base_(base), name_(name) {}

  bool done() const { return pos_ >= bytes_.size(); }

  // The next field's number and wire type.
  std::pair<uint32_t, uint32_t> tag() {
    const size_t at = pos_;
    const uint64_t key = varint();
    const uint32_t field = static_cast<uint32_t>(key >> 3), type = static_cast<uint32_t>(key & 7);
    if (field == 0 || key >> 32 != 0) bad(at, "field number " + std::to_string(key >> 3) + " is invalid");
    if (type != kVarint && type != kFixed64 && type != kLengthDelimited && type != kFixed32) {
      bad(at, "wire type " + std::to_string(type) + " of field " + std::to_string(field) + " is not supported");
    }
    return {field, type};
  }

  uint64_t varint() {
    const size_t at = pos_;
    uint64_t value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos_ >= bytes_.size()) bad(at, "the file ends inside a varint (truncated)");
      const auto byte = static_cast<unsigned char>(bytes_[pos_++]);
      if (shift == 63 && byte > 1) bad(at, "a varint overflows 64 bits");
      value |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    bad(at, "a varint is longer than 10 bytes");
  }

  std::string_view bytes(size_t& offset_in_file) {
    const size_t at = pos_;
    const uint64_t length = varint();
    if (length > bytes_.size() - pos_) {
      bad(at, "a field's length " + std::to_string(length) + " runs past the end of its message (" +
                  std::to_string(bytes_.size() - pos_) + " bytes left; truncated?)");
    }
    offset_in_file = base_ + pos_;
    const std::string_view out = bytes_.substr(pos_, static_cast<size_t>(length));
    pos_ += static_cast<size_t>(length);
    return out;
  }

  float fixed32_float() {
    if (bytes_.size() - pos_ < 4) bad(pos_, "the file ends inside a 32-bit field (truncated)");
    uint32_t bits = 0;
    std::memcpy(&bits, bytes_.data() + pos_, 4);
    if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap32(bits);
    pos_ += 4;
    return std::bit_cast<float>(bits);
  }

  void skip(uint32_t type) {
    size_t ignored = 0;
    switch (type) {
      case kVarint: varint(); break;
      case kFixed64:
        if (bytes_.size() - pos_ < 8) bad(pos_, "the file ends inside a 64-bit field (truncated)");
        pos_ += 8;
        break;
      case kLengthDelimited: bytes(ignored); break;
      case kFixed32:
        if (bytes_.size() - pos_ < 4) bad(pos_, "the file ends inside a 32-bit field (truncated)");
        pos_ += 4;
        break;
    }
  }

  // A field's value, its wire type checked first.
  uint64_t number(uint32_t type, uint32_t field) {
    expect(type, kVarint, field);
    return varint();
  }
  bool flag(uint32_t type, uint32_t field) { return number(type, field) != 0; }
  std::string_view text(uint32_t type, uint32_t field, size_t& offset_in_file) {
    expect(type, kLengthDelimited, field);
    return bytes(offset_in_file);
  }
  std::string text(uint32_t type, uint32_t field) {
    size_t offset = 0;
    return std::string(text(type, field, offset));
  }

  void expect(uint32_t type, uint32_t wanted, uint32_t field) {
    if (type != wanted) {
      bad(pos_, "field " + std::to_string(field) + " has wire type " + std::to_string(type) + ", not " +
                    std::to_string(wanted));
    }
  }

  [[noreturn]] void bad(size_t at, const std::string& what) const {
    fail_file(name_, kFormat, "at byte " + std::to_string(base_ + at) + ": " + what);
  }

 private:
  std::string_view bytes_;
  size_t base_ = 0, pos_ = 0;
  std::string_view name_;
};

SentencePiece read_piece(std::string_view bytes, size_t base, std::string_view name) {
  WireReader reader(bytes, base, name);
  SentencePiece piece;
  while (!reader.done()) {
    const auto [field, type] = reader.tag();
    if (field == 1) {
      piece.piece = reader.text(type, field);
    } else if (field == 2) {
      reader.expect(type, kFixed32, field);
      piece.score = reader.fixed32_float();
    } else if (field == 3) {
      const uint64_t value = reader.number(type, field);
      if (value < 1 || value > 6) reader.bad(0, "piece type " + std::to_string(value) + " is not one of 1..6");
      piece.type = static_cast<PieceType>(value);
    } else {
      reader.skip(type);
    }
  }
  return piece;
}

void read_trainer_spec(std::string_view bytes, size_t base, std::string_view name, SentencePieceModel& model) {
  WireReader reader(bytes, base, name);
  while (!reader.done()) {
    const auto [field, type] = reader.tag();
    switch (field) {
      case 3: {
        const uint64_t value = reader.number(type, field);
        if (value < 1 || value > 4) reader.bad(0, "model_type " + std::to_string(value) + " is not one of 1..4");
        model.type = static_cast<SentencePieceModel::Type>(value);
        break;
      }
      case 24: model.treat_whitespace_as_suffix = reader.flag(type, field); break;
      case 35: model.byte_fallback = reader.flag(type, field); break;
      case 44: model.unk_surface = reader.text(type, field); break;
      case 46: model.bos_piece = reader.text(type, field); break;
      case 47: model.eos_piece = reader.text(type, field); break;
      default: reader.skip(type);
    }
  }
}

// NormalizerSpec; of a denormalizer only the character map matters.
void read_normalizer_spec(std::string_view bytes, size_t base, std::string_view name, SentencePieceModel& model,
                          bool denormalizer) {
  WireReader reader(bytes, base, name);
  while (!reader.done()) {
    const auto [field, type] = reader.tag();
    if (field == 2) {
      (denormalizer ? model.denormalizer_charsmap : model.precompiled_charsmap) = reader.text(type, field);
    } else if (!denormalizer && field == 3) {
      model.add_dummy_prefix = reader.flag(type, field);
    } else if (!denormalizer && field == 4) {
      model.remove_extra_whitespaces = reader.flag(type, field);
    } else if (!denormalizer && field == 5) {
      model.escape_whitespaces = reader.flag(type, field);
    } else {
      reader.skip(type);
    }
  }
}

}  // namespace

SentencePieceModel parse_sentencepiece_model(std::string_view content, std::string_view name) {
  SentencePieceModel model;
  WireReader reader(content, 0, name);
  while (!reader.done()) {
    const auto [field, type] = reader.tag();
    size_t offset = 0;
    if ((field >= 1 && field <= 3) || field == 5) {
      const std::string_view message = reader.text(type, field, offset);
      if (field == 1) model.pieces.push_back(read_piece(message, offset, name));
      if (field == 2) read_trainer_spec(message, offset, name, model);
      if (field == 3) read_normalizer_spec(message, offset, name, model, false);
      if (field == 5) read_normalizer_spec(message, offset, name, model, true);
    } else {
      reader.skip(type);
    }
  }
  if (model.pieces.empty()) fail_file(name, kFormat, "the model holds no piece");
  return model;
}

bool looks_like_sentencepiece(std::string_view content) {
  // Field 1, length-delimited: the first piece.
  if (content.empty() || content[0] != '\x0a') return false;
  try {
    parse_sentencepiece_model(content, "");
    return true;
  } catch (const etrt::Error&) {
    return false;
  }
}

}  // namespace etrt::llm::detail
