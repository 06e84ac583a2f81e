// etrt::training::TrainingModule: runs the joint forward-backward programs that torch.export's
// _export_forward_backward makes (exported to a .pte by ExecuTorch), over libetrt's public API.
//
// Such a program's method (e.g. "forward") returns [user outputs..., gradients..., parameters...]; three
// constant methods say where the parts start and name the parameters:
//   __et_training_gradients_index_<method>   -> the index of the first gradient
//   __et_training_parameters_index_<method>  -> the index of the first parameter
//   __et_training_fqn_<method>               -> the parameters' fully qualified names, in order
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "etrt/training/named_tensors.h"

namespace etrt::training {

class TrainingModule {
 public:
  // A .pte, and the .ptd holding its weights when they were exported as external data ("" for none).
  static TrainingModule load(const std::string& program_path, const std::string& data_path = "");
  // The same from bytes (copied).
  static TrainingModule load_bytes(const void* program, size_t program_size, const void* data = nullptr,
                                   size_t data_size = 0);

  TrainingModule(TrainingModule&&) noexcept;
  TrainingModule& operator=(TrainingModule&&) noexcept;
  ~TrainingModule();

  // Runs `method` on `inputs` (forward and backward) and returns its user outputs (the loss first, as
  // the program computes it). The returned values, and the tensors they point to, are the method's own:
  // valid until the next forward_backward of that method. Throws etrt::Error: ET_ERR_INVALID_PROGRAM
  // when the program has no backward graph for `method`, or the library's errors for bad inputs; a
  // failed call leaves the module usable.
  std::vector<et_value> forward_backward(const std::string& method, const std::vector<et_value>& inputs);

  // The trainable parameters of `method`, by name: views of the method's memory, valid as long as this
  // module. Writing their data is how an optimizer trains the model. Available before the first
  // forward_backward.
  const NamedTensors& named_parameters(const std::string& method = "forward");
  // The gradients of the last forward_backward of `method`, by parameter name: views of the method's
  // memory. The pointers stay valid as long as this module; their contents only until the next
  // forward_backward of that method (its memory plan reuses the bytes while it runs). Throws
  // ET_ERR_INVALID_STATE before the first forward_backward.
  const NamedTensors& named_gradients(const std::string& method = "forward");

  // Writes the current parameters of `method` to a .ptd (ExecuTorch's flat tensor data file), keyed by
  // their fully qualified names: what a program exported with external constants of those names loads,
  // in ExecuTorch's runtime and in etrt. Throws ET_ERR_INVALID_ARGUMENT when the file cannot be written.
  void save_parameters(const std::string& path, const std::string& method = "forward");

  // The program underneath, for running its other methods.
  const etrt::Program& program() const;

 private:
  struct State;
  explicit TrainingModule(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// The bytes save_parameters writes.
std::string parameters_file_bytes(const NamedTensors& parameters);

}  // namespace etrt::training
