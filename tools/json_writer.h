// JSON for `etrt run --json` and `etrt inspect --json`: one object built in order, written as ASCII.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace etrt::tools {

// A JSON string of `text`, pure ASCII: every code point past 0x7e and every control is a \u escape,
// and a byte that starts no UTF-8 sequence is U+FFFD (as in `etrt plugins --json`), so a terminal
// showing the JSON acts on nothing in it.
std::string json_string(std::string_view text);

// Appends comma-separated members and items; the caller opens and closes objects and arrays.
class JsonWriter {
 public:
  JsonWriter& begin_object(std::string_view key = {});
  JsonWriter& end_object();
  JsonWriter& begin_array(std::string_view key = {});
  JsonWriter& end_array();
  JsonWriter& string(std::string_view key, std::string_view value);
  JsonWriter& number(std::string_view key, double value);  // NaN and infinities as null
  JsonWriter& integer(std::string_view key, int64_t value);
  JsonWriter& boolean(std::string_view key, bool value);
  JsonWriter& null(std::string_view key);
  const std::string& text() const { return out_; }

 private:
  // A comma before every member or item but the first of its container, then "key": in an object.
  void member(std::string_view key);
  std::string out_;
  bool first_ = true;
};

}  // namespace etrt::tools
