// Text etrt did not write itself (names from a program, a manifest or a plugin, messages quoting
// them, paths) made safe to print on a terminal or in a log line: such bytes are chosen by whoever
// made the file, a terminal acts on escape sequences, and a newline would forge a log line.
#pragma once

#include <string>
#include <string_view>

namespace etrt::base {

enum class Newlines { escape, keep };

// `text` with everything a terminal could act on, and every byte that is not UTF-8, shown as an
// escape: C0 controls and DEL as \n \t \r or \xNN, C1 controls and the Unicode controls that
// reorder or break lines (bidirectional overrides and isolates, U+2028/U+2029) as \uNNNN, a byte
// of invalid UTF-8 as \xNN, and a backslash as \\ (so an escape in the output is never ambiguous).
// Newlines::keep leaves '\n' as it is, for messages of several lines.
std::string printable_text(std::string_view text, Newlines newlines = Newlines::escape);

}  // namespace etrt::base
