// Small tokenizer files of every format, written in memory by the tests (tokenizers_test.cpp,
// tokenizer_files_test.cpp): the vocabularies are tiny so expected ids can be worked out by hand.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace tokenizer_samples {

inline std::string base64(const std::string& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += alphabet[(n >> shift) & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t n = uint8_t(bytes[i]) << 16;
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

// Ranks 0..255: the single bytes; then the merged tokens below, in merge order.
inline const std::vector<std::string>& tiktoken_merges() {
  static const std::vector<std::string> merges = {"he", "ll", "hell", "hello", " w", " wo", "or", " wor", " worl",
                                                  " world", "  ", "    "};
  return merges;
}

inline std::string tiktoken_file() {
  std::string out;
  for (int byte = 0; byte < 256; ++byte) out += base64(std::string(1, char(byte))) + " " + std::to_string(byte) + "\n";
  uint64_t rank = 256;
  for (const std::string& token : tiktoken_merges()) out += base64(token) + " " + std::to_string(rank++) + "\n";
  return out;
}

// GPT-2's byte-level alphabet: the character each byte is written as.
inline std::string byte_char(int byte) {
  const auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
  uint32_t code_point = byte;
  if (!printable(byte)) {
    code_point = 256;
    for (int b = 0; b < byte; ++b) code_point += printable(b) ? 0 : 1;
  }
  std::string out;
  if (code_point < 0x80) {
    out += char(code_point);
  } else {
    out += char(0xC0 | (code_point >> 6));
    out += char(0x80 | (code_point & 0x3F));
  }
  return out;
}

inline std::string json_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// A byte-level BPE tokenizer.json: ids 0..255 the byte characters, then the merges of
// tiktoken_merges() (with Ġ for the space), then added tokens from 300 on. `extra` is spliced into
// the top-level object (e.g. a normalizer).
inline std::string tokenizer_json(const std::string& added_tokens = "", const std::string& extra = "",
                                  const std::string& pre_tokenizer = "") {
  std::string vocab, merges;
  for (int byte = 0; byte < 256; ++byte) {
    vocab += (byte ? ",\"" : "\"") + json_escape(byte_char(byte)) + "\":" + std::to_string(byte);
  }
  const auto level = [](const std::string& text) {
    std::string out;
    for (char c : text) out += byte_char(uint8_t(c));
    return out;
  };
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {" ", "w"}, {" w", "o"}, {"o", "r"}, {" wo", "r"},
      {" wor", "l"}, {" worl", "d"}, {" ", " "}, {"  ", "  "}};
  int id = 256;
  for (const auto& [left, right] : pairs) {
    vocab += ",\"" + json_escape(level(left + right)) + "\":" + std::to_string(id++);
    merges += std::string(merges.empty() ? "" : ",") + "[\"" + json_escape(level(left)) + "\",\"" +
              json_escape(level(right)) + "\"]";
  }
  const std::string pre = pre_tokenizer.empty()
                              ? R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true})"
                              : pre_tokenizer;
  return "{\"version\":\"1.0\",\"added_tokens\":[" + added_tokens + "]," + extra + "\"pre_tokenizer\":" + pre +
         ",\"decoder\":{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true},"
         "\"model\":{\"type\":\"BPE\",\"dropout\":null,\"unk_token\":null,\"continuing_subword_prefix\":null,"
         "\"end_of_word_suffix\":null,\"fuse_unk\":false,\"byte_fallback\":false,\"ignore_merges\":false,"
         "\"vocab\":{" + vocab + "},\"merges\":[" + merges + "]}}";
}

inline std::string added_token(int id, const std::string& content, bool special, bool lstrip = false,
                               bool rstrip = false, bool single_word = false) {
  const auto flag = [](bool value) { return value ? "true" : "false"; };
  return "{\"id\":" + std::to_string(id) + ",\"content\":\"" + json_escape(content) + "\",\"single_word\":" +
         flag(single_word) + ",\"lstrip\":" + flag(lstrip) + ",\"rstrip\":" + flag(rstrip) +
         ",\"normalized\":false,\"special\":" + flag(special) + "}";
}

// Protobuf wire format, enough to write a SentencePiece ModelProto.
inline std::string varint(uint64_t value) {
  std::string out;
  do {
    uint8_t byte = value & 0x7F;
    value >>= 7;
    if (value) byte |= 0x80;
    out += char(byte);
  } while (value);
  return out;
}
inline std::string field_bytes(int field, const std::string& bytes) { return varint(uint64_t(field) << 3 | 2) + varint(bytes.size()) + bytes; }
inline std::string field_varint(int field, uint64_t value) { return varint(uint64_t(field) << 3) + varint(value); }
inline std::string field_float(int field, float value) {
  std::string out = varint(uint64_t(field) << 3 | 5);
  char bytes[4];
  std::memcpy(bytes, &value, 4);
  return out + std::string(bytes, 4);
}

struct Piece {
  std::string text;
  float score;
  int type;  // 1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte
};

// A BPE SentencePiece model: <unk> <s> </s>, the 256 byte pieces, then merges scored by order.
inline std::vector<Piece> sentencepiece_pieces() {
  std::vector<Piece> pieces = {{"<unk>", 0, 2}, {"<s>", 0, 3}, {"</s>", 0, 3}};
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    pieces.push_back({name, 0, 6});
  }
  const std::string space = "\xe2\x96\x81";
  const std::vector<std::string> normal = {space + "h", "he", space + "he", "ll", space + "hell", "o", space + "hello",
                                           space, "h", "e", "l", "w", "r", "d", space + "w", "or", space + "wor",
                                           space + "world"};
  float score = 0;
  for (const std::string& text : normal) pieces.push_back({text, score -= 1, 1});
  pieces.push_back({"<tag>", 0, 4});
  return pieces;
}

inline std::string sentencepiece_model(int model_type = 2, bool byte_fallback = true) {
  std::string out;
  for (const Piece& piece : sentencepiece_pieces()) {
    out += field_bytes(1, field_bytes(1, piece.text) + field_float(2, piece.score) + field_varint(3, piece.type));
  }
  out += field_bytes(2, field_varint(3, model_type) + field_varint(35, byte_fallback ? 1 : 0));
  out += field_bytes(3, field_bytes(1, "identity") + field_varint(3, 1) + field_varint(4, 0) + field_varint(5, 1));
  return out;
}

// llama2.c's tokenizer.bin in ExecuTorch's layout: <unk> <s> </s>, the byte pieces, then merges.
inline std::vector<std::pair<std::string, float>> llama2c_tokens() {
  std::vector<std::pair<std::string, float>> tokens = {{"<unk>", 0}, {"\n<s>\n", 0}, {"\n</s>\n", 0}};
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    tokens.push_back({name, 0});
  }
  float score = 0;
  for (const char* text : {" h", "he", " he", "ll", " hell", "o", " hello", " ", "h", "e", "l", "w", "r", "d", " w",
                           "or", " wor", " world"}) {
    tokens.push_back({text, score -= 1});
  }
  return tokens;
}

inline std::string int32_bytes(int32_t value) {
  char bytes[4];
  std::memcpy(bytes, &value, 4);
  return std::string(bytes, 4);
}

inline std::string llama2c_file(bool executorch_layout = true) {
  const auto tokens = llama2c_tokens();
  int32_t max_length = 0;
  for (const auto& [text, score] : tokens) max_length = std::max<int32_t>(max_length, int32_t(text.size()));
  std::string out = executorch_layout ? int32_bytes(int32_t(tokens.size())) + int32_bytes(1) + int32_bytes(2) : "";
  out += int32_bytes(max_length);
  for (const auto& [text, score] : tokens) {
    char bytes[4];
    std::memcpy(bytes, &score, 4);
    out += std::string(bytes, 4) + int32_bytes(int32_t(text.size())) + text;
  }
  return out;
}

}  // namespace tokenizer_samples
