// Runs etrt's tokenizers over cases read as JSON lines, for the parity test against the reference
// Python libraries (test_tokenizer_parity.py):
//   tokenize_tool TOKENIZER_FILE CASES.jsonl
// First output line: {"format", "vocab_size", "bos_id", "eos_id"}. Then one line per case:
//   {"encode": "<hex of the text>", "bos": n, "eos": n}
//       -> {"ids": [...], "pieces": ["<hex of decode(prev, id)>", ...], "text": "<hex of decode(ids)>"}
//   {"decode": [ids...]} -> {"text": "<hex of decode(ids)>", "pieces": [...]}
// or {"error": <etrt status>, "message": "..."} when the tokenizer refused the case.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "etrt/llm/tokenizer.h"

namespace {

using Json = nlohmann::json;

std::string to_hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out += digits[static_cast<unsigned char>(c) >> 4];
    out += digits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

Json pieces(const etrt::llm::Tokenizer& tokenizer, const std::vector<uint64_t>& ids) {
  Json out = Json::array();
  for (size_t i = 0; i < ids.size(); ++i) {
    // The first piece follows nothing: an id no tokenizer has.
    const uint64_t prev = i == 0 ? ~uint64_t{0} : ids[i - 1];
    out.push_back(to_hex(tokenizer.decode(prev, ids[i])));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TOKENIZER_FILE CASES.jsonl\n", argv[0]);
    return 2;
  }
  std::unique_ptr<etrt::llm::Tokenizer> tokenizer;
  try {
    tokenizer = etrt::llm::load_tokenizer(argv[1]);
  } catch (const etrt::Error& error) {
    std::cout << Json{{"error", error.code()}, {"message", error.what()}}.dump() << "\n";
    return 1;
  }
  std::cout << Json{{"format", etrt::llm::tokenizer_format_name(tokenizer->format())},
                    {"vocab_size", tokenizer->vocab_size()},
                    {"bos_id", tokenizer->bos_id()},
                    {"eos_id", tokenizer->eos_id()}}
                   .dump()
            << "\n";
  std::ifstream cases(argv[2]);
  std::string line;
  while (std::getline(cases, line)) {
    const Json request = Json::parse(line);
    Json reply;
    try {
      if (request.contains("encode")) {
        const std::vector<uint64_t> ids = tokenizer->encode(from_hex(request["encode"].get<std::string>()),
                                                            request.value("bos", 0), request.value("eos", 0));
        reply = {{"ids", ids}, {"pieces", pieces(*tokenizer, ids)}, {"text", to_hex(tokenizer->decode(ids))}};
      } else {
        const std::vector<uint64_t> ids = request["decode"].get<std::vector<uint64_t>>();
        reply = {{"text", to_hex(tokenizer->decode(ids))}, {"pieces", pieces(*tokenizer, ids)}};
      }
    } catch (const etrt::Error& error) {
      reply = {{"error", error.code()}, {"message", error.what()}};
    }
    std::cout << reply.dump() << "\n";
  }
  return 0;
}
