// Optimizers over a TrainingModule's named parameters: SGD as ExecuTorch's (and torch.optim.SGD), Adam and
// AdamW as torch.optim's. Each step writes the parameters in place (the module's own memory) from the
// gradients of the same module, matched by name.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "etrt/training/named_tensors.h"

namespace etrt::training {

struct SGDOptions {
  double lr = 0.01;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;  // Adam: L2 added to the gradient; AdamW: decoupled decay of the parameter
};

// What every optimizer shares: the parameters, their check against a step's gradients, per-parameter state.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Updates every parameter that has a gradient in `gradients`. Throws etrt::Error (ET_ERR_INVALID_ARGUMENT)
  // naming the problem -- gradients of another module, a name that is not a parameter, a shape or dtype
  // that differs -- before any parameter changes.
  void step(const NamedTensors& gradients);
  const NamedTensors& parameters() const { return parameters_; }

 protected:
  explicit Optimizer(NamedTensors parameters);
  // One parameter's update; `index` is its position in parameters(), `state` its optimizer state:
  // state_values_per_element() values of the parameter's dtype per element, zero-filled before its first step.
  virtual void update(size_t index, et_tensor& parameter, const et_tensor& gradient, void* state,
                      bool first_step) = 0;
  virtual size_t state_values_per_element() const = 0;
  static void check_hyperparameter(const char* name, double value, bool allow_negative = false);

 private:
  NamedTensors parameters_;
  std::vector<std::vector<unsigned char>> state_;
  std::vector<bool> started_;
};

class SGD : public Optimizer {
 public:
  // Throws ET_ERR_INVALID_ARGUMENT for a NaN, infinite or negative hyperparameter, and for nesterov
  // without momentum or with dampening (as torch.optim.SGD).
  SGD(NamedTensors parameters, SGDOptions options);
  const SGDOptions& options() const { return options_; }

 private:
  void update(size_t index, et_tensor& parameter, const et_tensor& gradient, void* state, bool first_step) override;
  size_t state_values_per_element() const override { return options_.momentum != 0 ? 1 : 0; }
  SGDOptions options_;
};

class Adam : public Optimizer {
 public:
  // decoupled_weight_decay: AdamW. Throws ET_ERR_INVALID_ARGUMENT for NaN/negative values and betas
  // outside [0, 1).
  Adam(NamedTensors parameters, AdamOptions options, bool decoupled_weight_decay = false);
  const AdamOptions& options() const { return options_; }

 private:
  void update(size_t index, et_tensor& parameter, const et_tensor& gradient, void* state, bool first_step) override;
  size_t state_values_per_element() const override { return 2; }
  AdamOptions options_;
  bool decoupled_;
  std::vector<int64_t> steps_;
};

// torch.optim.AdamW: Adam with decoupled weight decay (default 0.01).
class AdamW : public Adam {
 public:
  explicit AdamW(NamedTensors parameters, AdamOptions options = {0.001, 0.9, 0.999, 1e-8, 0.01})
      : Adam(std::move(parameters), options, true) {}
};

}  // namespace etrt::training
