// The sampler of the LLM runner: picks the next token from a row of logits. Greedy, temperature,
// top-k and top-p (nucleus), reproducible from a seed on every platform.
//
// Random numbers: xoshiro256** (Blackman and Vigna), its state filled from the seed by splitmix64;
// a draw is the top 53 bits of one output scaled to [0, 1). Both are defined on 64-bit integers
// alone, so a seed gives the same stream everywhere. Probabilities are computed in double.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace etrt::llm {

struct SamplerConfig {
  // <= 0: greedy (argmax). Otherwise the logits are divided by it before the softmax.
  float temperature = 0.0f;
  // > 0: only the k most probable tokens are kept (ties: the lower id first). 0: all.
  int32_t top_k = 0;
  // In (0, 1): only the smallest set of most probable tokens whose mass reaches top_p is kept
  // (the nucleus), renormalised. <= 0 or >= 1: all.
  float top_p = 1.0f;
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplerConfig& config = {});

  // The next token. Throws etrt::Error (ET_ERR_INVALID_ARGUMENT) for an empty row or a NaN logit.
  uint64_t sample(std::span<const float> logits);

  // The index of the largest logit; ties go to the lowest index (as ExecuTorch's sampler).
  static uint64_t argmax(std::span<const float> logits);

  // Changes how tokens are picked; the random stream goes on.
  void set_options(float temperature, int32_t top_k, float top_p) {
    config_.temperature = temperature;
    config_.top_k = top_k;
    config_.top_p = top_p;
  }
  // Restarts the random stream from `seed`.
  void reseed(uint64_t seed);
  const SamplerConfig& config() const { return config_; }

 private:
  double next_uniform();  // [0, 1)

  SamplerConfig config_;
  uint64_t state_[4];
  std::vector<uint32_t> order_;  // scratch: token ids sorted by probability
  std::vector<double> probabilities_;
};

}  // namespace etrt::llm
