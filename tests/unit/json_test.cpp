#include "loader/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace etrt::loader {
namespace {

using ::testing::HasSubstr;
using Type = JsonValue::Type;

JsonValue parse_ok(std::string_view text) {
  JsonParseResult r = parse_json(text);
  EXPECT_TRUE(r.ok) << "input: " << text << "\nerror: " << r.error << " at " << r.line << ":" << r.column;
  return r.value;
}

// Expects a parse failure with `fragment` in the message at line:column.
void expect_error(std::string_view text, const std::string& fragment, int line, int column) {
  JsonParseResult r = parse_json(text);
  EXPECT_FALSE(r.ok) << "input: " << text;
  EXPECT_THAT(r.error, HasSubstr(fragment)) << "input: " << text;
  EXPECT_EQ(r.line, line) << "input: " << text << "\nerror: " << r.error;
  EXPECT_EQ(r.column, column) << "input: " << text << "\nerror: " << r.error;
}

TEST(JsonTest, ScalarsAndTypes) {
  EXPECT_EQ(parse_ok("null").type, Type::Null);
  JsonValue t = parse_ok(" true ");
  EXPECT_EQ(t.type, Type::Bool);
  EXPECT_TRUE(t.boolean);
  EXPECT_FALSE(parse_ok("false").boolean);
  EXPECT_EQ(parse_ok("\"hi\"").string, "hi");
  EXPECT_STREQ(parse_ok("null").type_name(), "null");
  EXPECT_STREQ(parse_ok("true").type_name(), "boolean");
  EXPECT_STREQ(parse_ok("1").type_name(), "number");
  EXPECT_STREQ(parse_ok("\"\"").type_name(), "string");
  EXPECT_STREQ(parse_ok("[]").type_name(), "array");
  EXPECT_STREQ(parse_ok("{}").type_name(), "object");
}

TEST(JsonTest, Numbers) {
  JsonValue v = parse_ok("42");
  EXPECT_TRUE(v.is_integer);
  EXPECT_EQ(v.integer, 42);
  EXPECT_EQ(v.number, 42.0);

  v = parse_ok("-9223372036854775808");
  EXPECT_TRUE(v.is_integer);
  EXPECT_EQ(v.integer, INT64_MIN);

  v = parse_ok("9223372036854775808");  // one past INT64_MAX
  EXPECT_FALSE(v.is_integer);
  EXPECT_DOUBLE_EQ(v.number, 9223372036854775808.0);

  v = parse_ok("1.0");
  EXPECT_FALSE(v.is_integer);
  EXPECT_EQ(v.number, 1.0);

  v = parse_ok("1e2");
  EXPECT_FALSE(v.is_integer);
  EXPECT_EQ(v.number, 100.0);

  EXPECT_DOUBLE_EQ(parse_ok("-0.5E-3").number, -0.0005);
  EXPECT_TRUE(parse_ok("-0").is_integer);
  EXPECT_EQ(parse_ok("1e-400").number, 0.0);  // underflow rounds to zero
  EXPECT_EQ(parse_ok("0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
                     "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
                     "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
                     "00000000000000000000000000000000000000000000000000000001")
                .number,
            0.0);
}

TEST(JsonTest, NumberRejections) {
  expect_error("01", "leading zeros", 1, 2);
  expect_error("-", "expected digit in number", 1, 2);
  expect_error("1.", "expected digit after decimal point", 1, 3);
  expect_error("1.e3", "expected digit after decimal point", 1, 3);
  expect_error("1e", "expected digit in exponent", 1, 3);
  expect_error("1e+", "expected digit in exponent", 1, 4);
  expect_error("+1", "unexpected character '+'", 1, 1);
  expect_error(".5", "unexpected character '.'", 1, 1);
  expect_error("1e400", "number out of range", 1, 1);
  expect_error("[0, -1e999]", "number out of range", 1, 5);
  expect_error("0x10", "unexpected character 'x' after the JSON value", 1, 2);
  expect_error("NaN", "unexpected character 'N'", 1, 1);
  expect_error("Infinity", "unexpected character 'I'", 1, 1);
}

TEST(JsonTest, LinesAndColumnsOfValues) {
  const char* text =
      "{\n"
      "  \"name\": \"demo\",\n"
      "  \"list\": [1,\n"
      "\t\t2, {\"x\": null}],\n"
      "  \"flag\": true\n"
      "}";
  JsonValue v = parse_ok(text);
  EXPECT_EQ(v.line, 1);
  EXPECT_EQ(v.column, 1);
  ASSERT_EQ(v.object.size(), 3u);
  EXPECT_EQ(v.object[0].key, "name");
  EXPECT_EQ(v.object[1].key, "list");
  EXPECT_EQ(v.object[2].key, "flag");
  EXPECT_EQ(v.key_lines, (std::vector<int>{2, 3, 5}));

  const JsonValue* name = v.find("name");
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(name->line, 2);
  EXPECT_EQ(name->column, 11);

  const JsonValue* list = v.find("list");
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->line, 3);
  EXPECT_EQ(list->column, 11);
  ASSERT_EQ(list->array.size(), 3u);
  EXPECT_EQ(list->array[0].line, 3);
  EXPECT_EQ(list->array[0].column, 12);
  EXPECT_EQ(list->array[1].line, 4);
  EXPECT_EQ(list->array[1].column, 3);  // a tab counts as one column
  EXPECT_EQ(list->array[2].line, 4);
  EXPECT_EQ(list->array[2].column, 6);
  const JsonValue* x = list->array[2].find("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->type, Type::Null);
  EXPECT_EQ(x->line, 4);
  EXPECT_EQ(x->column, 12);

  EXPECT_EQ(v.find("flag")->line, 5);
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(JsonTest, CarriageReturnDoesNotStartALine) {
  JsonValue v = parse_ok("[\r\n1,\r\n  2]");
  ASSERT_EQ(v.array.size(), 2u);
  EXPECT_EQ(v.array[0].line, 2);
  EXPECT_EQ(v.array[0].column, 1);
  EXPECT_EQ(v.array[1].line, 3);
  EXPECT_EQ(v.array[1].column, 3);
}

TEST(JsonTest, StringEscapes) {
  EXPECT_EQ(parse_ok(R"("a\"b\\c\/d\be\ff\ng\rh\ti")").string, "a\"b\\c/d\be\ff\ng\rh\ti");
  EXPECT_EQ(parse_ok(R"("\u0041\u00e9\u20AC")").string, "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(parse_ok(R"("\uD83D\uDE00")").string, "\xF0\x9F\x98\x80");  // U+1F600
  EXPECT_EQ(parse_ok(R"("\uDBFF\uDFFF")").string, "\xF4\x8F\xBF\xBF");  // U+10FFFF
  std::string nul = parse_ok(R"("a\u0000b")").string;
  EXPECT_EQ(nul, std::string("a\0b", 3));
  // Raw non-ASCII bytes, even invalid UTF-8, pass through unchanged.
  EXPECT_EQ(parse_ok("\"\xC3\xA9\xFF\x80\"").string, "\xC3\xA9\xFF\x80");
}

TEST(JsonTest, StringRejections) {
  expect_error(R"("\x")", "invalid escape", 1, 3);
  expect_error(R"("\')", "invalid escape", 1, 3);
  expect_error(R"("\u12")", "invalid hex digit in \\u escape", 1, 6);
  expect_error(R"("\u12G4")", "invalid hex digit", 1, 6);
  expect_error(R"("\uD800")", "lone high surrogate \\uD800", 1, 2);
  expect_error(R"("ab\uD800x")", "lone high surrogate", 1, 4);
  expect_error(R"("\uD800\u0041")", "lone high surrogate", 1, 2);
  expect_error(R"("\uDC00")", "lone low surrogate \\uDC00", 1, 2);
  expect_error("\"a\tb\"", "control character 0x09 in string", 1, 3);
  expect_error("\"a\nb\"", "control character 0x0a in string", 1, 3);
  expect_error(std::string_view("\"a\0b\"", 5), "control character 0x00", 1, 3);
  expect_error("\"abc", "unterminated string", 1, 5);
  expect_error("\"abc\\", "unterminated string", 1, 6);
}

TEST(JsonTest, StructureRejections) {
  expect_error("", "unexpected end of input", 1, 1);
  expect_error("   \n  ", "unexpected end of input", 2, 3);
  expect_error("{\"a\": 1 \"b\": 2}", "expected ',' or '}' after object member", 1, 9);
  expect_error("{\n  \"a\": 1,\n}", "expected string key in object, found character '}'", 3, 1);
  expect_error("{\"a\" 1}", "expected ':' after object key", 1, 6);
  expect_error("{a: 1}", "expected string key", 1, 2);
  expect_error("[1 2]", "expected ',' or ']' after array element", 1, 4);
  expect_error("[1,]", "unexpected character ']', expected a value", 1, 4);
  expect_error("[", "unexpected end of input", 1, 2);
  expect_error("{\"a\":", "unexpected end of input", 1, 6);
  expect_error("{} x", "unexpected character 'x' after the JSON value", 1, 4);
  expect_error("1 2", "after the JSON value", 1, 3);
  expect_error("tru", "invalid literal, expected 'true'", 1, 1);
  expect_error("nul", "invalid literal, expected 'null'", 1, 1);
  expect_error("truex", "invalid literal", 1, 5);
  expect_error("[True]", "unexpected character 'T'", 1, 2);
  expect_error("\xEF\xBB\xBF{}", "unexpected byte 0xef", 1, 1);  // no BOM
  expect_error("// c\n{}", "unexpected character '/'", 1, 1);
}

TEST(JsonTest, DuplicateKeys) {
  expect_error("{\n  \"x\": 1,\n  \"y\": 2,\n  \"x\": 3\n}", "duplicate key 'x'", 4, 3);
  // Same key in different objects is fine.
  JsonValue v = parse_ok(R"({"x": {"x": 1}, "y": [{"x": 2}, {"x": 3}]})");
  EXPECT_EQ(v.find("x")->find("x")->integer, 1);
  // Keys are compared after unescaping.
  expect_error(R"({"a": 1, "\u0061": 2})", "duplicate key 'a'", 1, 10);
}

TEST(JsonTest, NestingDepthLimit) {
  std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(parse_json(ok).ok);
  std::string deep = std::string(65, '[') + std::string(65, ']');
  expect_error(deep, "nesting deeper than 64", 1, 65);
  std::string objects;
  for (int i = 0; i < 65; ++i) objects += "{\"a\":";
  objects += "1" + std::string(65, '}');
  expect_error(objects, "nesting deeper than 64", 1, 1 + 64 * 5);
  // A huge depth must fail cleanly rather than overflow the stack.
  std::string huge(1000000, '[');
  EXPECT_FALSE(parse_json(huge).ok);
}

TEST(JsonTest, ObjectKeepsDocumentOrder) {
  JsonValue v = parse_ok(R"({"z": 1, "a": 2, "m": 3})");
  ASSERT_EQ(v.object.size(), 3u);
  EXPECT_EQ(v.object[0].key, "z");
  EXPECT_EQ(v.object[1].key, "a");
  EXPECT_EQ(v.object[2].key, "m");
  EXPECT_EQ(v.find("m")->integer, 3);
}

TEST(JsonTest, FailedParseLeavesEmptyValue) {
  JsonParseResult r = parse_json("[1, 2, x]");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.value.type, Type::Null);
  EXPECT_TRUE(r.value.array.empty());
}

TEST(JsonTest, RandomMutationsNeverCrash) {
  const std::string seeds[] = {
      R"({"name": "demo", "version": 3, "ops": ["aten::add.out", "aten::mul"], "x": {"y": [1.5e3, -0, null, true, false]}})",
      R"(["\u00e9\uD83D\uDE00", "a\nb", {"k": {}}, [], [[[]]], 12345678901234567890])",
      "{\n  \"library\": \"libfoo.so\",\n  \"sha256\": \"00ff\"\n}",
  };
  const char interesting[] = "{}[]\",:\\u0123456789eE+-.tfn \n\t\r\x00\x7f\x80\xff";
  std::mt19937 rng(12345);
  int parsed_ok = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    std::string s = seeds[iter % 3];
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      size_t pos = s.empty() ? 0 : rng() % s.size();
      switch (rng() % 5) {
        case 0:  // replace with an interesting byte
          if (!s.empty()) s[pos] = interesting[rng() % (sizeof interesting - 1)];
          break;
        case 1:  // replace with a random byte
          if (!s.empty()) s[pos] = static_cast<char>(rng());
          break;
        case 2:  // insert
          s.insert(s.begin() + static_cast<long>(pos), interesting[rng() % (sizeof interesting - 1)]);
          break;
        case 3:  // delete
          if (!s.empty()) s.erase(pos, 1);
          break;
        case 4:  // truncate
          s.resize(pos);
          break;
      }
    }
    JsonParseResult r = parse_json(s);
    if (r.ok) {
      ++parsed_ok;
    } else {
      EXPECT_FALSE(r.error.empty());
      EXPECT_GE(r.line, 1);
      EXPECT_GE(r.column, 1);
    }
  }
  // Fully random bytes as well.
  for (int iter = 0; iter < 2000; ++iter) {
    std::string s(rng() % 64, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    (void)parse_json(s);
  }
  EXPECT_GT(parsed_ok, 0);  // the mutations are not all fatal
}

}  // namespace
}  // namespace etrt::loader
