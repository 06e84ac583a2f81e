// The pre-tokenizers' regular expressions: PCRE2 in UTF mode with Unicode properties for \s, \w, \d
// (PCRE2_UCP), so \p{L}, \p{N}, (?i:...) and the lookahead of `\s+(?!\S)` behave as in the
// backtracking engines the reference tokenizers use (Oniguruma in Hugging Face tokenizers,
// fancy-regex in tiktoken).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace etrt::llm::detail {

struct Match {
  size_t start = 0, end = 0;  // byte offsets
};

class Regex {
 public:
  // Throws ET_ERR_INVALID_FILE naming `what` (where the pattern came from) when it does not compile.
  Regex(std::string_view pattern, std::string_view what);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  // Every non-overlapping match in `text` (valid UTF-8), left to right. Empty matches are skipped.
  std::vector<Match> find_all(std::string_view text) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace etrt::llm::detail
