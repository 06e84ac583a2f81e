// Truncated, corrupted and hostile tokenizer files: each is refused with an etrt::Error whose code
// and message name the problem, never a crash, and the process goes on using tokenizers after it.
#include <gtest/gtest.h>

#include <random>

#include "etrt/llm/tokenizer.h"
#include "tokenizer_samples.h"

namespace {

using etrt::llm::parse_tokenizer;
namespace samples = tokenizer_samples;

struct Refusal {
  int32_t code = ET_OK;
  std::string message;
};

Refusal refusal(const std::string& content, const std::string& config = "") {
  try {
    parse_tokenizer(content, "bad", {}, config);
  } catch (const etrt::Error& error) {
    return {error.code(), error.what()};
  }
  return {};
}

#define EXPECT_REFUSED(content, expected_code, text)                                            \
  do {                                                                                          \
    const Refusal r = refusal(content);                                                         \
    EXPECT_EQ(r.code, expected_code) << r.message;                                              \
    EXPECT_NE(r.message.find(text), std::string::npos) << "message: " << r.message;            \
  } while (0)

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(MalformedFiles, NotATokenizer) {
  EXPECT_REFUSED("", ET_ERR_INVALID_FILE, "not a tokenizer file");
  EXPECT_REFUSED("PK\x03\x04 a zip archive", ET_ERR_INVALID_FILE, "not a tokenizer file");
}

TEST(MalformedFiles, Tiktoken) {
  const std::string good = samples::tiktoken_file();
  EXPECT_REFUSED(good + "aGVsbG8=\n", ET_ERR_INVALID_FILE, "has no space");
  EXPECT_REFUSED(good + "a#b= 300\n", ET_ERR_INVALID_FILE, "not base64");
  EXPECT_REFUSED(good + "aGk= 12x\n", ET_ERR_INVALID_FILE, "not a decimal number");
  EXPECT_REFUSED(good + "aGk= 99999999999\n", ET_ERR_INVALID_FILE, "ranks must be 0..N-1");
  EXPECT_REFUSED(good + "aGk= 5\n", ET_ERR_INVALID_FILE, "rank 5 is given twice");
  EXPECT_REFUSED(good + samples::base64("he") + " 268\n", ET_ERR_INVALID_FILE, "given twice");
  EXPECT_REFUSED(replace(good, "AA== 0\n", ""), ET_ERR_INVALID_FILE, "ranks must be 0..N-1");
}

TEST(MalformedFiles, TokenizerJson) {
  const std::string good = samples::tokenizer_json();
  EXPECT_REFUSED(good.substr(0, good.size() / 2), ET_ERR_INVALID_FILE, "not valid JSON");
  EXPECT_REFUSED("{\"added_tokens\": []}", ET_ERR_INVALID_FILE, "'model' is missing");
  EXPECT_REFUSED(replace(good, "\"h\":104", "\"h\":-4"), ET_ERR_INVALID_FILE, "is not a token id");
  EXPECT_REFUSED(replace(good, "[\"h\",\"e\"]", "[\"h\",\"zz\"]"), ET_ERR_INVALID_FILE, "'zz', which is not in model.vocab");
  EXPECT_REFUSED(replace(good, "[\"h\",\"e\"]", "[\"h\"]"), ET_ERR_INVALID_FILE, "model.merges[0]");
  EXPECT_REFUSED(replace(good, "\"type\":\"BPE\"", "\"type\":\"WordPiece\""), ET_ERR_NOT_SUPPORTED, "WordPiece");
  EXPECT_REFUSED(replace(good, "\"dropout\":null", "\"dropout\":0.1"), ET_ERR_NOT_SUPPORTED, "dropout");
  EXPECT_REFUSED(samples::tokenizer_json("", "\"normalizer\":{\"type\":\"Lowercase\"},"), ET_ERR_NOT_SUPPORTED,
                 "'normalizer' is a normalizer of type 'Lowercase'");
  EXPECT_REFUSED(samples::tokenizer_json("", "", "{\"type\":\"Metaspace\"}"), ET_ERR_NOT_SUPPORTED, "Metaspace");
  EXPECT_REFUSED(samples::tokenizer_json("", "", R"({"type":"Split","pattern":{"Regex":"(unclosed"},"behavior":"Isolated"})"),
                 ET_ERR_INVALID_FILE, "does not compile");
  EXPECT_REFUSED(samples::tokenizer_json("{\"id\": 1}"), ET_ERR_INVALID_FILE, "'added_tokens[0].content' is missing");
  const Refusal config = refusal(good, R"({"bos_token": "<nope>"})");
  EXPECT_EQ(config.code, ET_ERR_INVALID_FILE);
  EXPECT_NE(config.message.find("bos_token '<nope>' is not an added token"), std::string::npos) << config.message;
}

TEST(MalformedFiles, SentencePiece) {
  const std::string good = samples::sentencepiece_model();
  EXPECT_REFUSED(good.substr(0, good.size() - 5), ET_ERR_INVALID_FILE, "truncated");
  // A piece message claiming 2 GB.
  EXPECT_REFUSED("\x0a\xff\xff\xff\xff\x07" + good, ET_ERR_INVALID_FILE, "runs past the end");
  EXPECT_REFUSED("\x0a\x02\x18\x09", ET_ERR_INVALID_FILE, "piece type 9");
  EXPECT_REFUSED(good + samples::field_bytes(1, samples::field_bytes(1, "he") + samples::field_varint(3, 1)),
                 ET_ERR_INVALID_FILE, "'he' is defined twice");
  EXPECT_REFUSED(samples::field_bytes(1, samples::field_bytes(1, "a")), ET_ERR_INVALID_FILE, "no unknown piece");
  EXPECT_REFUSED(good + samples::field_bytes(2, samples::field_varint(3, 3)), ET_ERR_NOT_SUPPORTED, "WORD or CHAR");
  EXPECT_REFUSED(good + samples::field_bytes(3, samples::field_bytes(2, std::string("\xff\xff\xff\x00zz", 6))),
                 ET_ERR_INVALID_FILE, "character map's trie size");
}

TEST(MalformedFiles, Llama2c) {
  const std::string good = samples::llama2c_file(true);
  EXPECT_REFUSED(good.substr(0, good.size() - 3), ET_ERR_INVALID_FILE, "truncated");
  // A header declaring 60 million tokens in a file of a few kilobytes: refused before any allocation.
  EXPECT_REFUSED(samples::int32_bytes(60000000) + good.substr(4), ET_ERR_INVALID_FILE, "needs more bytes");
  std::string huge_length = good;
  const std::string first_length = samples::int32_bytes(5);  // <unk>'s length, after its score
  huge_length.replace(20, 4, samples::int32_bytes(0x40000000));
  EXPECT_REFUSED(huge_length, ET_ERR_INVALID_FILE, "outside 0..max_token_length");
}

// Every prefix of every sample file, and random byte changes to them: an error or a tokenizer that
// works, nothing else (ASan and UBSan builds run the same test).
TEST(MalformedFiles, TruncationsAndCorruptionsNeverCrash) {
  const std::vector<std::string> files = {samples::tiktoken_file(), samples::tokenizer_json(),
                                          samples::sentencepiece_model(), samples::sentencepiece_model(1),
                                          samples::llama2c_file(true), samples::llama2c_file(false)};
  std::mt19937 random(27);
  size_t refused = 0, loaded = 0;
  const auto attempt = [&](const std::string& content) {
    try {
      const auto tokenizer = parse_tokenizer(content, "fuzzed");
      const std::vector<uint64_t> ids = tokenizer->encode("hello world \xC3\xA9 <|eot_id|>", 1, 1);
      for (uint64_t id : ids) tokenizer->decode(0, id);
      tokenizer->decode(ids);
      ++loaded;
    } catch (const etrt::Error& error) {
      EXPECT_NE(error.code(), ET_OK);
      EXPECT_GT(std::string(error.what()).size(), 10u);
      ++refused;
    }
  };
  for (const std::string& file : files) {
    const size_t step = std::max<size_t>(1, file.size() / 1500);
    for (size_t length = 0; length < file.size(); length += step) attempt(file.substr(0, length));
    for (int round = 0; round < 1500; ++round) {
      std::string corrupted = file;
      const int changes = 1 + static_cast<int>(random() % 4);
      for (int i = 0; i < changes; ++i) corrupted[random() % corrupted.size()] = static_cast<char>(random());
      attempt(corrupted);
    }
  }
  EXPECT_GT(refused, 1000u);
  // The process is still usable: a good file loads and encodes.
  EXPECT_EQ(parse_tokenizer(samples::tiktoken_file(), "good")->encode("hello"), std::vector<uint64_t>{259});
  RecordProperty("refused", static_cast<int>(refused));
  RecordProperty("loaded", static_cast<int>(loaded));
}

}  // namespace
