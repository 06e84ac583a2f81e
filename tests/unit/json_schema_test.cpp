#include "loader/json_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "loader/json.h"

namespace etrt::loader {
namespace {

using ::testing::HasSubstr;

JsonValue parse(std::string_view text) {
  JsonParseResult r = parse_json(text);
  EXPECT_TRUE(r.ok) << r.error << " at " << r.line << ":" << r.column << " in " << text;
  return r.value;
}

std::vector<SchemaViolation> check(std::string_view schema, std::string_view instance) {
  return validate_json(parse(schema), parse(instance));
}

// Expects exactly one violation with the given field, line and message fragment.
void expect_one(std::string_view schema, std::string_view instance, const std::string& field, int line,
                const std::string& fragment) {
  auto v = check(schema, instance);
  ASSERT_EQ(v.size(), 1u) << "instance: " << instance;
  EXPECT_EQ(v[0].field, field);
  EXPECT_EQ(v[0].line, line);
  EXPECT_THAT(v[0].message, HasSubstr(fragment));
}

TEST(JsonSchemaTest, TypeKeyword) {
  expect_one(R"({"type": "string"})", "3", "", 1, "expected string, got number");
  expect_one(R"({"type": "object"})", "[]", "", 1, "expected object, got array");
  expect_one(R"({"type": "boolean"})", "null", "", 1, "expected boolean, got null");
  expect_one(R"({"type": "integer"})", "1.5", "", 1, "expected integer, got number 1.5");
  expect_one(R"({"type": "integer"})", "1.0", "", 1, "expected integer, got number");
  expect_one(R"({"type": ["string", "null"]})", "true", "", 1, "expected string or null, got boolean");
  EXPECT_TRUE(check(R"({"type": "integer"})", "-7").empty());
  EXPECT_TRUE(check(R"({"type": "number"})", "7").empty());
  EXPECT_TRUE(check(R"({"type": "number"})", "7.25").empty());
  EXPECT_TRUE(check(R"({"type": ["string", "null"]})", "null").empty());
  EXPECT_TRUE(check(R"({"type": "array"})", "[]").empty());
  EXPECT_TRUE(check(R"({})", R"({"anything": [1]})").empty());
}

TEST(JsonSchemaTest, TypeMismatchStopsFurtherChecksOnThatValue) {
  expect_one(R"({"type": "string", "minLength": 3, "pattern": "^a"})", "12", "", 1, "expected string");
}

TEST(JsonSchemaTest, RequiredAndUnknownFields) {
  const char* schema = R"({
    "type": "object",
    "required": ["library", "name"],
    "properties": {"library": {"type": "string"}, "name": {"type": "string"}},
    "additionalProperties": false
  })";
  const char* instance =
      "{\n"
      "  \"name\": \"x\",\n"
      "  \"librar\": \"libx.so\"\n"
      "}";
  auto v = check(schema, instance);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].message, "missing required field 'library'");
  EXPECT_EQ(v[0].field, "library");
  EXPECT_EQ(v[0].line, 1);
  EXPECT_EQ(v[1].message, "unknown field 'librar'");
  EXPECT_EQ(v[1].field, "librar");
  EXPECT_EQ(v[1].line, 3);
}

TEST(JsonSchemaTest, AdditionalPropertiesAsSchema) {
  const char* schema = R"({"properties": {"a": {}}, "additionalProperties": {"type": "integer"}})";
  EXPECT_TRUE(check(schema, R"({"a": "s", "b": 1, "c": 2})").empty());
  expect_one(schema, "{\"a\": 1,\n \"b\": \"x\"}", "b", 2, "expected integer, got string");
  // additionalProperties true and absent both allow anything.
  EXPECT_TRUE(check(R"({"additionalProperties": true})", R"({"z": 1})").empty());
  // Without "properties", every member is additional.
  expect_one(R"({"additionalProperties": false})", R"({"z": 1})", "z", 1, "unknown field 'z'");
}

TEST(JsonSchemaTest, NestedPathsAndLines) {
  const char* schema = R"({
    "type": "object",
    "properties": {
      "provides": {
        "type": "object",
        "properties": {
          "operators": {"type": "array", "items": {"type": "string", "pattern": "^[a-z_]+::[a-z_.]+$"}}
        }
      }
    }
  })";
  const char* instance =
      "{\n"
      "  \"provides\": {\n"
      "    \"operators\": [\n"
      "      \"aten::add.out\",\n"
      "      \"aten::mul\",\n"
      "      \"aten::sub\",\n"
      "      7\n"
      "    ]\n"
      "  }\n"
      "}";
  auto v = check(schema, instance);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].field, "provides.operators[3]");
  EXPECT_EQ(v[0].line, 7);
  EXPECT_EQ(v[0].message, "expected string, got number 7");
}

TEST(JsonSchemaTest, EnumAndConst) {
  expect_one(R"({"enum": [1]})", "3", "", 1, "value 3 is not one of [1]");
  expect_one(R"({"enum": ["cpu", "cuda"]})", R"("tpu")", "", 1, R"(value 'tpu' is not one of ["cpu","cuda"])");
  EXPECT_TRUE(check(R"({"enum": [1, "a", null]})", "1.0").empty());  // numbers compare by value
  EXPECT_TRUE(check(R"({"enum": [{"a": 1, "b": [true]}]})", R"({"b": [true], "a": 1})").empty());
  expect_one(R"({"const": 1})", "2", "", 1, "value 2 is not the required constant 1");
  expect_one(R"({"const": "x"})", R"("y")", "", 1, "value 'y' is not the required constant 'x'");
  EXPECT_TRUE(check(R"({"const": [1, 2]})", "[1, 2]").empty());
  expect_one(R"({"const": [1, 2]})", "[2, 1]", "", 1, "is not the required constant [1,2]");
}

TEST(JsonSchemaTest, MinimumMaximum) {
  const char* schema = R"({"minimum": 1, "maximum": 10.5})";
  EXPECT_TRUE(check(schema, "1").empty());
  EXPECT_TRUE(check(schema, "10.5").empty());
  expect_one(schema, "0", "", 1, "value 0 is less than minimum 1");
  expect_one(schema, "11", "", 1, "value 11 is greater than maximum 10.5");
  expect_one(schema, "0.5", "", 1, "value 0.5 is less than minimum 1");
  // int64 comparisons stay exact beyond 2^53.
  expect_one(R"({"maximum": 9007199254740992})", "9007199254740993", "", 1, "greater than maximum");
  EXPECT_TRUE(check(R"({"minimum": 1})", R"("not a number")").empty());
}

TEST(JsonSchemaTest, StringLength) {
  const char* schema = R"({"minLength": 2, "maxLength": 3})";
  EXPECT_TRUE(check(schema, R"("ab")").empty());
  EXPECT_TRUE(check(schema, R"("abc")").empty());
  expect_one(schema, R"("a")", "", 1, "'a' is shorter than 2 characters");
  expect_one(schema, R"("abcd")", "", 1, "'abcd' is longer than 3 characters");
  // Lengths count code points: "é€😀" is 3 characters but 9 bytes.
  EXPECT_TRUE(check(schema, "\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"").empty());
}

TEST(JsonSchemaTest, Pattern) {
  expect_one(R"({"pattern": "^[a-z]+$"})", R"("Foo Bar")", "", 1, "'Foo Bar' does not match pattern ^[a-z]+$");
  EXPECT_TRUE(check(R"({"pattern": "^[a-z]+$"})", R"("foo")").empty());
  // Unanchored patterns search anywhere in the string.
  EXPECT_TRUE(check(R"({"pattern": "o+b"})", R"("foobar")").empty());
  expect_one(R"({"pattern": "^o+b"})", R"("foobar")", "", 1, "does not match");
  // An invalid pattern is reported, not thrown.
  expect_one(R"({"pattern": "([a-z"})", R"("x")", "", 1, "not a valid regular expression");
}

TEST(JsonSchemaTest, ArrayKeywords) {
  const char* schema = R"({"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": true})";
  EXPECT_TRUE(check(schema, R"(["a", "b"])").empty());
  expect_one(schema, "[]", "", 1, "array has 0 items, at least 1 required");
  expect_one(schema, "[1, 2, 3, 4]", "", 1, "array has 4 items, at most 3 allowed");
  expect_one(schema, "[\n\"aten::add.out\",\n\"aten::mul\",\n\"aten::add.out\"\n]", "[2]", 4,
             "duplicate item 'aten::add.out'");
  expect_one(schema, "[1, 1.0]", "[1]", 1, "duplicate item 1");
  expect_one(schema, R"([{"a": 1}, {"a": 1}])", "[1]", 1, R"(duplicate item {"a":1})");
  EXPECT_TRUE(check(R"({"uniqueItems": false})", "[1, 1]").empty());
}

TEST(JsonSchemaTest, UniqueItemsEdgeCasesStayExact) {
  const char* schema = R"({"uniqueItems": true})";
  // Distinct integers that round to the same double are not duplicates; equal ones are.
  EXPECT_TRUE(check(schema, "[9007199254740992, 9007199254740993]").empty());
  expect_one(schema, "[9007199254740993, 1, 9007199254740993]", "[2]", 1, "duplicate item");
  expect_one(schema, R"([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}])", "[1]", 1, "duplicate item");
  EXPECT_TRUE(check(schema, R"([[1, 2], [2, 1], [1], "1", 1, true, null, {}])").empty());
  // Every later copy is reported, each once, in document order.
  auto v = check(schema, R"(["b", "a", "b", "a", "b"])");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].field, "[2]");
  EXPECT_EQ(v[1].field, "[3]");
  EXPECT_EQ(v[2].field, "[4]");
}

// Issue 15 #5: uniqueItems was quadratic (an 810 KB manifest took 32-73 s).
// 20k names: 13.7 s pairwise, 0.03 s sorted (measured on the shared 2-core machine).
TEST(JsonSchemaTest, UniqueItemsOnABigArrayIsFast) {
  std::string instance = "[";
  for (int i = 0; i < 20000; ++i) instance += (i ? ",\"aten::op_" : "\"aten::op_") + std::to_string(i) + ".out\"";
  instance += ",\"aten::op_7.out\"]";
  JsonValue schema = parse(R"({"type": "array", "uniqueItems": true, "items": {"type": "string"}})");
  JsonValue value = parse(instance);
  auto start = std::chrono::steady_clock::now();
  std::vector<SchemaViolation> v = validate_json(schema, value);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].field, "[20000]");
  EXPECT_LT(seconds, 2.0) << "uniqueItems over 20001 items";
}

TEST(JsonSchemaTest, ReportsAllViolationsInDocumentOrder) {
  const char* schema = R"({
    "type": "object",
    "required": ["name", "version"],
    "properties": {
      "name": {"type": "string", "pattern": "^[a-z]+$"},
      "version": {"type": "integer", "minimum": 1},
      "tags": {"type": "array", "items": {"enum": ["a", "b"]}}
    },
    "additionalProperties": false
  })";
  const char* instance =
      "{\n"
      "  \"tags\": [\"a\", \"c\"],\n"
      "  \"name\": \"Bad Name\",\n"
      "  \"extra\": 1,\n"
      "  \"version\": 0\n"
      "}";
  auto v = check(schema, instance);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].field, "tags[1]");
  EXPECT_EQ(v[0].line, 2);
  EXPECT_EQ(v[0].message, R"(value 'c' is not one of ["a","b"])");
  EXPECT_EQ(v[1].field, "name");
  EXPECT_EQ(v[1].line, 3);
  EXPECT_EQ(v[2].field, "extra");
  EXPECT_EQ(v[2].line, 4);
  EXPECT_EQ(v[3].field, "version");
  EXPECT_EQ(v[3].line, 5);
  EXPECT_EQ(v[3].message, "value 0 is less than minimum 1");
}

TEST(JsonSchemaTest, MissingRequiredInNestedObjectUsesObjectLine) {
  const char* schema = R"({"properties": {"build": {"required": ["compiler"]}}})";
  expect_one(schema, "{\n  \"build\": {\n    \"flags\": []\n  }\n}", "build.compiler", 2,
             "missing required field 'compiler'");
}

TEST(JsonSchemaTest, IgnoredAndUnknownKeywords) {
  const char* schema = R"({
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.com/manifest",
    "title": "Manifest",
    "description": "test",
    "x-custom": {"whatever": true},
    "type": "string"
  })";
  EXPECT_TRUE(check(schema, R"("ok")").empty());
  expect_one(schema, "1", "", 1, "expected string");
}

TEST(JsonSchemaTest, BooleanSchemas) {
  EXPECT_TRUE(check("true", "[1, {}]").empty());
  expect_one("false", "1", "", 1, "not allowed");
  expect_one(R"({"properties": {"x": false}})", "{\n\"x\": 1}", "x", 2, "not allowed");
}

}  // namespace
}  // namespace etrt::loader
