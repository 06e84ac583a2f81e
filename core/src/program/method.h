// One method of a program, ready to run: planned memory, the value table the
// kernels see, resolved kernels and initialised delegates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "etrt/plugin_api.h"
#include "prim_ops.h"
#include "program.h"

struct et_exec_context {
  const char* method_name;
  size_t instruction;
};

namespace etrt {

class Method {
 public:
  // Resolves every operator and delegate first; a method that misses any
  // fails to load naming all of them.
  static et_error* load(std::shared_ptr<Program> program, const std::string& name, std::unique_ptr<Method>* out);
  ~Method();
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;

  const std::string& name() const { return name_; }
  size_t input_count() const { return inputs_.size(); }
  size_t output_count() const { return outputs_.size(); }

  // Tensor inputs are copied into planned memory (or aliased when the program
  // does not plan them: the caller's data must then outlive execute()).
  et_error* set_input(size_t index, const et_value& value);
  et_error* execute();
  // Valid until the next execute() or the method's destruction.
  const et_value* output(size_t index) const { return index < outputs_.size() ? &values_[outputs_[index]] : nullptr; }
  const et_value* input(size_t index) const { return index < inputs_.size() ? &values_[inputs_[index]] : nullptr; }
  uint64_t executions() const { return executions_; }

 private:
  // Folded: a kernel call already computed at load (its inputs are constants).
  enum class Kind { Kernel, Prim, Delegate, Move, JumpFalse, Free, Folded };
  struct Instruction {
    Kind kind = Kind::Kernel;
    std::string op_name;           // operator name or delegate id, for errors
    et_kernel_fn kernel = nullptr;
    void* user_data = nullptr;
    std::string plugin;            // who serves it
    PrimOpFn prim = nullptr;
    size_t delegate = 0;
    std::vector<et_value*> args;
    std::vector<int32_t> int_lists;  // IntList args to materialise before the call
    int32_t a = 0, b = 0;            // move from/to, jump cond/destination, free index
  };
  struct TensorSlot {
    et_tensor tensor{};
    int64_t sizes[ET_MAX_RANK]{};
    int64_t strides[ET_MAX_RANK]{};
    uint8_t dim_order[ET_MAX_RANK]{};
    int64_t bound[ET_MAX_RANK]{};  // the program's sizes: the upper bound of a dynamic shape
    size_t bound_bytes = 0;
    bool planned = false;  // data lives in (and inputs are copied into) planned memory
  };
  struct Delegate {
    et_backend_descriptor backend{};
    void* handle = nullptr;
    std::string plugin;
  };

  Method() = default;
  et_error* init_values();
  et_error* init_delegates(std::vector<std::string>* missing);
  et_error* init_instructions(std::vector<std::string>* missing);
  void materialise(int32_t int_list_index);
  void find_reused_inputs();
  void fold_constant_layout_ops();
  et_error* fail_at(size_t chain, size_t pc, const Instruction& instr, et_error* cause);
  et_error* check_tensor_data(const Instruction& instr) const;

  std::shared_ptr<Program> program_;
  const pte::ExecutionPlan* plan_ = nullptr;
  std::string name_;
  std::vector<AlignedBuffer> planned_;
  std::vector<AlignedBuffer> folded_;  // results of instructions computed at load
  std::vector<et_value> values_;
  std::vector<TensorSlot> tensors_;             // indexed through tensor_index_
  std::vector<int32_t> tensor_index_;           // value index -> slot, -1 if not a tensor
  std::vector<std::vector<int64_t>> int_list_items_;   // by value index: materialised ints
  std::vector<std::vector<int32_t>> list_indices_;     // by value index: the items' value indices
  std::vector<std::vector<et_tensor*>> tensor_list_items_;
  std::vector<std::vector<Instruction>> chains_;
  std::vector<Delegate> delegates_;
  std::vector<int32_t> inputs_, outputs_;
  std::vector<bool> input_set_;
  std::vector<bool> input_memory_reused_;  // planned memory the run overwrites: set again before each execute
  uint64_t executions_ = 0;
};

}  // namespace etrt
