// Trains a joint forward-backward program with libetrt_training, for the parity tests.
//
//   training_train_tool PROGRAM.pte OPTIMIZER STEPS [--data FILE.ptd] [--threads N] [--parameters-out FILE]
//                       [--checkpoint FILE.ptd]
//
// OPTIMIZER is sgd:lr,momentum,dampening,weight_decay,nesterov or adam:lr,beta1,beta2,eps,weight_decay or
// adamw:(the same). Each step reads the method "forward"'s inputs from stdin, raw bytes of the sizes the
// program declares, in input order, runs forward_backward and a step, and prints the loss (%.9g) and the
// step's milliseconds. --parameters-out writes the final parameters, raw, in the program's order;
// --checkpoint saves them with TrainingModule::save_parameters.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "etrt/training/optimizer.h"
#include "etrt/training/training_module.h"

namespace {

std::vector<double> numbers_after_colon(const std::string& spec) {
  std::vector<double> values;
  std::stringstream in(spec.substr(spec.find(':') + 1));
  for (std::string item; std::getline(in, item, ',');) values.push_back(std::stod(item));
  return values;
}

std::unique_ptr<etrt::training::Optimizer> make_optimizer(const std::string& spec,
                                                          const etrt::training::NamedTensors& parameters) {
  std::vector<double> v = numbers_after_colon(spec);
  v.resize(5, 0);
  if (spec.rfind("sgd:", 0) == 0)
    return std::make_unique<etrt::training::SGD>(parameters, etrt::training::SGDOptions{v[0], v[1], v[2], v[3], v[4] != 0});
  etrt::training::AdamOptions options{v[0], v[1], v[2], v[3], v[4]};
  if (spec.rfind("adam:", 0) == 0) return std::make_unique<etrt::training::Adam>(parameters, options);
  if (spec.rfind("adamw:", 0) == 0) return std::make_unique<etrt::training::AdamW>(parameters, options);
  throw std::runtime_error("unknown optimizer '" + spec + "'");
}

struct Input {
  std::vector<unsigned char> bytes;
  std::vector<int64_t> sizes, strides;
  std::vector<uint8_t> dim_order;
  et_tensor tensor{};
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s PROGRAM OPTIMIZER STEPS [--data F] [--threads N] [--parameters-out F]\n", argv[0]);
    return 2;
  }
  std::string data_path, parameters_out, checkpoint;
  for (int i = 4; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--data") data_path = argv[i + 1];
    else if (flag == "--threads") etrt::Runtime::get().set_num_threads(std::stoul(argv[i + 1]));
    else if (flag == "--parameters-out") parameters_out = argv[i + 1];
    else if (flag == "--checkpoint") checkpoint = argv[i + 1];
    else throw std::runtime_error("unknown flag " + flag);
  }
  auto module = etrt::training::TrainingModule::load(argv[1], data_path);
  auto optimizer = make_optimizer(argv[2], module.named_parameters());
  const int steps = std::stoi(argv[3]);

  const etrt::Program& program = module.program();
  std::vector<Input> inputs(program.method_info("forward").num_inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    et_value_info info = program.io_info("forward", false, i);
    Input& in = inputs[i];
    in.bytes.resize(info.nbytes);
    in.sizes.assign(info.sizes, info.sizes + info.rank);
    in.dim_order.assign(info.dim_order, info.dim_order + info.rank);
    in.strides.assign(static_cast<size_t>(info.rank), 1);
    for (int32_t d = info.rank - 1; d > 0; --d) in.strides[d - 1] = in.strides[d] * in.sizes[d];
    in.tensor = et_tensor{sizeof(et_tensor), info.dtype, info.rank, in.sizes.data(), in.dim_order.data(),
                          in.strides.data(), in.bytes.data(), info.nbytes, info.nbytes, ET_SHAPE_STATIC, 0};
  }
  for (int step = 0; step < steps; ++step) {
    std::vector<et_value> values;
    for (Input& in : inputs) {
      if (!std::cin.read(reinterpret_cast<char*>(in.bytes.data()), static_cast<std::streamsize>(in.bytes.size())))
        throw std::runtime_error("stdin ended at step " + std::to_string(step));
      et_value v{};
      v.struct_size = sizeof v;
      v.tag = ET_VALUE_TENSOR;
      v.tensor = &in.tensor;
      values.push_back(v);
    }
    auto start = std::chrono::steady_clock::now();
    std::vector<et_value> outputs = module.forward_backward("forward", values);
    optimizer->step(module.named_gradients());
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("%.9g %.4f\n", static_cast<double>(*static_cast<const float*>(outputs.at(0).tensor->data)), ms);
  }
  if (!parameters_out.empty()) {
    FILE* out = std::fopen(parameters_out.c_str(), "wb");
    if (out == nullptr) throw std::runtime_error("cannot write " + parameters_out);
    for (const auto& [name, tensor] : module.named_parameters()) std::fwrite(tensor->data, 1, tensor->nbytes, out);
    std::fclose(out);
  }
  if (!checkpoint.empty()) module.save_parameters(checkpoint);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "training_train_tool: %s\n", e.what());
  return 1;
}
