// SGD, Adam and AdamW on tensors the test owns, against torch.optim's update rules written out here in
// double precision, over several steps with changing gradients (so momentum and moment state matter).
#include "etrt/training/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "training_test_support.h"

namespace etrt::training {
namespace {

using test::OwnedTensor;

constexpr int kSteps = 5;
const int kOwner = 0;  // the identity of the "module" these tensors belong to

float gradient_at(int step, size_t i) { return std::sin(1.0f + static_cast<float>(step) * 0.7f + static_cast<float>(i)); }

struct Fixture {
  OwnedTensor<float> parameter{{2, 3}, {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f}, ET_DTYPE_FLOAT32};
  OwnedTensor<float> gradient{{2, 3}, std::vector<float>(6), ET_DTYPE_FLOAT32};
  NamedTensors parameters() { return NamedTensors(&kOwner, {{"w", &parameter.tensor}}); }
  NamedTensors gradients(int step) {
    for (size_t i = 0; i < gradient.data.size(); ++i) gradient.data[i] = gradient_at(step, i);
    return NamedTensors(&kOwner, {{"w", &gradient.tensor}});
  }
};

void expect_near_all(const std::vector<float>& actual, const std::vector<double>& expected, const char* what) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-5 * std::max(1.0, std::abs(expected[i]))) << what << " element " << i;
}

void check_sgd(SGDOptions o, const char* what) {
  Fixture f;
  std::vector<double> p(f.parameter.data.begin(), f.parameter.data.end()), buf(p.size());
  SGD sgd(f.parameters(), o);
  for (int step = 0; step < kSteps; ++step) {
    sgd.step(f.gradients(step));
    for (size_t i = 0; i < p.size(); ++i) {
      double d = gradient_at(step, i) + o.weight_decay * p[i];
      if (o.momentum != 0) {
        buf[i] = step == 0 ? d : o.momentum * buf[i] + (1 - o.dampening) * d;
        d = o.nesterov ? d + o.momentum * buf[i] : buf[i];
      }
      p[i] -= o.lr * d;
    }
  }
  expect_near_all(f.parameter.data, p, what);
}

TEST(Optimizer, SgdPlain) { check_sgd({0.1}, "plain"); }
TEST(Optimizer, SgdMomentumDampening) { check_sgd({0.05, 0.9, 0.3}, "momentum + dampening"); }
TEST(Optimizer, SgdWeightDecay) { check_sgd({0.1, 0, 0, 0.01}, "weight decay"); }
TEST(Optimizer, SgdNesterov) { check_sgd({0.1, 0.8, 0, 0.02, true}, "nesterov"); }

void check_adam(AdamOptions o, bool decoupled, const char* what) {
  Fixture f;
  std::vector<double> p(f.parameter.data.begin(), f.parameter.data.end()), m(p.size()), v(p.size());
  std::unique_ptr<Optimizer> adam;
  if (decoupled) adam = std::make_unique<AdamW>(f.parameters(), o);
  else adam = std::make_unique<Adam>(f.parameters(), o);
  for (int step = 0; step < kSteps; ++step) {
    adam->step(f.gradients(step));
    const double t = step + 1;
    for (size_t i = 0; i < p.size(); ++i) {
      double g = gradient_at(step, i);
      if (decoupled) p[i] *= 1 - o.lr * o.weight_decay;
      else g += o.weight_decay * p[i];
      m[i] = o.beta1 * m[i] + (1 - o.beta1) * g;
      v[i] = o.beta2 * v[i] + (1 - o.beta2) * g * g;
      const double m_hat = m[i] / (1 - std::pow(o.beta1, t));
      const double v_hat = v[i] / (1 - std::pow(o.beta2, t));
      p[i] -= o.lr * m_hat / (std::sqrt(v_hat) + o.eps * 1.0);
    }
  }
  // eps enters torch's rule as sqrt(v)/sqrt(1-b2^t) + eps, which is sqrt(v_hat) + eps: the same.
  expect_near_all(f.parameter.data, p, what);
}

TEST(Optimizer, Adam) { check_adam({0.01, 0.9, 0.999, 1e-8, 0}, false, "adam"); }
TEST(Optimizer, AdamL2) { check_adam({0.01, 0.8, 0.99, 1e-6, 0.1}, false, "adam + L2"); }
TEST(Optimizer, AdamW) { check_adam({0.01, 0.9, 0.999, 1e-8, 0.05}, true, "adamw"); }

TEST(Optimizer, ShapeMismatchIsRefusedBeforeAnyChange) {
  Fixture f;
  OwnedTensor<float> small({3}, {1, 2, 3}, ET_DTYPE_FLOAT32);
  SGD sgd(f.parameters(), {0.1});
  const std::vector<float> before = f.parameter.data;
  try {
    sgd.step(NamedTensors(&kOwner, {{"w", &small.tensor}}));
    ADD_FAILURE() << "no error";
  } catch (const etrt::Error& e) {
    EXPECT_EQ(e.code(), ET_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("does not match its parameter [2, 3]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.parameter.data, before);
}

}  // namespace
}  // namespace etrt::training
