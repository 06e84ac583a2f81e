// How the tokenizers report a bad file or a bad request: etrt::Error with one of etrt's status codes
// and a message that starts with what was being read.
#pragma once

#include <string>
#include <string_view>

#include "etrt/etrt.hpp"

namespace etrt::llm::detail {

[[noreturn]] inline void fail(int32_t code, std::string message) { throw etrt::Error(code, message); }

// A file that is not what it claims to be: "<name>: <format>: <what>".
[[noreturn]] inline void fail_file(std::string_view name, std::string_view format, std::string_view what) {
  fail(ET_ERR_INVALID_FILE, std::string(name) + ": " + std::string(format) + ": " + std::string(what));
}

// A valid file using a feature the tokenizers do not implement.
[[noreturn]] inline void fail_unsupported(std::string_view name, std::string_view format, std::string_view what) {
  fail(ET_ERR_NOT_SUPPORTED, std::string(name) + ": " + std::string(format) + ": " + std::string(what));
}

}  // namespace etrt::llm::detail
