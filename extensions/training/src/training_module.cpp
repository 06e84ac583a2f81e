// TrainingModule: a joint forward-backward program's methods, their training metadata and the views of
// their parameters and gradients, over libetrt's public C++ API only.
#include "etrt/training/training_module.h"

#include <algorithm>

namespace etrt::training {
namespace {

constexpr const char* kGradientsIndexPrefix = "__et_training_gradients_index_";
constexpr const char* kParametersIndexPrefix = "__et_training_parameters_index_";
constexpr const char* kNamesPrefix = "__et_training_fqn_";

int64_t run_index_method(const etrt::Program& program, const std::string& name) {
  etrt::Method method = program.load_method(name);
  method.execute();
  if (method.num_outputs() != 1 || method.output(0).tag != ET_VALUE_INT)
    throw Error(ET_ERR_INVALID_PROGRAM, "training metadata method '" + name + "' must return one int");
  return method.output(0).as_int;
}

std::vector<std::string> run_names_method(const etrt::Program& program, const std::string& name) {
  etrt::Method method = program.load_method(name);
  method.execute();
  std::vector<std::string> names;
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    const et_value& value = method.output(i);
    if (value.tag != ET_VALUE_STRING)
      throw Error(ET_ERR_INVALID_PROGRAM, "training metadata method '" + name + "' output " + std::to_string(i) +
                                              " must be a string (a parameter's name)");
    names.emplace_back(static_cast<const char*>(value.items), value.count);
  }
  return names;
}

}  // namespace

// One method of the program with its training layout, loaded on first use.
struct TrainedMethod {
  explicit TrainedMethod(etrt::Method loaded) : method(std::move(loaded)) {}
  etrt::Method method;
  size_t gradients_begin = 0, parameters_begin = 0;
  std::vector<std::string> names;
  NamedTensors parameters, gradients;
  bool has_run = false;

  // The outputs [begin, begin + names.size()) as named tensors.
  NamedTensors named_outputs(const void* owner, size_t begin, const char* what, const std::string& method_name) const {
    std::vector<std::pair<std::string, et_tensor*>> entries;
    for (size_t i = 0; i < names.size(); ++i) {
      const et_value& value = method.output(begin + i);
      if (value.tag != ET_VALUE_TENSOR || value.tensor == nullptr)
        throw Error(ET_ERR_INVALID_PROGRAM, "method '" + method_name + "' output " + std::to_string(begin + i) +
                                                " (the " + what + " of '" + names[i] + "') is not a tensor");
      entries.emplace_back(names[i], value.tensor);
    }
    return NamedTensors(owner, std::move(entries));
  }
};

struct TrainingModule::State {
  etrt::Program program;
  std::map<std::string, std::unique_ptr<TrainedMethod>> methods;

  TrainedMethod& method(const std::string& name, const void* owner) {
    auto found = methods.find(name);
    if (found != methods.end()) return *found->second;
    const std::vector<std::string> names = program.method_names();
    auto has = [&](const std::string& m) { return std::find(names.begin(), names.end(), m) != names.end(); };
    if (!has(name)) throw Error(ET_ERR_NOT_FOUND, "the program has no method '" + name + "'");
    for (const char* prefix : {kGradientsIndexPrefix, kParametersIndexPrefix, kNamesPrefix})
      if (!has(prefix + name))
        throw Error(ET_ERR_INVALID_PROGRAM,
                    "method '" + name + "' has no backward graph: the program lacks '" + prefix + name +
                        "' (export it with torch.export.experimental._export_forward_backward)");
    auto trained = std::make_unique<TrainedMethod>(program.load_method(name));
    const int64_t gradients = run_index_method(program, kGradientsIndexPrefix + name);
    const int64_t parameters = run_index_method(program, kParametersIndexPrefix + name);
    trained->names = run_names_method(program, kNamesPrefix + name);
    const auto outputs = static_cast<int64_t>(trained->method.num_outputs());
    const auto count = static_cast<int64_t>(trained->names.size());
    if (gradients < 0 || parameters != gradients + count || outputs != parameters + count)
      throw Error(ET_ERR_INVALID_PROGRAM,
                  "method '" + name + "': its training metadata (gradients from output " + std::to_string(gradients) +
                      ", parameters from " + std::to_string(parameters) + ", " + std::to_string(count) +
                      " names) does not match its " + std::to_string(outputs) + " outputs");
    trained->gradients_begin = static_cast<size_t>(gradients);
    trained->parameters_begin = static_cast<size_t>(parameters);
    trained->parameters = trained->named_outputs(owner, trained->parameters_begin, "parameter", name);
    TrainedMethod& result = *trained;
    methods.emplace(name, std::move(trained));
    return result;
  }
};

TrainingModule::TrainingModule(std::unique_ptr<State> state) : state_(std::move(state)) {}
TrainingModule::TrainingModule(TrainingModule&&) noexcept = default;
TrainingModule& TrainingModule::operator=(TrainingModule&&) noexcept = default;
TrainingModule::~TrainingModule() = default;

TrainingModule TrainingModule::load(const std::string& program_path, const std::string& data_path) {
  etrt::Program program = etrt::Program::load(program_path);
  if (!data_path.empty()) program.add_data_file(data_path);
  return TrainingModule(std::make_unique<State>(State{std::move(program), {}}));
}

TrainingModule TrainingModule::load_bytes(const void* program_bytes, size_t program_size, const void* data,
                                          size_t data_size) {
  etrt::Program program = etrt::Program::load_bytes(program_bytes, program_size, "(training program bytes)");
  if (data != nullptr) program.add_data_bytes(data, data_size, "(training data bytes)");
  return TrainingModule(std::make_unique<State>(State{std::move(program), {}}));
}

std::vector<et_value> TrainingModule::forward_backward(const std::string& method_name,
                                                       const std::vector<et_value>& inputs) {
  TrainedMethod& trained = state_->method(method_name, state_.get());
  if (inputs.size() != trained.method.num_inputs())
    throw Error(ET_ERR_INVALID_ARGUMENT, "method '" + method_name + "' takes " +
                                             std::to_string(trained.method.num_inputs()) + " inputs, got " +
                                             std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) trained.method.set_input(i, inputs[i]);
  trained.method.execute();
  trained.gradients = trained.named_outputs(state_.get(), trained.gradients_begin, "gradient", method_name);
  trained.has_run = true;
  std::vector<et_value> outputs;
  for (size_t i = 0; i < trained.gradients_begin; ++i) outputs.push_back(trained.method.output(i));
  return outputs;
}

const NamedTensors& TrainingModule::named_parameters(const std::string& method) {
  return state_->method(method, state_.get()).parameters;
}

const NamedTensors& TrainingModule::named_gradients(const std::string& method) {
  TrainedMethod& trained = state_->method(method, state_.get());
  if (!trained.has_run)
    throw Error(ET_ERR_INVALID_STATE, "method '" + method + "' has no gradients yet: call forward_backward first");
  return trained.gradients;
}

const etrt::Program& TrainingModule::program() const { return state_->program; }

}  // namespace etrt::training
