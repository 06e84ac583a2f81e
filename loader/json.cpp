#include "loader/json.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <unordered_set>

namespace etrt::loader {

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& member : object) {
    if (member.key == key) return &member.value;
  }
  return nullptr;
}

const char* JsonValue::type_name() const {
  switch (type) {
    case Type::Null: return "null";
    case Type::Bool: return "boolean";
    case Type::Number: return "number";
    case Type::String: return "string";
    case Type::Array: return "array";
    case Type::Object: return "object";
  }
  return "unknown";
}

namespace {

constexpr int kMaxDepth = 64;

// Recursive-descent parser. Columns count bytes, not code points, which is
// what editors that show byte offsets report and keeps the count cheap.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  bool parse_document(JsonValue* out) {
    skip_ws();
    if (!parse_value(out, 0)) return false;
    skip_ws();
    if (pos_ != text_.size()) return fail("unexpected " + describe_current() + " after the JSON value");
    return true;
  }

  const std::string& error() const { return error_; }
  int error_line() const { return error_line_; }
  int error_column() const { return error_column_; }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  void skip_ws() {
    while (!at_end()) {
      char c = peek();
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      advance();
    }
  }

  bool fail(std::string message) { return fail_at(std::move(message), line_, column_); }

  bool fail_at(std::string message, int line, int column) {
    if (error_.empty()) {
      error_ = std::move(message);
      error_line_ = line;
      error_column_ = column;
    }
    return false;
  }

  std::string describe_current() const {
    if (at_end()) return "end of input";
    unsigned char c = static_cast<unsigned char>(peek());
    char buf[32];
    if (c >= 0x21 && c < 0x7f) {
      std::snprintf(buf, sizeof buf, "character '%c'", c);
    } else {
      std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
    }
    return buf;
  }

  bool expect_literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      return fail("invalid literal, expected '" + std::string(word) + "'");
    }
    for (size_t i = 0; i < word.size(); ++i) advance();
    // "truex" must not parse as true followed by garbage silently.
    if (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')) {
      return fail("invalid literal, expected '" + std::string(word) + "'");
    }
    return true;
  }

  bool parse_value(JsonValue* out, int depth) {
    out->line = line_;
    out->column = column_;
    if (at_end()) return fail("unexpected end of input, expected a value");
    switch (peek()) {
      case '{': return parse_object(out, depth + 1);
      case '[': return parse_array(out, depth + 1);
      case '"':
        out->type = JsonValue::Type::String;
        return parse_string(&out->string);
      case 't':
        out->type = JsonValue::Type::Bool;
        out->boolean = true;
        return expect_literal("true");
      case 'f':
        out->type = JsonValue::Type::Bool;
        out->boolean = false;
        return expect_literal("false");
      case 'n':
        out->type = JsonValue::Type::Null;
        return expect_literal("null");
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parse_number(out);
        return fail("unexpected " + describe_current() + ", expected a value");
    }
  }

  bool parse_object(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 64");
    out->type = JsonValue::Type::Object;
    advance();  // '{'
    skip_ws();
    if (!at_end() && peek() == '}') {
      advance();
      return true;
    }
    std::unordered_set<std::string> seen;
    for (;;) {
      skip_ws();
      if (at_end() || peek() != '"') {
        return fail("expected string key in object, found " + describe_current());
      }
      int key_line = line_, key_column = column_;
      std::string key;
      if (!parse_string(&key)) return false;
      if (!seen.insert(key).second) {
        return fail_at("duplicate key '" + key + "'", key_line, key_column);
      }
      skip_ws();
      if (at_end() || peek() != ':') return fail("expected ':' after object key, found " + describe_current());
      advance();
      skip_ws();
      out->object.push_back(JsonMember{std::move(key), JsonValue{}});
      out->key_lines.push_back(key_line);
      if (!parse_value(&out->object.back().value, depth)) return false;
      skip_ws();
      if (!at_end() && peek() == ',') {
        advance();
        continue;
      }
      if (!at_end() && peek() == '}') {
        advance();
        return true;
      }
      return fail("expected ',' or '}' after object member, found " + describe_current());
    }
  }

  bool parse_array(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 64");
    out->type = JsonValue::Type::Array;
    advance();  // '['
    skip_ws();
    if (!at_end() && peek() == ']') {
      advance();
      return true;
    }
    for (;;) {
      skip_ws();
      out->array.emplace_back();
      if (!parse_value(&out->array.back(), depth)) return false;
      skip_ws();
      if (!at_end() && peek() == ',') {
        advance();
        continue;
      }
      if (!at_end() && peek() == ']') {
        advance();
        return true;
      }
      return fail("expected ',' or ']' after array element, found " + describe_current());
    }
  }

  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Reads the four hex digits after "\u"; the cursor is on the first digit.
  bool read_hex4(unsigned* out) {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      if (at_end()) return fail("unterminated \\u escape");
      int h = hex_value(peek());
      if (h < 0) return fail("invalid hex digit in \\u escape: " + describe_current());
      v = v * 16 + static_cast<unsigned>(h);
      advance();
    }
    *out = v;
    return true;
  }

  static void append_utf8(std::string* s, unsigned cp) {
    if (cp < 0x80) {
      s->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool parse_unicode_escape(std::string* out) {
    int esc_line = line_, esc_column = column_ - 1;  // at the backslash
    advance();  // 'u'
    unsigned cp = 0;
    if (!read_hex4(&cp)) return false;
    char buf[64];
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      std::snprintf(buf, sizeof buf, "lone low surrogate \\u%04X", cp);
      return fail_at(buf, esc_line, esc_column);
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (text_.substr(pos_, 2) != "\\u") {
        std::snprintf(buf, sizeof buf, "lone high surrogate \\u%04X", cp);
        return fail_at(buf, esc_line, esc_column);
      }
      advance();
      advance();
      unsigned low = 0;
      if (!read_hex4(&low)) return false;
      if (low < 0xDC00 || low > 0xDFFF) {
        std::snprintf(buf, sizeof buf, "lone high surrogate \\u%04X", cp);
        return fail_at(buf, esc_line, esc_column);
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, cp);
    return true;
  }

  // Bytes >= 0x80 are copied unchanged: validating UTF-8 is not our job.
  bool parse_string(std::string* out) {
    advance();  // opening quote
    for (;;) {
      if (at_end()) return fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(peek());
      if (c == '"') {
        advance();
        return true;
      }
      if (c < 0x20) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "control character 0x%02x in string", c);
        return fail(buf);
      }
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        advance();
        continue;
      }
      advance();  // backslash
      if (at_end()) return fail("unterminated string");
      char e = peek();
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u':
          if (!parse_unicode_escape(out)) return false;
          continue;
        default:
          return fail("invalid escape sequence in string: backslash followed by " + describe_current());
      }
      advance();
    }
  }

  bool parse_number(JsonValue* out) {
    out->type = JsonValue::Type::Number;
    size_t start = pos_;
    bool has_fraction_or_exponent = false;
    if (peek() == '-') advance();
    if (at_end() || !std::isdigit(static_cast<unsigned char>(peek()))) {
      return fail("expected digit in number, found " + describe_current());
    }
    size_t int_start = pos_;
    if (peek() == '0') {
      advance();
      if (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) {
        return fail("leading zeros are not allowed in numbers");
      }
    } else {
      while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) advance();
    }
    size_t int_end = pos_;
    size_t frac_start = pos_, frac_end = pos_;
    if (!at_end() && peek() == '.') {
      has_fraction_or_exponent = true;
      advance();
      frac_start = pos_;
      if (at_end() || !std::isdigit(static_cast<unsigned char>(peek()))) {
        return fail("expected digit after decimal point, found " + describe_current());
      }
      while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) advance();
      frac_end = pos_;
    }
    long long exponent = 0;
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      has_fraction_or_exponent = true;
      advance();
      bool negative = false;
      if (!at_end() && (peek() == '+' || peek() == '-')) {
        negative = peek() == '-';
        advance();
      }
      if (at_end() || !std::isdigit(static_cast<unsigned char>(peek()))) {
        return fail("expected digit in exponent, found " + describe_current());
      }
      while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) {
        if (exponent < 1000000000) exponent = exponent * 10 + (peek() - '0');
        advance();
      }
      if (negative) exponent = -exponent;
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    double d = 0;
    auto r = std::from_chars(first, last, d);
    if (r.ec == std::errc::result_out_of_range) {
      // Underflow becomes zero; overflow is an error rather than infinity.
      long long magnitude = exponent;
      std::string_view int_digits = text_.substr(int_start, int_end - int_start);
      if (int_digits != "0") {
        magnitude += static_cast<long long>(int_digits.size()) - 1;
      } else {
        size_t zeros = 0;
        while (frac_start + zeros < frac_end && text_[frac_start + zeros] == '0') ++zeros;
        magnitude -= static_cast<long long>(zeros) + 1;
      }
      if (magnitude > 0) {
        return fail_at("number out of range", out->line, out->column);
      }
      d = text_[start] == '-' ? -0.0 : 0.0;
    } else if (r.ec != std::errc() || r.ptr != last) {
      return fail_at("invalid number", out->line, out->column);
    }
    out->number = d;
    if (!has_fraction_or_exponent) {
      int64_t i = 0;
      auto ri = std::from_chars(first, last, i);
      if (ri.ec == std::errc() && ri.ptr == last) {
        out->is_integer = true;
        out->integer = i;
      }
    }
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  std::string error_;
  int error_line_ = 0;
  int error_column_ = 0;
};

}  // namespace

JsonParseResult parse_json(std::string_view text) {
  JsonParseResult result;
  try {
    Parser parser(text);
    if (parser.parse_document(&result.value)) {
      result.ok = true;
    } else {
      result.error = parser.error();
      result.line = parser.error_line();
      result.column = parser.error_column();
      result.value = JsonValue{};
    }
  } catch (...) {
    // Only allocation can throw here; building the message may fail too.
    result = JsonParseResult{};
    try {
      result.error = "out of memory while parsing JSON";
    } catch (...) {
    }
  }
  return result;
}

}  // namespace etrt::loader
