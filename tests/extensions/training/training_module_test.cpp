// TrainingModule on ExecuTorch's own training programs (make_training_programs.py): metadata, views of
// parameters and gradients, training steps, and the named errors that leave the module usable.
#include "etrt/training/training_module.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "etrt/training/optimizer.h"
#include "training_test_support.h"

namespace etrt::training {
namespace {

using test::OwnedTensor;
using test::program_path;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The inputs of ExecuTorch's pybindings test module: x = ones(3), y = [1, 0, 0].
struct SimpleInputs {
  OwnedTensor<float> x{{3}, {1, 1, 1}, ET_DTYPE_FLOAT32};
  OwnedTensor<float> y{{3}, {1, 0, 0}, ET_DTYPE_FLOAT32};
  std::vector<et_value> values() { return {x.value(), y.value()}; }
};

template <typename Fn>
void expect_error(int32_t code, const std::string& text, Fn&& fn) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one saying '" << text << "'";
  } catch (const etrt::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_THAT(e.what(), HasSubstr(text));
  }
}

TEST(TrainingModule, NamesParametersBeforeTheFirstStep) {
  TrainingModule module = TrainingModule::load(program_path("xor.pte"));
  const NamedTensors& parameters = module.named_parameters();
  std::vector<std::string> names;
  for (const auto& [name, tensor] : parameters) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("net.linear.weight", "net.linear.bias", "net.linear2.weight", "net.linear2.bias"));
  EXPECT_THAT(std::vector<int64_t>(parameters[0].second->sizes, parameters[0].second->sizes + 2), ElementsAre(10, 2));
  expect_error(ET_ERR_INVALID_STATE, "call forward_backward first", [&] { module.named_gradients(); });
}

TEST(TrainingModule, GradientsAndParametersAreViewsThatStayValid) {
  TrainingModule module = TrainingModule::load(program_path("simple_train.pte"));
  SimpleInputs inputs;
  const NamedTensors& parameters = module.named_parameters();
  et_tensor* weight = parameters.find("linear.weight");
  ASSERT_NE(weight, nullptr);
  const void* weight_data = weight->data;
  module.forward_backward("forward", inputs.values());
  et_tensor* gradient = module.named_gradients().find("linear.weight");
  ASSERT_NE(gradient, nullptr);
  // A second step hands out the same tensors, with new contents.
  const std::vector<float> first_gradient = test::copy_of(*gradient);
  weight_data = weight->data;
  static_cast<float*>(weight->data)[0] += 1.0f;  // writing the view changes what the method reads
  module.forward_backward("forward", inputs.values());
  EXPECT_EQ(module.named_parameters().find("linear.weight"), weight);
  EXPECT_EQ(weight->data, weight_data);
  EXPECT_EQ(module.named_gradients().find("linear.weight"), gradient);
  EXPECT_NE(test::copy_of(*gradient), first_gradient);
}

// ExecuTorch's pybindings test, in C++: one SGD step changes every parameter and the loss.
TEST(TrainingModule, SgdStepChangesParametersAndLoss) {
  TrainingModule module = TrainingModule::load(program_path("simple_train.pte"));
  SimpleInputs inputs;
  const float first_loss = test::scalar_of(module.forward_backward("forward", inputs.values()).at(0));
  EXPECT_TRUE(std::isfinite(first_loss));
  SGD sgd(module.named_parameters(), {0.1, 0, 0, 0, false});
  std::vector<std::vector<float>> before;
  for (const auto& [name, tensor] : module.named_parameters()) before.push_back(test::copy_of(*tensor));
  sgd.step(module.named_gradients());
  size_t i = 0;
  for (const auto& [name, tensor] : module.named_parameters()) EXPECT_NE(test::copy_of(*tensor), before[i++]) << name;
  const float second_loss = test::scalar_of(module.forward_backward("forward", inputs.values()).at(0));
  EXPECT_NE(first_loss, second_loss);
}

// ExecuTorch's XOR example learns XOR: the loss over the four rows falls and every row is classified right.
TEST(TrainingModule, XorLearnsXor) {
  TrainingModule module = TrainingModule::load(program_path("xor.pte"));
  SGD sgd(module.named_parameters(), {0.5, 0.9, 0, 0, false});
  const int64_t table[4][3] = {{0, 0, 0}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}};
  // The step on row `r`; returns its loss and whether the prediction was right.
  auto run_row = [&](int r, bool step) {
    OwnedTensor<float> x({1, 2}, {static_cast<float>(table[r][0]), static_cast<float>(table[r][1])}, ET_DTYPE_FLOAT32);
    OwnedTensor<int64_t> label({1}, {table[r][2]}, ET_DTYPE_INT64);
    std::vector<et_value> outputs = module.forward_backward("forward", {x.value(), label.value()});
    EXPECT_EQ(outputs.size(), 2u);  // the loss and the predicted class
    if (step) sgd.step(module.named_gradients());
    return std::pair{test::scalar_of(outputs[0]), *static_cast<const int64_t*>(outputs[1].tensor->data) == table[r][2]};
  };
  float before = 0;
  for (int r = 0; r < 4; ++r) before += run_row(r, false).first;
  for (int step = 0; step < 2000; ++step) run_row(step % 4, true);
  float after = 0;
  int right = 0;
  for (int r = 0; r < 4; ++r) {
    auto [loss, correct] = run_row(r, false);
    after += loss;
    right += correct;
  }
  EXPECT_LT(after, before * 0.1f) << "mean loss over the rows " << before / 4 << " -> " << after / 4;
  EXPECT_EQ(right, 4);
}

TEST(TrainingModule, LoadsFromBytes) {
  std::ifstream file(program_path("simple_train.pte"), std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  TrainingModule module = TrainingModule::load_bytes(bytes.data(), bytes.size());
  SimpleInputs inputs;
  EXPECT_EQ(module.forward_backward("forward", inputs.values()).size(), 1u);
  EXPECT_EQ(module.named_gradients().size(), 2u);
}

// A checkpoint: the parameters saved as a .ptd load as the external constants of the XOR inference program,
// whose logits then are the ones the parameters give (worked out here).
TEST(TrainingModule, SavedParametersLoadAsExternalConstants) {
  TrainingModule module = TrainingModule::load(program_path("xor.pte"));
  SGD sgd(module.named_parameters(), {0.5});
  for (int step = 0; step < 8; ++step) {
    OwnedTensor<float> x({1, 2}, {static_cast<float>(step % 2), static_cast<float>(step / 2 % 2)}, ET_DTYPE_FLOAT32);
    OwnedTensor<int64_t> label({1}, {(step % 2) ^ (step / 2 % 2)}, ET_DTYPE_INT64);
    module.forward_backward("forward", {x.value(), label.value()});
    sgd.step(module.named_gradients());
  }
  const std::string path = ::testing::TempDir() + "/xor_checkpoint.ptd";
  module.save_parameters(path);

  etrt::Program inference = etrt::Program::load(program_path("xor_inference_external.pte"));
  inference.add_data_file(path);
  etrt::Method method = inference.load_method("forward");
  OwnedTensor<float> rows({4, 2}, {0, 0, 0, 1, 1, 0, 1, 1}, ET_DTYPE_FLOAT32);
  method.set_input(0, rows.tensor);
  method.execute();
  const auto* logits = static_cast<const float*>(method.output(0).tensor->data);
  const NamedTensors& p = module.named_parameters();
  const auto* w1 = static_cast<const float*>(p[0].second->data);
  const auto* b1 = static_cast<const float*>(p[1].second->data);
  const auto* w2 = static_cast<const float*>(p[2].second->data);
  const auto* b2 = static_cast<const float*>(p[3].second->data);
  for (int r = 0; r < 4; ++r)
    for (int o = 0; o < 2; ++o) {
      double logit = b2[o];
      for (int h = 0; h < 10; ++h) {
        const double z = b1[h] + w1[h * 2] * rows.data[r * 2] + w1[h * 2 + 1] * rows.data[r * 2 + 1];
        logit += w2[o * 10 + h] / (1 + std::exp(-z));
      }
      EXPECT_NEAR(logits[r * 2 + o], logit, 1e-5) << "row " << r << " logit " << o;
    }
  expect_error(ET_ERR_INVALID_ARGUMENT, "cannot write the parameters",
               [&] { module.save_parameters("/nonexistent-directory/xor.ptd"); });
}

TEST(TrainingModuleErrors, ProgramWithoutBackwardGraph) {
  TrainingModule module = TrainingModule::load(program_path("forward_only.pte"));
  OwnedTensor<float> x({1, 2}, {0, 1}, ET_DTYPE_FLOAT32);
  expect_error(ET_ERR_INVALID_PROGRAM, "method 'forward' has no backward graph",
               [&] { module.forward_backward("forward", {x.value()}); });
  expect_error(ET_ERR_INVALID_PROGRAM, "no backward graph", [&] { module.named_parameters(); });
  // The program itself still runs as an inference program.
  etrt::Method method = module.program().load_method("forward");
  method.set_input(0, x.tensor);
  method.execute();
}

TEST(TrainingModuleErrors, UnknownMethodAndBadInputsLeaveTheModuleUsable) {
  TrainingModule module = TrainingModule::load(program_path("simple_train.pte"));
  SimpleInputs inputs;
  expect_error(ET_ERR_NOT_FOUND, "no method 'backward'", [&] { module.forward_backward("backward", inputs.values()); });
  expect_error(ET_ERR_INVALID_ARGUMENT, "takes 2 inputs, got 1",
               [&] { module.forward_backward("forward", {inputs.x.value()}); });
  OwnedTensor<float> wrong({4}, {1, 1, 1, 1}, ET_DTYPE_FLOAT32);
  EXPECT_THROW(module.forward_backward("forward", {wrong.value(), inputs.y.value()}), etrt::Error);
  EXPECT_EQ(module.forward_backward("forward", inputs.values()).size(), 1u);
}

TEST(TrainingModuleErrors, UnknownGradientName) {
  TrainingModule module = TrainingModule::load(program_path("simple_train.pte"));
  SimpleInputs inputs;
  module.forward_backward("forward", inputs.values());
  SGD sgd(module.named_parameters(), {0.1});
  const NamedTensors& gradients = module.named_gradients();
  NamedTensors renamed(gradients.owner(), {{"linear.weights", gradients[0].second}});
  const std::vector<float> before = test::copy_of(*module.named_parameters()[0].second);
  expect_error(ET_ERR_INVALID_ARGUMENT, "gradient 'linear.weights' names no parameter", [&] { sgd.step(renamed); });
  EXPECT_EQ(test::copy_of(*module.named_parameters()[0].second), before);  // nothing changed
  sgd.step(gradients);
  EXPECT_NE(test::copy_of(*module.named_parameters()[0].second), before);
}

TEST(TrainingModuleErrors, GradientsOfAnotherModule) {
  TrainingModule a = TrainingModule::load(program_path("simple_train.pte"));
  TrainingModule b = TrainingModule::load(program_path("simple_train.pte"));
  SimpleInputs inputs;
  a.forward_backward("forward", inputs.values());
  b.forward_backward("forward", inputs.values());
  SGD sgd(a.named_parameters(), {0.1});
  expect_error(ET_ERR_INVALID_ARGUMENT, "another TrainingModule", [&] { sgd.step(b.named_gradients()); });
  Adam adam(a.named_parameters(), {});
  expect_error(ET_ERR_INVALID_ARGUMENT, "another TrainingModule", [&] { adam.step(b.named_gradients()); });
  sgd.step(a.named_gradients());
}

TEST(TrainingModuleErrors, NanLearningRate) {
  TrainingModule module = TrainingModule::load(program_path("simple_train.pte"));
  const double nan = std::nan("");
  expect_error(ET_ERR_INVALID_ARGUMENT, "learning rate is NaN", [&] { SGD(module.named_parameters(), {nan}); });
  expect_error(ET_ERR_INVALID_ARGUMENT, "learning rate is NaN", [&] { Adam(module.named_parameters(), {nan}); });
  expect_error(ET_ERR_INVALID_ARGUMENT, "learning rate is NaN",
               [&] { AdamW(module.named_parameters(), {nan, 0.9, 0.999, 1e-8, 0.01}); });
  expect_error(ET_ERR_INVALID_ARGUMENT, "momentum must not be negative",
               [&] { SGD(module.named_parameters(), {0.1, -0.5}); });
  expect_error(ET_ERR_INVALID_ARGUMENT, "nesterov momentum requires",
               [&] { SGD(module.named_parameters(), {0.1, 0, 0, 0, true}); });
  expect_error(ET_ERR_INVALID_ARGUMENT, "beta1 must be below 1",
               [&] { Adam(module.named_parameters(), {0.1, 1.0}); });
}

}  // namespace
}  // namespace etrt::training
