// etrt_base's printable_text: bytes from a file shown so that a terminal acts on none of them and
// a log line stays one line.
#include "etrt/base/printable_text.h"

#include <gtest/gtest.h>

using etrt::base::Newlines;
using etrt::base::printable_text;

namespace {

TEST(PrintableText, PlainTextAndValidUnicodeAreKept) {
  EXPECT_EQ(printable_text("aten::add.out"), "aten::add.out");
  EXPECT_EQ(printable_text("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
}

TEST(PrintableText, ControlsAndBackslashesAreEscaped) {
  EXPECT_EQ(printable_text("a\x1b[31mred"), "a\\x1b[31mred");
  EXPECT_EQ(printable_text("tab\there\r"), "tab\\there\\r");
  EXPECT_EQ(printable_text("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable_text("C:\\path"), "C:\\\\path");
}

TEST(PrintableText, NewlinesAreEscapedUnlessKept) {
  EXPECT_EQ(printable_text("one\n[etrt error] forged"), "one\\n[etrt error] forged");
  EXPECT_EQ(printable_text("one\ntwo", Newlines::keep), "one\ntwo");
}

TEST(PrintableText, InvalidUtf8AndUnicodeControlsAreEscaped) {
  EXPECT_EQ(printable_text("a\xFF" "b"), "a\\xffb");
  EXPECT_EQ(printable_text("\xC3"), "\\xc3");
  EXPECT_EQ(printable_text("\xC2\x9B" "31m"), "\\u009b31m");              // C1 CSI
  EXPECT_EQ(printable_text("abc\xE2\x80\xAE" "fed"), "abc\\u202efed");    // right-to-left override
  EXPECT_EQ(printable_text("line\xE2\x80\xA8" "sep"), "line\\u2028sep");  // line separator
}

}  // namespace
