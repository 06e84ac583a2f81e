// The text runner of libetrt_llm: a decoder-only LLM program (.pte, optional .ptd) and its
// tokenizer, run through libetrt's public API. It reads the program's constant methods as
// ExecuTorch's runner does, prefills the prompt (in one call when the program takes a dynamic
// sequence length, token by token otherwise), then decodes with the sampler until an EOS id, the
// token budget, the context length or stop().
//
// Errors are etrt::Error exceptions with a message naming the problem; a failed generate() leaves
// the runner as it was before the call (same position, usable).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "etrt/llm/sampler.h"
#include "etrt/llm/tokenizer.h"

namespace etrt::llm {

// Names of the constant methods export_llama writes into a program.
inline constexpr const char* kMaxSeqLen = "get_max_seq_len";
inline constexpr const char* kMaxContextLen = "get_max_context_len";
inline constexpr const char* kVocabSize = "get_vocab_size";
inline constexpr const char* kBosId = "get_bos_id";
inline constexpr const char* kEosIds = "get_eos_ids";
inline constexpr const char* kUseKVCache = "use_kv_cache";
inline constexpr const char* kUseSDPAWithKVCache = "use_sdpa_with_kv_cache";
inline constexpr const char* kEnableDynamicShape = "enable_dynamic_shape";

struct GenerationConfig {
  bool echo = true;             // hand the prompt to the token callback first
  int32_t max_new_tokens = -1;  // -1: up to the context length
  bool warming = false;         // a warm-up run
  int32_t seq_len = -1;         // -1: the context length; else a cap on prompt + new tokens
  float temperature = 0.8f;     // <= 0: greedy
  int32_t top_k = 0;            // see SamplerConfig
  float top_p = 1.0f;
  std::optional<uint64_t> seed; // none: the runner's stream continues
  int32_t num_bos = 0;          // BOS ids before the prompt
  int32_t num_eos = 0;          // EOS ids after the prompt

  // How many tokens a generation may add after `num_prompt_tokens` within `max_context_len`.
  int32_t resolve_max_new_tokens(int64_t max_context_len, int64_t num_prompt_tokens) const;
};

// Timings in milliseconds since the epoch (as ExecuTorch's Stats), token counts.
struct Stats {
  static constexpr int64_t SCALING_FACTOR_UNITS_PER_SECOND = 1000;
  int64_t model_load_start_ms = 0, model_load_end_ms = 0;
  int64_t inference_start_ms = 0;
  int64_t token_encode_end_ms = 0;
  int64_t prompt_eval_end_ms = 0;
  int64_t first_token_ms = 0;
  int64_t inference_end_ms = 0;
  int64_t aggregate_sampling_time_ms = 0;
  int64_t num_prompt_tokens = 0;
  int64_t num_generated_tokens = 0;
  void reset() { *this = Stats{}; }
};

// What the program says about itself, with the values ExecuTorch's runner assumes when a constant
// method is absent (get_max_seq_len itself is required).
struct ModelMetadata {
  int64_t max_seq_len = 128;
  int64_t max_context_len = 128;
  std::optional<int64_t> vocab_size;  // from get_vocab_size, when the program has it
  uint64_t bos_id = 0;                // get_bos_id, else the tokenizer's
  std::vector<uint64_t> eos_ids;      // get_eos_ids, else the tokenizer's EOS
  bool use_kv_cache = true;
  bool use_sdpa_with_kv_cache = false;
  bool enable_dynamic_shape = false;
};

class TextRunner {
 public:
  using TokenCallback = std::function<void(const std::string&)>;
  using StatsCallback = std::function<void(const Stats&)>;

  // Opens the files and reads the metadata; the forward method is loaded by load() or the first
  // generate(). Throws for a missing file, a program without get_max_seq_len, or a tokenizer
  // whose vocabulary is larger than the program's.
  TextRunner(const std::string& model_path, const std::string& tokenizer_path,
             const std::vector<std::string>& data_paths = {});
  // The same with a tokenizer already built.
  TextRunner(const std::string& model_path, std::unique_ptr<Tokenizer> tokenizer,
             const std::vector<std::string>& data_paths = {});

  void load();
  bool is_loaded() const { return forward_ != nullptr; }

  // Generates after `prompt`, continuing from the current position (reset() starts over).
  void generate(const std::string& prompt, const GenerationConfig& config, const TokenCallback& token_callback = {},
                const StatsCallback& stats_callback = {});
  // Feeds `prompt` (with config.num_bos / num_eos) into the KV cache from the current position
  // without generating, e.g. to rebuild a chat history; the next generate() continues after it.
  void prefill(const std::string& prompt, const GenerationConfig& config);
  // A generation whose stats are dropped, then reset().
  void warmup(const std::string& prompt, int32_t max_new_tokens);
  // Asks a running generate() (e.g. from its token callback or another thread) to stop after the
  // current token.
  void stop() { stop_requested_ = true; }
  // Back to position 0 with empty stats.
  void reset();

  const ModelMetadata& metadata() const { return metadata_; }
  const Stats& stats() const { return stats_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  int64_t position() const { return position_; }
  // The ids the last generate() produced (the token from the prefill first).
  const std::vector<uint64_t>& generated_tokens() const { return generated_tokens_; }

 private:
  void read_metadata();
  void load_timed();  // load(), its times in the stats
  // Runs forward on `tokens` at `start_position` and returns the logits of the last one.
  std::vector<float> step(const std::vector<int64_t>& tokens, int64_t start_position);
  uint64_t prefill(const std::vector<uint64_t>& prompt, int64_t& position);
  // The ids of `prompt`, checked to fit the context after the current position and the vocabulary;
  // `caller` names the call in errors.
  std::vector<uint64_t> encode_prompt(const std::string& prompt, const GenerationConfig& config, const char* caller);

  std::string model_path_;
  Program program_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Method> forward_;
  ModelMetadata metadata_;
  Stats stats_;
  Sampler sampler_;
  int64_t position_ = 0;
  std::atomic<bool> stop_requested_{false};
  std::vector<uint64_t> generated_tokens_;
};

}  // namespace etrt::llm
