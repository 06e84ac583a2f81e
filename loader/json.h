// Strict JSON (RFC 8259) parser that remembers where every value starts, so
// that manifest diagnostics can point at the line of the offending field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace etrt::loader {

struct JsonMember;

struct JsonValue {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  int line = 0, column = 0;  // where the value starts (1-based)
  bool boolean = false;
  double number = 0;
  bool is_integer = false;  // written without fraction/exponent and fits int64
  int64_t integer = 0;
  std::string string;  // decoded (\uXXXX incl. surrogate pairs -> UTF-8)
  std::vector<JsonValue> array;
  // Document order. A struct of its own, not std::pair: clang with libstdc++ 12
  // in C++20 rejects a pair of an incomplete type inside that type's definition.
  std::vector<JsonMember> object;
  std::vector<int> key_lines;  // line of each object key, parallel to `object`

  const JsonValue* find(std::string_view key) const;  // nullptr if absent
  const char* type_name() const;  // "null","boolean","number","string","array","object"
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

struct JsonParseResult {
  bool ok = false;
  JsonValue value;
  std::string error;
  int line = 0, column = 0;  // position of the error when !ok
};

JsonParseResult parse_json(std::string_view text);

}  // namespace etrt::loader
