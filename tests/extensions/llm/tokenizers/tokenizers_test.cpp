// The tokenizers' behaviour on small files written in memory (tokenizer_samples.h), with ids worked
// out by hand from each format's rules. Parity with the reference libraries on real, trained
// tokenizers is test_tokenizer_parity.py's.
#include <gtest/gtest.h>

#include "etrt/llm/tokenizer.h"
#include "tokenizer_samples.h"

namespace {

using etrt::llm::parse_tokenizer;
using etrt::llm::Tokenizer;
using etrt::llm::TokenizerFormat;
using Ids = std::vector<uint64_t>;
namespace samples = tokenizer_samples;

int32_t error_code(const std::function<void()>& body) {
  try {
    body();
  } catch (const etrt::Error& error) {
    return error.code();
  }
  return ET_OK;
}

std::unique_ptr<Tokenizer> tiktoken() { return parse_tokenizer(samples::tiktoken_file(), "sample.tiktoken"); }

TEST(Tiktoken, EncodesWithRanksAndLlama3Pattern) {
  const auto tokenizer = tiktoken();
  EXPECT_EQ(tokenizer->format(), TokenizerFormat::kTiktoken);
  EXPECT_EQ(tokenizer->vocab_size(), 268u + 256u);  // 268 ranks, Llama 3's 256 special tokens
  EXPECT_EQ(tokenizer->encode("hello world"), (Ids{259, 265}));
  // "hellohe" is one pre-token: its bytes merge lowest rank first, "he" (256) twice, then "ll".
  EXPECT_EQ(tokenizer->encode("hellohe"), (Ids{259, 256}));
  // \s+(?!\S) leaves the last space of a run to the word after it: "a", "  ", " b".
  EXPECT_EQ(tokenizer->encode("a   b"), (Ids{97, 266, 32, 98}));
}

TEST(Tiktoken, SpecialTokensInsideTextBosAndEos) {
  const auto tokenizer = tiktoken();
  EXPECT_EQ(tokenizer->bos_id(), 268u);  // <|begin_of_text|>
  EXPECT_EQ(tokenizer->eos_id(), 269u);  // <|end_of_text|>
  EXPECT_EQ(tokenizer->special_token_id("<|eot_id|>"), 277u);
  EXPECT_EQ(tokenizer->special_token_id("hello"), std::nullopt);
  EXPECT_EQ(tokenizer->encode("hello<|eot_id|>world"), (Ids{259, 277, 119, 262, 108, 100}));
  EXPECT_EQ(tokenizer->encode("hello", 1, 2), (Ids{268, 259, 269, 269}));
  EXPECT_EQ(tokenizer->decode(0, 277), "<|eot_id|>");
  EXPECT_EQ(error_code([&] { tokenizer->encode("x", -1, 0); }), ET_ERR_INVALID_ARGUMENT);
}

TEST(Tiktoken, DecodesBytePiecesAndSequencesLossily) {
  const auto tokenizer = tiktoken();
  const Ids ids = tokenizer->encode("\xC3\xA9");  // é: two byte tokens, a character split between them
  ASSERT_EQ(ids, (Ids{0xC3, 0xA9}));
  EXPECT_EQ(tokenizer->decode(0, ids[0]), "\xC3");
  EXPECT_EQ(tokenizer->decode(ids[0], ids[1]), "\xA9");
  EXPECT_EQ(tokenizer->decode(Ids{0xC3}), "\xEF\xBF\xBD");
  EXPECT_EQ(tokenizer->decode(ids), "\xC3\xA9");
  EXPECT_EQ(tokenizer->decode(Ids{259, 265}), "hello world");
  EXPECT_EQ(error_code([&] { tokenizer->decode(0, 524); }), ET_ERR_INVALID_ARGUMENT);
}

TEST(Tiktoken, RefusesTextThatIsNotUtf8) {
  const auto tokenizer = tiktoken();
  try {
    tokenizer->encode("ok\xC3(");
    FAIL() << "invalid UTF-8 was encoded";
  } catch (const etrt::Error& error) {
    EXPECT_EQ(error.code(), ET_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(error.what()).find("not valid UTF-8 at byte 2"), std::string::npos) << error.what();
  }
}

TEST(Tiktoken, MillionSpaceRunIsOnePreTokenMergedInPairs) {
  const auto tokenizer = tiktoken();
  const Ids ids = tokenizer->encode(std::string(1'000'000, ' '));
  ASSERT_EQ(ids.size(), 250'000u);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 267u), 250'000);  // "    "
}

TEST(Tiktoken, CustomPatternAndSpecialTokens) {
  etrt::llm::TokenizerOptions options;
  options.tiktoken_pattern = R"(\S+|\s+)";
  options.tiktoken_special_tokens = {"<s>", "</s>", "<pad>"};
  options.tiktoken_bos_index = 0;
  options.tiktoken_eos_index = 1;
  const auto tokenizer = parse_tokenizer(samples::tiktoken_file(), "custom", options);
  EXPECT_EQ(tokenizer->vocab_size(), 271u);
  EXPECT_EQ(tokenizer->eos_id(), 269u);
  // \S+ keeps "hello," together: not a rank, so its bytes merge.
  EXPECT_EQ(tokenizer->encode("hello,<pad>"), (Ids{259, 44, 270}));
  options.tiktoken_eos_index = 3;
  EXPECT_EQ(error_code([&] { parse_tokenizer(samples::tiktoken_file(), "custom", options); }), ET_ERR_INVALID_ARGUMENT);
}

std::unique_ptr<Tokenizer> hf(const std::string& added = "", const std::string& extra = "") {
  return parse_tokenizer(samples::tokenizer_json(added, extra), "tokenizer.json");
}

TEST(HuggingFaceJson, ByteLevelBpeWithGpt2Pattern) {
  const auto tokenizer = hf();
  EXPECT_EQ(tokenizer->format(), TokenizerFormat::kHuggingFaceJson);
  EXPECT_EQ(tokenizer->vocab_size(), 268u);
  EXPECT_EQ(tokenizer->encode("hello world"), (Ids{259, 265}));
  EXPECT_EQ(tokenizer->decode(0, 265), " world");
  EXPECT_EQ(tokenizer->decode(Ids{259, 265}), "hello world");
  const Ids split = tokenizer->encode("\xF0\x9F\x98\x80");  // an emoji: four byte tokens
  ASSERT_EQ(split, (Ids{0xF0, 0x9F, 0x98, 0x80}));
  EXPECT_EQ(tokenizer->decode(0, split[0]), "\xF0");
  EXPECT_EQ(tokenizer->decode(Ids{0xF0, 0x9F, 0x98}), "\xEF\xBF\xBD");  // one U+FFFD for the cut sequence
}

TEST(HuggingFaceJson, AddedTokensStripAndSingleWord) {
  const std::string added = samples::added_token(300, "<|end|>", true) + "," +
                            samples::added_token(302, "<sep>", false, true, true) + "," +
                            samples::added_token(303, "ab", false, false, false, true) + "," +
                            samples::added_token(304, "<raw>", true);
  const auto tokenizer = hf(added);
  EXPECT_EQ(tokenizer->vocab_size(), 305u);
  EXPECT_EQ(tokenizer->encode("hello<|end|>"), (Ids{259, 300}));
  EXPECT_EQ(tokenizer->encode("a <sep> b"), (Ids{97, 302, 98}));      // lstrip and rstrip take the spaces
  EXPECT_EQ(tokenizer->encode("a <raw> b"), (Ids{97, 32, 304, 32, 98}));  // without them the spaces stay
  EXPECT_EQ(tokenizer->encode("ab cd"), (Ids{303, 32, 99, 100}));
  EXPECT_EQ(tokenizer->encode("abc"), (Ids{97, 98, 99}));  // single_word: "ab" inside a word is text
  EXPECT_EQ(tokenizer->special_token_id("<sep>"), 302u);
  EXPECT_EQ(tokenizer->decode(0, 300), "<|end|>");
}

TEST(HuggingFaceJson, BosAndEosFromConfigOrExecuTorchsGuess) {
  const std::string added = samples::added_token(300, "<|begin_of_text|>", true) + "," +
                            samples::added_token(301, "<|end_of_text|>", true) + "," +
                            samples::added_token(302, "<|eot_id|>", true);
  const auto guessed = hf(added);
  EXPECT_EQ(guessed->bos_id(), 300u);
  EXPECT_EQ(guessed->eos_id(), 301u);
  const auto configured = parse_tokenizer(samples::tokenizer_json(added), "tokenizer.json", {},
                                          R"({"bos_token": "<|begin_of_text|>", "eos_token": {"content": "<|eot_id|>"}})");
  EXPECT_EQ(configured->bos_id(), 300u);
  EXPECT_EQ(configured->eos_id(), 302u);
  EXPECT_EQ(configured->encode("hello", 1, 1), (Ids{300, 259, 302}));
}

TEST(HuggingFaceJson, NfcNormalizerAndSplitPreTokenizer) {
  const std::string split =
      R"({"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\p{L}+|\\s+"},"behavior":"Isolated","invert":false},)"
      R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]})";
  const auto tokenizer = parse_tokenizer(samples::tokenizer_json("", R"("normalizer":{"type":"NFC"},)", split), "t.json");
  // e + combining acute composes to é (C3 A9) before the bytes are encoded.
  EXPECT_EQ(tokenizer->encode("e\xCC\x81"), (Ids{0xC3, 0xA9}));
  // The Split isolates the space, so " world" is not one piece: "world" merges only "or".
  EXPECT_EQ(tokenizer->encode("hello world"), (Ids{259, 32, 119, 262, 108, 100}));
}

std::unique_ptr<Tokenizer> sentencepiece(int model_type = 2) {
  return parse_tokenizer(samples::sentencepiece_model(model_type), "tokenizer.model");
}

TEST(SentencePiece, BpeMergesByScoreWithByteFallback) {
  const auto tokenizer = sentencepiece();
  EXPECT_EQ(tokenizer->format(), TokenizerFormat::kSentencePiece);
  EXPECT_EQ(tokenizer->vocab_size(), 278u);
  EXPECT_EQ(tokenizer->bos_id(), 1u);
  EXPECT_EQ(tokenizer->eos_id(), 2u);
  EXPECT_EQ(tokenizer->encode("hello world"), (Ids{265, 275, 269, 272}));
  EXPECT_EQ(tokenizer->encode("\xC3\xA9"), (Ids{266, 3 + 0xC3, 3 + 0xA9}));  // é is not a piece: its bytes
  EXPECT_EQ(tokenizer->encode("a<tag>", 1, 1), (Ids{1, 266, 3 + 'a', 277, 2}));  // <tag> is user-defined
  EXPECT_EQ(tokenizer->special_token_id("<s>"), 1u);
  EXPECT_EQ(tokenizer->special_token_id("<tag>"), 277u);
}

TEST(SentencePiece, DecodesAsTheSentencePieceDecoder) {
  const auto tokenizer = sentencepiece();
  EXPECT_EQ(tokenizer->decode(1, 265), "hello");  // after BOS the dummy prefix's space goes
  EXPECT_EQ(tokenizer->decode(265, 276), " world");
  EXPECT_EQ(tokenizer->decode(0, 3 + 0xC3), "\xC3");
  EXPECT_EQ(tokenizer->decode(0, 1), " ");  // a control id streams as ExecuTorch's runner streams it
  EXPECT_EQ(tokenizer->decode(Ids{1, 265, 276, 2}), "hello world");
  EXPECT_EQ(tokenizer->decode(Ids{3 + 0xC3, 3 + 0xA9}), "\xC3\xA9");
  EXPECT_EQ(tokenizer->decode(Ids{3 + 0xE2, 3 + 0x96, 265}), "\xEF\xBF\xBD\xEF\xBF\xBD hello");  // one U+FFFD a byte
  EXPECT_EQ(tokenizer->decode(Ids{0}), " \xE2\x81\x87 ");  // <unk>'s surface
}

TEST(SentencePiece, UnigramTakesTheBestScoringPath) {
  const auto tokenizer = sentencepiece(1);
  EXPECT_EQ(tokenizer->encode("hello"), (Ids{265}));
  EXPECT_EQ(tokenizer->encode("hello world"), (Ids{265, 276}));
}

TEST(Llama2c, ExecuTorchLayoutEncodesAsLlama2c) {
  const auto tokenizer = parse_tokenizer(samples::llama2c_file(true), "tokenizer.bin");
  EXPECT_EQ(tokenizer->format(), TokenizerFormat::kLlama2c);
  EXPECT_EQ(tokenizer->vocab_size(), 277u);
  EXPECT_EQ(tokenizer->encode("hello world", 1, 0), (Ids{1, 265, 275, 269, 272}));
  EXPECT_EQ(tokenizer->encode("\xC3\xA9"), (Ids{266, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tokenizer->decode(1, 265), "hello");
  EXPECT_EQ(tokenizer->decode(265, 276), " world");
  EXPECT_EQ(tokenizer->decode(0, 3 + 0x0A), "\n");
}

TEST(Llama2c, OriginalLayoutHasTheSameVocabulary) {
  const auto tokenizer = parse_tokenizer(samples::llama2c_file(false), "tokenizer.bin");
  EXPECT_EQ(tokenizer->vocab_size(), 277u);
  EXPECT_EQ(tokenizer->bos_id(), 1u);
  EXPECT_EQ(tokenizer->eos_id(), 2u);
  EXPECT_EQ(tokenizer->encode("hello world"), (Ids{265, 275, 269, 272}));
}

TEST(Detection, ByContentNotName) {
  using etrt::llm::detect_tokenizer_format;
  EXPECT_EQ(detect_tokenizer_format(samples::tiktoken_file()), TokenizerFormat::kTiktoken);
  EXPECT_EQ(detect_tokenizer_format("  \n" + samples::tokenizer_json()), TokenizerFormat::kHuggingFaceJson);
  EXPECT_EQ(detect_tokenizer_format(samples::sentencepiece_model()), TokenizerFormat::kSentencePiece);
  EXPECT_EQ(detect_tokenizer_format(samples::llama2c_file(true)), TokenizerFormat::kLlama2c);
  EXPECT_EQ(detect_tokenizer_format(samples::llama2c_file(false)), TokenizerFormat::kLlama2c);
  EXPECT_EQ(error_code([] { detect_tokenizer_format("just some text"); }), ET_ERR_INVALID_FILE);
}

}  // namespace
