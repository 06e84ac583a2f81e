#include "loader/json_schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>
// GCC 12 reports a false -Wmaybe-uninitialized inside <regex> when built with
// sanitizers; keep it from drowning real warnings.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#else
#include <regex>
#endif

namespace etrt::loader {
namespace {

using Type = JsonValue::Type;

constexpr size_t kMaxShownChars = 80;

void append_json(const JsonValue& v, std::string* out);

// A schema's patterns compiled once per thread: compiling a std::regex costs far more than
// matching it (it was two thirds of validating a manifest). Bounded for arbitrary schemas.
const std::regex* compiled_pattern(const std::string& pattern) {
  constexpr size_t kMaxCached = 64;
  thread_local std::unordered_map<std::string, std::regex> cache;
  if (auto it = cache.find(pattern); it != cache.end()) return &it->second;
  std::regex re;
  try {
    re.assign(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error&) {
    return nullptr;
  }
  if (cache.size() >= kMaxCached) cache.clear();
  return &cache.emplace(pattern, std::move(re)).first->second;
}

void append_number(const JsonValue& v, std::string* out) {
  char buf[64];
  std::to_chars_result r;
  if (v.is_integer) {
    r = std::to_chars(buf, buf + sizeof buf, v.integer);
  } else {
    r = std::to_chars(buf, buf + sizeof buf, v.number);
  }
  out->append(buf, r.ptr);
}

void append_quoted(const std::string& s, std::string* out) {
  out->push_back('"');
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(ch);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out->append(buf);
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('"');
}

void append_json(const JsonValue& v, std::string* out) {
  switch (v.type) {
    case Type::Null: out->append("null"); break;
    case Type::Bool: out->append(v.boolean ? "true" : "false"); break;
    case Type::Number: append_number(v, out); break;
    case Type::String: append_quoted(v.string, out); break;
    case Type::Array:
      out->push_back('[');
      for (size_t i = 0; i < v.array.size(); ++i) {
        if (i) out->push_back(',');
        append_json(v.array[i], out);
        if (out->size() > kMaxShownChars) return;
      }
      out->push_back(']');
      break;
    case Type::Object:
      out->push_back('{');
      for (size_t i = 0; i < v.object.size(); ++i) {
        if (i) out->push_back(',');
        append_quoted(v.object[i].key, out);
        out->push_back(':');
        append_json(v.object[i].value, out);
        if (out->size() > kMaxShownChars) return;
      }
      out->push_back('}');
      break;
  }
}

std::string shorten(std::string s) {
  if (s.size() > kMaxShownChars) {
    s.resize(kMaxShownChars);
    s += "...";
  }
  return s;
}

// Strings are shown in single quotes (matching the manifest error style);
// everything else as compact JSON.
std::string show(const JsonValue& v) {
  if (v.type == Type::String) return "'" + shorten(v.string) + "'";
  std::string s;
  append_json(v, &s);
  return shorten(std::move(s));
}

std::string show_number(const JsonValue& v) {
  std::string s;
  append_number(v, &s);
  return s;
}

// JSON Schema equality: numbers compare by value (1 == 1.0), objects ignore
// member order.
bool json_equal(const JsonValue& a, const JsonValue& b);

std::vector<const JsonMember*> sorted_members(const JsonValue& object) {
  std::vector<const JsonMember*> members;
  for (const auto& member : object.object) members.push_back(&member);
  std::sort(members.begin(), members.end(), [](auto* a, auto* b) { return a->key < b->key; });
  return members;
}

// A strict weak order under which equal values (json_equal) are equivalent.
// Numbers order by their double value, so two distinct integers that round to
// one double are equivalent but not equal: callers confirm with json_equal.
int json_order(const JsonValue& a, const JsonValue& b) {
  if (a.type != b.type) return a.type < b.type ? -1 : 1;
  switch (a.type) {
    case Type::Null: return 0;
    case Type::Bool: return int(a.boolean) - int(b.boolean);
    case Type::Number: return a.number < b.number ? -1 : b.number < a.number ? 1 : 0;
    case Type::String: return a.string.compare(b.string) < 0 ? -1 : a.string == b.string ? 0 : 1;
    case Type::Array:
      for (size_t i = 0; i < a.array.size() && i < b.array.size(); ++i)
        if (int c = json_order(a.array[i], b.array[i]); c != 0) return c;
      return a.array.size() < b.array.size() ? -1 : a.array.size() > b.array.size() ? 1 : 0;
    case Type::Object: {
      if (a.object.size() != b.object.size()) return a.object.size() < b.object.size() ? -1 : 1;
      auto left = sorted_members(a), right = sorted_members(b);
      for (size_t i = 0; i < left.size(); ++i) {
        if (int c = left[i]->key.compare(right[i]->key); c != 0) return c < 0 ? -1 : 1;
        if (int c = json_order(left[i]->value, right[i]->value); c != 0) return c;
      }
      return 0;
    }
  }
  return 0;
}

// duplicate[i]: items[i] equals an earlier item. O(n log n): sort indices,
// then compare each item only with the distinct values seen in its run of
// equivalent items (one, unless numbers differ beyond double precision).
std::vector<bool> find_duplicates(const std::vector<JsonValue>& items) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return json_order(items[a], items[b]) < 0; });
  std::vector<bool> duplicate(items.size(), false);
  std::vector<size_t> distinct;  // first occurrences within the current run
  for (size_t k = 0; k < order.size(); ++k) {
    const JsonValue& item = items[order[k]];
    if (k == 0 || json_order(items[order[k - 1]], item) != 0) distinct.clear();
    bool seen = std::any_of(distinct.begin(), distinct.end(), [&](size_t d) { return json_equal(items[d], item); });
    if (seen) duplicate[order[k]] = true;  // stable sort: the earlier index came first
    else distinct.push_back(order[k]);
  }
  return duplicate;
}

bool json_equal(const JsonValue& a, const JsonValue& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case Type::Null: return true;
    case Type::Bool: return a.boolean == b.boolean;
    case Type::Number:
      if (a.is_integer && b.is_integer) return a.integer == b.integer;
      return a.number == b.number;
    case Type::String: return a.string == b.string;
    case Type::Array:
      if (a.array.size() != b.array.size()) return false;
      for (size_t i = 0; i < a.array.size(); ++i) {
        if (!json_equal(a.array[i], b.array[i])) return false;
      }
      return true;
    case Type::Object:
      if (a.object.size() != b.object.size()) return false;
      for (const auto& [key, value] : a.object) {
        const JsonValue* other = b.find(key);
        if (!other || !json_equal(value, *other)) return false;
      }
      return true;
  }
  return false;
}

// Returns <0, 0, >0; exact for two int64 values, double otherwise.
int compare_numbers(const JsonValue& a, const JsonValue& b) {
  if (a.is_integer && b.is_integer) return (a.integer > b.integer) - (a.integer < b.integer);
  return (a.number > b.number) - (a.number < b.number);
}

// JSON Schema lengths count code points, not bytes.
size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

bool type_matches(const std::string& name, const JsonValue& v) {
  if (name == "integer") return v.type == Type::Number && v.is_integer;
  return name == v.type_name();
}

// Non-negative integer keyword value, or -1 when absent/malformed.
long long count_keyword(const JsonValue& schema, std::string_view key) {
  const JsonValue* k = schema.find(key);
  if (!k || k->type != Type::Number || !k->is_integer || k->integer < 0) return -1;
  return k->integer;
}

std::string member_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

class Validator {
 public:
  explicit Validator(std::vector<SchemaViolation>* out) : out_(out) {}

  void validate(const JsonValue& schema, const JsonValue& v, const std::string& path) {
    if (schema.type == Type::Bool) {
      if (!schema.boolean) report(v.line, path, "value is not allowed here");
      return;
    }
    if (schema.type != Type::Object) return;  // malformed schema: nothing to check

    // A wrong type makes the remaining keywords meaningless; stop there.
    if (!check_type(schema, v, path)) return;
    check_enum_const(schema, v, path);
    switch (v.type) {
      case Type::Number: check_number(schema, v, path); break;
      case Type::String: check_string(schema, v, path); break;
      case Type::Array: check_array(schema, v, path); break;
      case Type::Object: check_object(schema, v, path); break;
      default: break;
    }
  }

 private:
  void report(int line, const std::string& field, std::string message) {
    out_->push_back(SchemaViolation{line, field, std::move(message)});
  }

  bool check_type(const JsonValue& schema, const JsonValue& v, const std::string& path) {
    const JsonValue* type = schema.find("type");
    if (!type) return true;
    std::string expected;
    if (type->type == Type::String) {
      if (type_matches(type->string, v)) return true;
      expected = type->string;
    } else if (type->type == Type::Array) {
      for (const JsonValue& t : type->array) {
        if (t.type != Type::String) continue;
        if (type_matches(t.string, v)) return true;
        if (!expected.empty()) expected += " or ";
        expected += t.string;
      }
      if (expected.empty()) return true;
    } else {
      return true;
    }
    const char* got = v.type_name();
    // "expected integer, got number" alone would be confusing for 1.5.
    std::string detail = v.type == Type::Number ? " " + show_number(v) : "";
    report(v.line, path, "expected " + expected + ", got " + got + detail);
    return false;
  }

  void check_enum_const(const JsonValue& schema, const JsonValue& v, const std::string& path) {
    if (const JsonValue* e = schema.find("enum"); e && e->type == Type::Array) {
      bool found = std::any_of(e->array.begin(), e->array.end(),
                               [&](const JsonValue& option) { return json_equal(option, v); });
      if (!found) {
        std::string options;
        append_json(*e, &options);
        report(v.line, path, "value " + show(v) + " is not one of " + shorten(std::move(options)));
      }
    }
    if (const JsonValue* c = schema.find("const"); c && !json_equal(*c, v)) {
      report(v.line, path, "value " + show(v) + " is not the required constant " + show(*c));
    }
  }

  void check_number(const JsonValue& schema, const JsonValue& v, const std::string& path) {
    if (const JsonValue* m = schema.find("minimum"); m && m->type == Type::Number) {
      if (compare_numbers(v, *m) < 0) {
        report(v.line, path, "value " + show_number(v) + " is less than minimum " + show_number(*m));
      }
    }
    if (const JsonValue* m = schema.find("maximum"); m && m->type == Type::Number) {
      if (compare_numbers(v, *m) > 0) {
        report(v.line, path, "value " + show_number(v) + " is greater than maximum " + show_number(*m));
      }
    }
  }

  void check_string(const JsonValue& schema, const JsonValue& v, const std::string& path) {
    size_t len = utf8_length(v.string);
    if (long long n = count_keyword(schema, "minLength"); n >= 0 && len < static_cast<size_t>(n)) {
      report(v.line, path,
             show(v) + " is shorter than " + std::to_string(n) + " character" + (n == 1 ? "" : "s"));
    }
    if (long long n = count_keyword(schema, "maxLength"); n >= 0 && len > static_cast<size_t>(n)) {
      report(v.line, path,
             show(v) + " is longer than " + std::to_string(n) + " character" + (n == 1 ? "" : "s"));
    }
    if (const JsonValue* p = schema.find("pattern"); p && p->type == Type::String) {
      const std::regex* compiled = compiled_pattern(p->string);
      if (compiled == nullptr) {
        report(v.line, path, "schema pattern '" + p->string + "' is not a valid regular expression");
        return;
      }
      const std::regex& re = *compiled;
      try {
        // JSON Schema patterns are unanchored: search, not match.
        if (!std::regex_search(v.string, re)) {
          report(v.line, path, show(v) + " does not match pattern " + p->string);
        }
      } catch (const std::regex_error&) {
        // libstdc++ gives up on very long inputs (error_complexity/error_stack).
        report(v.line, path, show(v) + " is too long to match against pattern " + p->string);
      }
    }
  }

  void check_array(const JsonValue& schema, const JsonValue& v, const std::string& path) {
    size_t n = v.array.size();
    if (long long k = count_keyword(schema, "minItems"); k >= 0 && n < static_cast<size_t>(k)) {
      report(v.line, path,
             "array has " + std::to_string(n) + " item" + (n == 1 ? "" : "s") + ", at least " +
                 std::to_string(k) + " required");
    }
    if (long long k = count_keyword(schema, "maxItems"); k >= 0 && n > static_cast<size_t>(k)) {
      report(v.line, path,
             "array has " + std::to_string(n) + " items, at most " + std::to_string(k) + " allowed");
    }
    const JsonValue* items = schema.find("items");
    const JsonValue* unique = schema.find("uniqueItems");
    bool check_unique = unique && unique->type == Type::Bool && unique->boolean;
    std::vector<bool> duplicate = check_unique ? find_duplicates(v.array) : std::vector<bool>();
    for (size_t i = 0; i < n; ++i) {
      const JsonValue& item = v.array[i];
      std::string item_path = path + "[" + std::to_string(i) + "]";
      if (items) validate(*items, item, item_path);
      if (check_unique && duplicate[i]) report(item.line, item_path, "duplicate item " + show(item));
    }
  }

  void check_object(const JsonValue& schema, const JsonValue& v, const std::string& path) {
    if (const JsonValue* req = schema.find("required"); req && req->type == Type::Array) {
      for (const JsonValue& name : req->array) {
        if (name.type == Type::String && !v.find(name.string)) {
          report(v.line, member_path(path, name.string), "missing required field '" + name.string + "'");
        }
      }
    }
    const JsonValue* props = schema.find("properties");
    if (props && props->type != Type::Object) props = nullptr;
    const JsonValue* additional = schema.find("additionalProperties");
    for (size_t i = 0; i < v.object.size(); ++i) {
      const auto& [key, value] = v.object[i];
      std::string field = member_path(path, key);
      if (const JsonValue* sub = props ? props->find(key) : nullptr) {
        validate(*sub, value, field);
        continue;
      }
      if (!additional) continue;
      int key_line = i < v.key_lines.size() ? v.key_lines[i] : value.line;
      if (additional->type == Type::Bool) {
        if (!additional->boolean) report(key_line, field, "unknown field '" + key + "'");
      } else {
        validate(*additional, value, field);
      }
    }
  }

  std::vector<SchemaViolation>* out_;
};

}  // namespace

std::vector<SchemaViolation> validate_json(const JsonValue& schema, const JsonValue& instance) {
  std::vector<SchemaViolation> violations;
  try {
    Validator(&violations).validate(schema, instance, "");
    std::stable_sort(violations.begin(), violations.end(),
                     [](const SchemaViolation& a, const SchemaViolation& b) { return a.line < b.line; });
  } catch (const std::exception& e) {
    // Allocation failure or a regex engine limit (e.g. error_complexity).
    try {
      violations.push_back(SchemaViolation{instance.line, "", std::string("validation aborted: ") + e.what()});
    } catch (...) {
    }
  }
  return violations;
}

}  // namespace etrt::loader
