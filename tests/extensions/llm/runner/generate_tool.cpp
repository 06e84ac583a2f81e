// Greedy (or seeded) generation with etrt's TextRunner, for test_runner_parity.py:
//   generate_tool MODEL.pte TOKENIZER PROMPT MAX_NEW_TOKENS
// prints one JSON line {"ids": [...], "pieces": [...]} (pieces: the streamed bytes of each token,
// as latin-1 code points so partial UTF-8 sequences survive), or {"error": ..., "code": ...}.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "etrt/llm/text_runner.h"

namespace {

std::string as_latin1_json_string(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s MODEL.pte TOKENIZER PROMPT MAX_NEW_TOKENS\n", argv[0]);
    return 2;
  }
  try {
    etrt::llm::TextRunner runner(argv[1], argv[2]);
    etrt::llm::GenerationConfig config;
    config.temperature = 0.0f;
    config.echo = false;
    config.max_new_tokens = std::atoi(argv[4]);
    nlohmann::json pieces = nlohmann::json::array();
    runner.generate(argv[3], config, [&](const std::string& piece) { pieces.push_back(as_latin1_json_string(piece)); });
    nlohmann::json result{{"ids", runner.generated_tokens()}, {"pieces", pieces}};
    std::cout << result.dump() << std::endl;
  } catch (const etrt::Error& e) {
    std::cout << nlohmann::json{{"error", e.what()}, {"code", e.code()}}.dump() << std::endl;
    return 1;
  }
  return 0;
}
