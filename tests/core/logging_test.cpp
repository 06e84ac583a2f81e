// Log lines quote names chosen by whoever made a file or set the environment: each message is one
// line of printable text. Here an ETRT_PLUGIN_PATH entry holding an escape sequence, invalid UTF-8
// and a newline followed by a forged log line is refused with a warning.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "etrt/etrt.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {

TEST(Logging, AWarningQuotingHostileBytesIsOnePrintableLine) {
  setenv("ETRT_PLUGIN_PATH", "relative\x1b[31m\xff\n[etrt error] forged", 1);
  ::testing::internal::CaptureStderr();
  et_plugin_count();  // discovery reads ETRT_PLUGIN_PATH and refuses the relative entry
  const std::string logged = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(logged, HasSubstr("relative\\x1b[31m\\xff\\n[etrt error] forged"));
  EXPECT_THAT(logged, Not(HasSubstr("\x1b"))) << "an escape sequence reached the terminal";
  EXPECT_THAT(logged, Not(HasSubstr("\xff"))) << "invalid UTF-8 reached the terminal";
  EXPECT_THAT(logged, Not(HasSubstr("\n[etrt error] forged"))) << "the message forged a log line";
  EXPECT_EQ(logged.find('\n'), logged.size() - 1) << "one message, one line: " << logged;
}

}  // namespace
