// The sampler (extensions/llm/runner/sampler.cpp): greedy is argmax with ties to the lowest id;
// seeded draws repeat; the draws follow the softmax they sample from (chi-square), with
// temperature, top-k and top-p (renormalised over the nucleus).
#include "etrt/llm/sampler.h"

#include <gtest/gtest.h>

#include "etrt/etrt.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace etrt::llm {
namespace {

const std::vector<float> kLogits = {1.0f, 2.5f, -0.5f, 0.3f, 2.0f, -1.0f, 0.9f, 1.6f};

// Softmax of logits / temperature in double, computed here independently of the sampler.
std::vector<double> softmax(const std::vector<float>& logits, double temperature) {
  std::vector<double> p(logits.size());
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i) total += p[i] = std::exp(logits[i] / temperature);
  for (double& v : p) v /= total;
  return p;
}

// Keeps the tokens of `keep` (others 0) and renormalises.
std::vector<double> restrict_to(std::vector<double> p, const std::vector<size_t>& keep) {
  std::vector<double> out(p.size(), 0.0);
  double mass = 0;
  for (size_t i : keep) mass += p[i];
  for (size_t i : keep) out[i] = p[i] / mass;
  return out;
}

std::vector<size_t> ids_by_probability(const std::vector<double>& p) {
  std::vector<size_t> ids(p.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  return ids;
}

std::vector<size_t> draw_counts(Sampler& sampler, const std::vector<float>& logits, size_t draws) {
  std::vector<size_t> counts(logits.size(), 0);
  for (size_t i = 0; i < draws; ++i) ++counts.at(sampler.sample(logits));
  return counts;
}

// Pearson's chi-square of `counts` against `expected` probabilities. A token with probability 0
// must never be drawn (returns infinity if it is).
double chi_square(const std::vector<size_t>& counts, const std::vector<double>& expected, size_t draws,
                  int* degrees_of_freedom) {
  double statistic = 0;
  int cells = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (expected[i] == 0.0) {
      if (counts[i] != 0) return std::numeric_limits<double>::infinity();
      continue;
    }
    const double e = expected[i] * static_cast<double>(draws);
    statistic += (static_cast<double>(counts[i]) - e) * (static_cast<double>(counts[i]) - e) / e;
    ++cells;
  }
  *degrees_of_freedom = cells - 1;
  return statistic;
}

// Upper 0.1 % points of the chi-square distribution, by degrees of freedom (1..7).
double critical_value_0001(int degrees_of_freedom) {
  static const double kTable[] = {0, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32};
  return kTable[degrees_of_freedom];
}

void expect_distribution(SamplerConfig config, const std::vector<double>& expected) {
  constexpr size_t kDraws = 200000;
  Sampler sampler(config);
  std::vector<size_t> counts = draw_counts(sampler, kLogits, kDraws);
  int df = 0;
  double statistic = chi_square(counts, expected, kDraws, &df);
  ASSERT_GE(df, 1);
  EXPECT_LT(statistic, critical_value_0001(df)) << "draws do not follow the expected distribution";
}

TEST(Sampler, GreedyIsArgmaxWithTiesToTheLowestId) {
  Sampler greedy;
  EXPECT_EQ(greedy.sample(kLogits), 1u);
  const std::vector<float> tied = {0.5f, 3.0f, 1.0f, 3.0f, 3.0f};
  EXPECT_EQ(greedy.sample(tied), 1u);
  EXPECT_EQ(Sampler::argmax(tied), 1u);
  const std::vector<float> last = {-2.0f, -1.0f, 7.0f};
  EXPECT_EQ(Sampler::argmax(last), 2u);
}

TEST(Sampler, SeededDrawsRepeatAndSeedsDiffer) {
  SamplerConfig config{.temperature = 1.0f, .top_k = 0, .top_p = 0.9f, .seed = 42};
  Sampler a(config), b(config);
  config.seed = 43;
  Sampler c(config);
  std::vector<uint64_t> from_a, from_b, from_c;
  for (int i = 0; i < 1000; ++i) {
    from_a.push_back(a.sample(kLogits));
    from_b.push_back(b.sample(kLogits));
    from_c.push_back(c.sample(kLogits));
  }
  EXPECT_EQ(from_a, from_b);
  EXPECT_NE(from_a, from_c);
  a.reseed(42);
  std::vector<uint64_t> again;
  for (int i = 0; i < 1000; ++i) again.push_back(a.sample(kLogits));
  EXPECT_EQ(again, from_b);
}

TEST(Sampler, TemperatureDrawsFollowTheSoftmax) {
  for (float temperature : {1.0f, 0.5f, 2.0f})
    expect_distribution({.temperature = temperature, .top_k = 0, .top_p = 1.0f, .seed = 7},
                        softmax(kLogits, temperature));
}

TEST(Sampler, TopPDrawsFollowTheRenormalisedNucleus) {
  const double temperature = 0.8;
  std::vector<double> p = softmax(kLogits, temperature);
  std::vector<size_t> ids = ids_by_probability(p);
  // The nucleus for top_p = 0.75: the shortest prefix of ids whose mass reaches 0.75.
  std::vector<size_t> nucleus;
  double mass = 0;
  for (size_t id : ids) {
    nucleus.push_back(id);
    if ((mass += p[id]) >= 0.75) break;
  }
  ASSERT_GT(nucleus.size(), 1u);
  ASSERT_LT(nucleus.size(), kLogits.size());
  expect_distribution({.temperature = 0.8f, .top_k = 0, .top_p = 0.75f, .seed = 11}, restrict_to(p, nucleus));
}

TEST(Sampler, TopKDrawsFollowTheRenormalisedTopK) {
  std::vector<double> p = softmax(kLogits, 1.0);
  std::vector<size_t> ids = ids_by_probability(p);
  expect_distribution({.temperature = 1.0f, .top_k = 3, .top_p = 1.0f, .seed = 5},
                      restrict_to(p, {ids[0], ids[1], ids[2]}));
}

TEST(Sampler, BadLogitsAreNamedErrors) {
  Sampler sampler({.temperature = 1.0f});
  const std::vector<float> empty;
  EXPECT_THROW(sampler.sample(empty), etrt::Error);
  const std::vector<float> with_nan = {1.0f, std::nanf(""), 0.0f};
  try {
    sampler.sample(with_nan);
    FAIL() << "a NaN logit was sampled";
  } catch (const etrt::Error& e) {
    EXPECT_EQ(e.code(), ET_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("logit 1 is NaN"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sampler.sample(kLogits) < kLogits.size(), true);  // still usable
}

}  // namespace
}  // namespace etrt::llm
