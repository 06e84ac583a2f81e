#include "json_writer.h"

#include <cmath>
#include <cstdio>

#include "etrt/base/utf8.h"

namespace etrt::tools {
namespace {

void append_escape(std::string& out, uint32_t unit) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(unit & 0xffff));
  out += buffer;
}

}  // namespace

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (size_t at = 0; at < text.size();) {
    const auto c = static_cast<unsigned char>(text[at]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') out += {'\\', static_cast<char>(c)};
      else if (c < 0x20 || c == 0x7f) append_escape(out, c);
      else out += static_cast<char>(c);
      ++at;
      continue;
    }
    char32_t code_point = 0;
    const size_t length = base::utf8_sequence(text.substr(at), &code_point);
    if (length == 0) {
      append_escape(out, 0xfffd);
      ++at;
    } else if (code_point >= 0x10000) {
      append_escape(out, 0xd800 + ((code_point - 0x10000) >> 10));
      append_escape(out, 0xdc00 + ((code_point - 0x10000) & 0x3ff));
      at += length;
    } else {
      append_escape(out, code_point);
      at += length;
    }
  }
  return out + "\"";
}

void JsonWriter::member(std::string_view key) {
  if (!first_) out_ += ',';
  first_ = false;
  if (!key.empty()) out_ += json_string(key) + ':';
}

JsonWriter& JsonWriter::begin_object(std::string_view key) {
  member(key);
  out_ += '{';
  first_ = true;
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  out_ += '}';
  first_ = false;
  return *this;
}

JsonWriter& JsonWriter::begin_array(std::string_view key) {
  member(key);
  out_ += '[';
  first_ = true;
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  out_ += ']';
  first_ = false;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view key, std::string_view value) {
  member(key);
  out_ += json_string(value);
  return *this;
}

JsonWriter& JsonWriter::number(std::string_view key, double value) {
  member(key);
  if (!std::isfinite(value)) {
    out_ += "null";
    return *this;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", value);
  out_ += buffer;
  return *this;
}

JsonWriter& JsonWriter::integer(std::string_view key, int64_t value) {
  member(key);
  out_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::boolean(std::string_view key, bool value) {
  member(key);
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null(std::string_view key) {
  member(key);
  out_ += "null";
  return *this;
}

}  // namespace etrt::tools
