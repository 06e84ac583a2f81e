// The text runner (extensions/llm/runner/text_runner.cpp) on ExecuTorch's Llama example exported
// by make_runner_models.py into ETRT_LLM_RUNNER_MODELS: metadata, one-call and token-by-token
// prefill agreeing, the stop conditions, seeded sampling, and named errors that leave the runner
// usable. Token parity with ExecuTorch's runner is test_runner_parity.py.
#include "etrt/llm/text_runner.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace etrt::llm {
namespace {

const char* kPrompt = "Once upon a time there was a little robot";

std::string models_dir() {
  const char* dir = std::getenv("ETRT_LLM_RUNNER_MODELS");
  return dir ? dir : "";
}
std::string model(const std::string& name) { return models_dir() + "/" + name + ".pte"; }
std::string tokenizer_path() { return models_dir() + "/tokenizer.model"; }

GenerationConfig greedy(int32_t max_new_tokens) {
  GenerationConfig config;
  config.temperature = 0.0f;
  config.echo = false;
  config.max_new_tokens = max_new_tokens;
  return config;
}

std::string message_of(const std::function<void()>& action, int32_t* code = nullptr) {
  try {
    action();
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "(no error)";
}

class TextRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (models_dir().empty()) GTEST_FAIL() << "ETRT_LLM_RUNNER_MODELS is not set";
  }
};

TEST_F(TextRunnerTest, ReadsTheConstantMethods) {
  TextRunner runner(model("llama_dynamic"), tokenizer_path());
  const ModelMetadata& m = runner.metadata();
  EXPECT_EQ(m.max_seq_len, 48);
  EXPECT_EQ(m.max_context_len, 48);
  ASSERT_TRUE(m.vocab_size.has_value());
  EXPECT_EQ(*m.vocab_size, 320);
  EXPECT_EQ(m.bos_id, 1u);
  EXPECT_EQ(m.eos_ids, std::vector<uint64_t>{2});
  EXPECT_TRUE(m.use_kv_cache);
  EXPECT_TRUE(m.use_sdpa_with_kv_cache);
  EXPECT_TRUE(m.enable_dynamic_shape);
  TextRunner static_runner(model("llama_static"), tokenizer_path());
  EXPECT_FALSE(static_runner.metadata().enable_dynamic_shape);
}

TEST_F(TextRunnerTest, OneCallAndTokenByTokenPrefillGiveTheSameTokens) {
  TextRunner dynamic(model("llama_dynamic"), tokenizer_path());
  TextRunner token_by_token(model("llama_static"), tokenizer_path());
  dynamic.generate(kPrompt, greedy(12));
  token_by_token.generate(kPrompt, greedy(12));
  EXPECT_EQ(dynamic.generated_tokens().size(), 12u);
  EXPECT_EQ(dynamic.generated_tokens(), token_by_token.generated_tokens());
}

// prefill() leaves the cache and position a one-token generation of the same prompt leaves (its
// first token comes from the prefill's logits alone), so what follows is the same.
TEST_F(TextRunnerTest, PrefillFillsTheCacheAsGenerateDoes) {
  TextRunner prefilled(model("llama_dynamic"), tokenizer_path());
  TextRunner generated(model("llama_dynamic"), tokenizer_path());
  prefilled.prefill(kPrompt, greedy(-1));
  generated.generate(kPrompt, greedy(1));
  ASSERT_EQ(generated.generated_tokens().size(), 1u);
  EXPECT_EQ(prefilled.position(), generated.position());
  EXPECT_EQ(prefilled.position(), static_cast<int64_t>(prefilled.tokenizer().encode(kPrompt).size()));
  // To the end of the context: this small random model's first tokens hardly depend on the cache.
  prefilled.generate(" and the moon", greedy(-1));
  generated.generate(" and the moon", greedy(-1));
  EXPECT_EQ(prefilled.generated_tokens(), generated.generated_tokens());
  // A fresh runner given only the second prompt starts from an empty cache: other tokens.
  TextRunner fresh(model("llama_dynamic"), tokenizer_path());
  fresh.generate(" and the moon", greedy(8));
  EXPECT_NE(fresh.generated_tokens(), prefilled.generated_tokens());
  // A prompt beyond the context is refused by name, the position unchanged.
  const int64_t before = prefilled.position();
  std::string long_prompt;
  for (int i = 0; i < 10; ++i) long_prompt += kPrompt;
  EXPECT_NE(message_of([&] { prefilled.prefill(long_prompt, greedy(-1)); }).find("prefill: the prompt has"),
            std::string::npos);
  EXPECT_EQ(prefilled.position(), before);
}

TEST_F(TextRunnerTest, CallbacksStatsAndTheTokenBudget) {
  TextRunner runner(model("llama_dynamic"), tokenizer_path());
  GenerationConfig config = greedy(5);
  config.echo = true;
  std::vector<std::string> pieces;
  int stats_calls = 0;
  runner.generate(kPrompt, config, [&](const std::string& piece) { pieces.push_back(piece); },
                  [&](const Stats& stats) {
                    ++stats_calls;
                    EXPECT_EQ(stats.num_generated_tokens, 4);  // the prefill's token is not counted
                    EXPECT_GE(stats.first_token_ms, stats.inference_start_ms);
                    EXPECT_GE(stats.inference_end_ms, stats.first_token_ms);
                  });
  EXPECT_EQ(stats_calls, 1);
  ASSERT_EQ(pieces.size(), 6u);  // the prompt, then 5 tokens
  EXPECT_EQ(pieces[0], kPrompt);
  const int64_t prompt_tokens = runner.stats().num_prompt_tokens;
  EXPECT_EQ(prompt_tokens, static_cast<int64_t>(runner.tokenizer().encode(kPrompt).size()));
  EXPECT_EQ(runner.position(), prompt_tokens + 4);
  runner.reset();
  EXPECT_EQ(runner.position(), 0);
  EXPECT_EQ(runner.stats().num_generated_tokens, 0);
}

TEST_F(TextRunnerTest, StopsAtTheContextLength) {
  TextRunner runner(model("llama_dynamic"), tokenizer_path());
  runner.generate(kPrompt, greedy(-1));
  // Unless an EOS came first, prompt + new tokens fill the context exactly; the last token is
  // never fed, so the position ends one short of it (as in ExecuTorch's runner).
  const std::vector<uint64_t>& ids = runner.generated_tokens();
  const int64_t prompt_tokens = runner.stats().num_prompt_tokens;
  const bool ended_on_eos = ids.back() == 2u;
  EXPECT_TRUE(ended_on_eos || prompt_tokens + static_cast<int64_t>(ids.size()) == 48)
      << prompt_tokens << " prompt tokens + " << ids.size() << " new ones";
  EXPECT_EQ(runner.position(), prompt_tokens + static_cast<int64_t>(ids.size()) - 1);
}

TEST_F(TextRunnerTest, StopFromTheTokenCallback) {
  TextRunner runner(model("llama_dynamic"), tokenizer_path());
  int pieces = 0;
  runner.generate(kPrompt, greedy(20), [&](const std::string&) {
    if (++pieces == 3) runner.stop();
  });
  EXPECT_EQ(runner.generated_tokens().size(), 3u);
}

TEST_F(TextRunnerTest, SeededSamplingRepeats) {
  TextRunner runner(model("llama_dynamic"), tokenizer_path());
  GenerationConfig config = greedy(16);
  config.temperature = 1.5f;
  config.top_p = 0.95f;
  config.seed = 1234;
  runner.generate(kPrompt, config);
  std::vector<uint64_t> first = runner.generated_tokens();
  runner.reset();
  runner.generate(kPrompt, config);
  EXPECT_EQ(runner.generated_tokens(), first);
  runner.reset();
  config.seed = 99;
  runner.generate(kPrompt, config);
  EXPECT_NE(runner.generated_tokens(), first);
}

TEST_F(TextRunnerTest, APromptLongerThanTheContextIsANamedErrorAndTheRunnerStaysUsable) {
  TextRunner runner(model("llama_dynamic"), tokenizer_path());
  std::string long_prompt;
  for (int i = 0; i < 20; ++i) long_prompt += "one two three four five ";
  int32_t code = 0;
  std::string message = message_of([&] { runner.generate(long_prompt, greedy(4)); }, &code);
  EXPECT_EQ(code, ET_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("the context has room for 47"), std::string::npos) << message;
  EXPECT_EQ(runner.position(), 0);
  runner.generate(kPrompt, greedy(4));
  EXPECT_EQ(runner.generated_tokens().size(), 4u);
}

TEST_F(TextRunnerTest, AVocabularyLargerThanTheModelsIsANamedError) {
  int32_t code = 0;
  std::string message = message_of([&] { TextRunner runner(model("llama_small_vocab"), tokenizer_path()); }, &code);
  EXPECT_EQ(code, ET_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("the tokenizer's vocabulary (320 ids) does not fit the model's (256 ids"), std::string::npos)
      << message;
}

TEST_F(TextRunnerTest, AProgramWithoutTheConstantMethodsIsANamedError) {
  const char* plain = std::getenv("ETRT_LLM_PLAIN_PROGRAM");
  ASSERT_NE(plain, nullptr);
  int32_t code = 0;
  std::string message = message_of([&] { TextRunner runner(plain, tokenizer_path()); }, &code);
  EXPECT_EQ(code, ET_ERR_INVALID_PROGRAM);
  EXPECT_NE(message.find("no constant method get_max_seq_len"), std::string::npos) << message;
}

TEST_F(TextRunnerTest, ATruncatedTokenizerIsANamedError) {
  TextRunner runner(model("llama_dynamic"), tokenizer_path());  // loads
  const std::string truncated = models_dir() + "/truncated.model";
  {
    FILE* in = std::fopen(tokenizer_path().c_str(), "rb");
    FILE* out = std::fopen(truncated.c_str(), "wb");
    ASSERT_TRUE(in && out);
    char buffer[300];
    size_t n = std::fread(buffer, 1, sizeof buffer, in);
    std::fwrite(buffer, 1, n, out);
    std::fclose(in);
    std::fclose(out);
  }
  int32_t code = 0;
  std::string message = message_of([&] { TextRunner broken(model("llama_dynamic"), truncated); }, &code);
  EXPECT_EQ(code, ET_ERR_INVALID_FILE) << message;
  runner.generate(kPrompt, greedy(2));
  EXPECT_EQ(runner.generated_tokens().size(), 2u);
}

}  // namespace
}  // namespace etrt::llm
