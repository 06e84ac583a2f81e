// SGD, Adam and AdamW over a TrainingModule's parameter views. Arithmetic is done in the parameter's
// dtype, as ExecuTorch's SGD does with its add/mul kernels and torch.optim does with tensor ops, so a step
// rounds as theirs do; per-step scalars (bias corrections) are computed in double, as Python floats are.
#include "etrt/training/optimizer.h"

#include <cmath>
#include <cstring>

#include "etrt/etrt.hpp"

namespace etrt::training {
namespace {

size_t element_count(const et_tensor& t) {
  size_t n = 1;
  for (int32_t d = 0; d < t.rank; ++d) n *= static_cast<size_t>(t.sizes[d]);
  return n;
}

std::string shape_text(const et_tensor& t) {
  std::string s = "[";
  for (int32_t d = 0; d < t.rank; ++d) s += (d ? ", " : "") + std::to_string(t.sizes[d]);
  return s + "]";
}

bool is_floating(int32_t dtype) { return dtype == ET_DTYPE_FLOAT32 || dtype == ET_DTYPE_FLOAT64; }

// Calls fn(T{}) with T the C++ type of a float32 or float64 tensor.
template <typename Fn>
void with_float_type(int32_t dtype, Fn&& fn) {
  if (dtype == ET_DTYPE_FLOAT64) fn(double{});
  else fn(float{});
}

}  // namespace

Optimizer::Optimizer(NamedTensors parameters) : parameters_(std::move(parameters)) {
  for (const auto& [name, tensor] : parameters_) {
    if (tensor == nullptr) throw Error(ET_ERR_INVALID_ARGUMENT, "parameter '" + name + "' has no tensor");
    if (!is_floating(tensor->dtype))
      throw Error(ET_ERR_NOT_SUPPORTED, "parameter '" + name + "' is not float32 or float64 (dtype " +
                                            std::to_string(tensor->dtype) + ")");
  }
  state_.resize(parameters_.size());
  started_.assign(parameters_.size(), false);
}

void Optimizer::check_hyperparameter(const char* name, double value, bool allow_negative) {
  if (std::isnan(value)) throw Error(ET_ERR_INVALID_ARGUMENT, std::string(name) + " is NaN");
  if (std::isinf(value)) throw Error(ET_ERR_INVALID_ARGUMENT, std::string(name) + " is infinite");
  if (!allow_negative && value < 0)
    throw Error(ET_ERR_INVALID_ARGUMENT, std::string(name) + " must not be negative, got " + std::to_string(value));
}

void Optimizer::step(const NamedTensors& gradients) {
  if (gradients.owner() != parameters_.owner())
    throw Error(ET_ERR_INVALID_ARGUMENT,
                "the gradients come from another TrainingModule than the parameters this optimizer updates");
  // Everything is checked before any parameter changes.
  std::vector<std::pair<size_t, const et_tensor*>> work;
  for (const auto& [name, gradient] : gradients) {
    size_t index = 0;
    while (index < parameters_.size() && parameters_[index].first != name) ++index;
    if (index == parameters_.size())
      throw Error(ET_ERR_INVALID_ARGUMENT, "gradient '" + name + "' names no parameter of this optimizer");
    const et_tensor& parameter = *parameters_[index].second;
    if (gradient == nullptr || gradient->dtype != parameter.dtype || element_count(*gradient) != element_count(parameter) ||
        gradient->rank != parameter.rank)
      throw Error(ET_ERR_INVALID_ARGUMENT, "gradient '" + name + "' " + (gradient ? shape_text(*gradient) : "(none)") +
                                               " does not match its parameter " + shape_text(parameter) +
                                               " in shape or dtype");
    if (gradient->data == nullptr && element_count(parameter) > 0)
      throw Error(ET_ERR_INVALID_ARGUMENT, "gradient '" + name + "' has no data");
    work.emplace_back(index, gradient);
  }
  for (const auto& [index, gradient] : work) {
    et_tensor& parameter = *parameters_[index].second;
    const size_t per_element = state_values_per_element();
    if (per_element > 0 && state_[index].empty()) {
      const size_t element_size = parameter.dtype == ET_DTYPE_FLOAT64 ? 8 : 4;
      state_[index].assign(per_element * element_count(parameter) * element_size, 0);
    }
    update(index, parameter, *gradient, state_[index].data(), !started_[index]);
    started_[index] = true;
  }
}

// ------------------------------------------------------------------------------------------------- SGD

SGD::SGD(NamedTensors parameters, SGDOptions options) : Optimizer(std::move(parameters)), options_(options) {
  check_hyperparameter("learning rate", options.lr);
  check_hyperparameter("momentum", options.momentum);
  check_hyperparameter("dampening", options.dampening, true);
  check_hyperparameter("weight_decay", options.weight_decay);
  if (options.nesterov && (options.momentum <= 0 || options.dampening != 0))
    throw Error(ET_ERR_INVALID_ARGUMENT, "nesterov momentum requires a momentum and zero dampening");
}

// torch.optim.SGD: d = g + wd * p; buf = d (first step) or momentum * buf + (1 - dampening) * d;
// d = d + momentum * buf (nesterov) or buf; p = p - lr * d.
void SGD::update(size_t, et_tensor& parameter, const et_tensor& gradient, void* state, bool first_step) {
  with_float_type(parameter.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(parameter.data);
    const T* g = static_cast<const T*>(gradient.data);
    T* buf = static_cast<T*>(state);
    const size_t n = element_count(parameter);
    const T weight_decay = static_cast<T>(options_.weight_decay), momentum = static_cast<T>(options_.momentum);
    const T keep = static_cast<T>(1 - options_.dampening), minus_lr = static_cast<T>(-options_.lr);
    for (size_t i = 0; i < n; ++i) {
      T d = g[i];
      if (options_.weight_decay != 0) d = d + weight_decay * p[i];
      if (options_.momentum != 0) {
        buf[i] = first_step ? d : buf[i] * momentum + keep * d;
        d = options_.nesterov ? d + momentum * buf[i] : buf[i];
      }
      p[i] = p[i] + minus_lr * d;
    }
  });
}

// ------------------------------------------------------------------------------------------------ Adam

Adam::Adam(NamedTensors parameters, AdamOptions options, bool decoupled_weight_decay)
    : Optimizer(std::move(parameters)), options_(options), decoupled_(decoupled_weight_decay) {
  check_hyperparameter("learning rate", options.lr);
  check_hyperparameter("eps", options.eps);
  check_hyperparameter("weight_decay", options.weight_decay);
  for (auto [name, beta] : {std::pair{"beta1", options.beta1}, std::pair{"beta2", options.beta2}}) {
    check_hyperparameter(name, beta);
    if (beta >= 1) throw Error(ET_ERR_INVALID_ARGUMENT, std::string(name) + " must be below 1, got " + std::to_string(beta));
  }
  steps_.assign(this->parameters().size(), 0);
}

// torch.optim.Adam / AdamW (single-tensor form): step t; AdamW first p = p * (1 - lr * wd), Adam adds
// wd * p to the gradient; m = m + (1 - b1) * (g - m); v = b2 * v + (1 - b2) * g * g;
// p = p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
void Adam::update(size_t index, et_tensor& parameter, const et_tensor& gradient, void* state, bool) {
  const int64_t t = ++steps_[index];
  with_float_type(parameter.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(parameter.data);
    const T* g = static_cast<const T*>(gradient.data);
    const size_t n = element_count(parameter);
    T* m = static_cast<T*>(state);
    T* v = m + n;
    const double bias1 = 1 - std::pow(options_.beta1, static_cast<double>(t));
    const double bias2 = 1 - std::pow(options_.beta2, static_cast<double>(t));
    const T step_size = static_cast<T>(options_.lr / bias1), bias2_sqrt = static_cast<T>(std::sqrt(bias2));
    const T one_minus_b1 = static_cast<T>(1 - options_.beta1), b2 = static_cast<T>(options_.beta2);
    const T one_minus_b2 = static_cast<T>(1 - options_.beta2), eps = static_cast<T>(options_.eps);
    const T decay = static_cast<T>(1 - options_.lr * options_.weight_decay);
    const T weight_decay = static_cast<T>(options_.weight_decay);
    for (size_t i = 0; i < n; ++i) {
      T grad = g[i];
      if (options_.weight_decay != 0) {
        if (decoupled_) p[i] = p[i] * decay;
        else grad = grad + weight_decay * p[i];
      }
      m[i] = m[i] + one_minus_b1 * (grad - m[i]);
      v[i] = v[i] * b2 + one_minus_b2 * grad * grad;
      const T denom = std::sqrt(v[i]) / bias2_sqrt + eps;
      p[i] = p[i] - step_size * (m[i] / denom);
    }
  });
}

}  // namespace etrt::training
