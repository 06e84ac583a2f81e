#include "etrt/llm/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "etrt/etrt.hpp"

namespace etrt::llm {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void check_logits(std::span<const float> logits) {
  if (logits.empty()) throw Error(ET_ERR_INVALID_ARGUMENT, "sampler: empty logits");
  for (size_t i = 0; i < logits.size(); ++i)
    if (std::isnan(logits[i]))
      throw Error(ET_ERR_INVALID_ARGUMENT, "sampler: logit " + std::to_string(i) + " is NaN");
}

}  // namespace

Sampler::Sampler(const SamplerConfig& config) : config_(config) { reseed(config.seed); }

void Sampler::reseed(uint64_t seed) {
  config_.seed = seed;
  uint64_t s = seed;
  for (uint64_t& word : state_) word = splitmix64(s);
}

double Sampler::next_uniform() {
  // xoshiro256**
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return static_cast<double>(result >> 11) * 0x1.0p-53;
}

uint64_t Sampler::argmax(std::span<const float> logits) {
  check_logits(logits);
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  return best;
}

uint64_t Sampler::sample(std::span<const float> logits) {
  if (config_.temperature <= 0.0f) return argmax(logits);
  check_logits(logits);
  const size_t n = logits.size();
  const double inverse_temperature = 1.0 / static_cast<double>(config_.temperature);
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  probabilities_.resize(n);
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    probabilities_[i] = std::exp((static_cast<double>(logits[i]) - max_logit) * inverse_temperature);
    total += probabilities_[i];
  }
  for (double& p : probabilities_) p /= total;

  const bool use_top_k = config_.top_k > 0 && static_cast<size_t>(config_.top_k) < n;
  const bool use_top_p = config_.top_p > 0.0f && config_.top_p < 1.0f;
  if (!use_top_k && !use_top_p) {
    // The whole vocabulary, in id order: no sort needed.
    const double target = next_uniform();
    double cumulative = 0.0;
    for (size_t i = 0; i < n; ++i) {
      cumulative += probabilities_[i];
      if (target < cumulative) return i;
    }
    return n - 1;  // rounding left the sum just under 1
  }

  // Candidates sorted by probability, most probable first; ties by the lower id.
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0u);
  auto more_probable = [this](uint32_t a, uint32_t b) {
    return probabilities_[a] > probabilities_[b] || (probabilities_[a] == probabilities_[b] && a < b);
  };
  size_t kept = use_top_k ? static_cast<size_t>(config_.top_k) : n;
  std::partial_sort(order_.begin(), order_.begin() + kept, order_.end(), more_probable);
  double mass = 0.0;
  for (size_t i = 0; i < kept; ++i) mass += probabilities_[order_[i]];
  if (use_top_p) {
    // The nucleus: the shortest prefix whose mass (relative to the kept set) reaches top_p.
    const double limit = config_.top_p * mass;
    double cumulative = 0.0;
    size_t nucleus = kept;
    for (size_t i = 0; i < kept; ++i) {
      cumulative += probabilities_[order_[i]];
      if (cumulative >= limit) {
        nucleus = i + 1;
        break;
      }
    }
    kept = nucleus;
    mass = 0.0;
    for (size_t i = 0; i < kept; ++i) mass += probabilities_[order_[i]];
  }
  const double target = next_uniform() * mass;
  double cumulative = 0.0;
  for (size_t i = 0; i < kept; ++i) {
    cumulative += probabilities_[order_[i]];
    if (target < cumulative) return order_[i];
  }
  return order_[kept - 1];
}

}  // namespace etrt::llm
