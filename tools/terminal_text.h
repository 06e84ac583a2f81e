// Text the command line tool did not write itself (names from a program, a manifest or a plugin,
// error messages quoting them, paths) made safe to print: etrt_base's printable_text, which the
// log lines of libetrt use too.
#pragma once

#include <string>
#include <string_view>

#include "etrt/base/printable_text.h"

namespace etrt::tools {

using Newlines = etrt::base::Newlines;

inline std::string terminal_text(std::string_view text, Newlines newlines = Newlines::escape) {
  return etrt::base::printable_text(text, newlines);
}

}  // namespace etrt::tools
