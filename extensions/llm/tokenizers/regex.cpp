#include "regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "error.h"
#include "unicode.h"

namespace etrt::llm::detail {

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof(buffer)) < 0) return "PCRE2 error " + std::to_string(code);
  return reinterpret_cast<const char*>(buffer);
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

}  // namespace

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Compiled() { pcre2_code_free(code); }
};

Regex::Regex(std::string_view pattern, std::string_view what) : compiled_(std::make_unique<Compiled>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // UTF and UCP: characters, not bytes, and Unicode meanings of \s \w \d and POSIX classes.
  // NO_UTF_CHECK is not set: pcre2_compile checks the pattern's own UTF-8.
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                  PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (compiled_->code == nullptr) {
    fail(ET_ERR_INVALID_FILE, std::string(what) + ": the regular expression does not compile at offset " +
                                  std::to_string(offset) + ": " + pcre2_message(error));
  }
  // JIT where PCRE2 has it for this CPU; the interpreter otherwise, with the same results.
  compiled_->jit = pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

std::vector<Match> Regex::find_all(std::string_view text) const {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr));
  if (!data) fail(ET_ERR_OUT_OF_MEMORY, "regular expression: no memory for match data");
  std::vector<Match> matches;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  // The callers checked the text's UTF-8 once; PCRE2 need not check it again at every offset.
  uint32_t options = PCRE2_NO_UTF_CHECK;
  while (pos <= text.size()) {
    int rc = pcre2_match(compiled_->code, subject, text.size(), pos, options, data.get(), nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // A long input exhausted the JIT's stack: the interpreter keeps its backtracking on the heap.
      rc = pcre2_match(compiled_->code, subject, text.size(), pos, options | PCRE2_NO_JIT, data.get(), nullptr);
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) fail(ET_ERR_INVALID_ARGUMENT, "regular expression match failed: " + pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    const size_t start = ovector[0], end = ovector[1];
    if (end > start) {
      matches.push_back({start, end});
      pos = end;
    } else {
      // An empty match: look again one character further on.
      if (start >= text.size()) break;
      const size_t length = utf8_char_length(text.substr(start));
      pos = start + (length == 0 ? 1 : length);
    }
  }
  return matches;
}

}  // namespace etrt::llm::detail
