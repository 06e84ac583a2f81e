// etrt_base's UTF-8 reader: RFC 3629's well-formed sequences, and nothing else.
#include "etrt/base/utf8.h"

#include <gtest/gtest.h>

#include <string>

using etrt::base::repair_utf8;
using etrt::base::utf8_sequence;

namespace {

size_t length_of(std::string_view text, char32_t* code_point = nullptr) {
  char32_t ignored = 0;
  return utf8_sequence(text, code_point != nullptr ? code_point : &ignored);
}

TEST(Utf8, WellFormedSequencesGiveTheirLengthAndCodePoint) {
  char32_t code_point = 0;
  EXPECT_EQ(length_of("a", &code_point), 1u);
  EXPECT_EQ(code_point, U'a');
  EXPECT_EQ(length_of("\xC3\xA9", &code_point), 2u);
  EXPECT_EQ(code_point, U'\u00E9');
  EXPECT_EQ(length_of("\xE2\x82\xAC", &code_point), 3u);
  EXPECT_EQ(code_point, U'\u20AC');
  EXPECT_EQ(length_of("\xF0\x9F\x98\x80", &code_point), 4u);
  EXPECT_EQ(code_point, U'\U0001F600');
  EXPECT_EQ(length_of("\xF4\x8F\xBF\xBF", &code_point), 4u);  // U+10FFFF, the last code point
  EXPECT_EQ(code_point, U'\U0010FFFF');
}

TEST(Utf8, IllFormedSequencesAreNone) {
  EXPECT_EQ(length_of(""), 0u);
  EXPECT_EQ(length_of("\x80"), 0u);              // a continuation byte first
  EXPECT_EQ(length_of("\xC0\xAF"), 0u);          // overlong '/'
  EXPECT_EQ(length_of("\xE0\x80\xAF"), 0u);      // overlong, three bytes
  EXPECT_EQ(length_of("\xED\xA0\x80"), 0u);      // a surrogate
  EXPECT_EQ(length_of("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(length_of("\xC3"), 0u);              // truncated
  EXPECT_EQ(length_of("\xE2\x82" "a"), 0u);      // a bad continuation byte
  EXPECT_EQ(length_of("\xFF"), 0u);
}

TEST(Utf8, RepairReplacesEachBadByteAndKeepsTheRest) {
  EXPECT_EQ(repair_utf8("aten::add.out"), "aten::add.out");
  EXPECT_EQ(repair_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(repair_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(repair_utf8("\xC3"), "\xEF\xBF\xBD");
  EXPECT_EQ(repair_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
