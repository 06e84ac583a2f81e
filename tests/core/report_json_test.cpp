// The registry's JSON report (et_report_json) is UTF-8 with every control escaped, whatever bytes
// the names it lists hold: here a refused ETRT_PLUGIN_PATH entry with an escape sequence, invalid
// UTF-8 and a newline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "etrt/base/utf8.h"
#include "etrt/etrt.h"

using ::testing::HasSubstr;

namespace {

TEST(ReportJson, HostileNamesGiveValidUtf8WithControlsEscaped) {
  setenv("ETRT_PLUGIN_PATH", "relative\x1b[31m\xff\nline", 1);
  char* report = et_report_json();
  ASSERT_NE(report, nullptr);
  const std::string json = report;
  et_buffer_free(report);
  // The byte 0xff as Python's surrogateescape decodes it (U+DCFF): lossless, and valid JSON.
  EXPECT_THAT(json, HasSubstr("\"relative\\u001b[31m\\udcff\\nline\""));
  for (size_t at = 0; at < json.size();) {
    char32_t code_point = 0;
    const size_t length = etrt::base::utf8_sequence(std::string_view(json).substr(at), &code_point);
    ASSERT_NE(length, 0u) << "invalid UTF-8 at byte " << at;
    ASSERT_GE(code_point, 0x20u) << "a raw control at byte " << at;
    at += length;
  }
}

}  // namespace
