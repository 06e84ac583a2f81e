// One method of a program, ready to run: planned memory, the value table the
// kernels see, resolved kernels and initialised delegates.
//
// Read in this order: load() (method.cpp) builds the values (method_values.cpp),
// resolves and initialises the delegates, then builds the instructions with
// their kernels (method.cpp); execute() runs them (method_execute.cpp);
// method_folding.cpp computes at load what only depends on constants.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "etrt/plugin_api.h"
#include "exec_context.h"
#include "prim_ops.h"
#include "program.h"
#include "resolver.h"
#include "scratch_arena.h"
#include "tracing.h"

namespace etrt {

class Method {
 public:
  // Resolves every delegate and operator first (built-in operators, then the
  // resolver); a method that misses any fails to load naming all of them.
  static et_error* load(std::shared_ptr<Program> program, const std::string& name, std::unique_ptr<Method>* out,
                        Resolver& resolver = registry_resolver());
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
  const et_value* output(size_t index) const {
    return index < outputs_.size() ? &values_[outputs_[index]].value : nullptr;
  }
  const et_value* input(size_t index) const { return index < inputs_.size() ? &values_[inputs_[index]].value : nullptr; }
  uint64_t executions() const { return executions_; }
  // Runs report to `session` from the next execute() on; nullptr stops tracing.
  void set_trace_session(std::shared_ptr<TraceSession> session);  // tracing_execute.cpp
  const std::shared_ptr<TraceSession>& trace_session() const { return trace_; }
  size_t scratch_capacity() const { return scratch_.capacity(); }

 private:
  // Folded: a kernel call already computed at load (its inputs are constants).
  enum class Kind { Kernel, Prim, Delegate, Move, JumpFalse, Free, Folded };
  struct KernelTarget {
    et_kernel_fn fn = nullptr;
    void* user_data = nullptr;
    // ABI 1.4: set when the kernel prepared this instruction (state != nullptr); released with the method.
    et_kernel_prepare_fn prepare = nullptr;
    et_kernel_run_prepared_fn run_prepared = nullptr;
    et_kernel_release_fn release = nullptr;
    void* state = nullptr;
  };
  struct MoveOperands {
    int32_t from = 0, to = 0;
  };
  struct JumpOperands {
    int32_t condition = 0;     // value index of a bool or bool tensor
    size_t destination = 0;    // instruction index in the chain, taken when the condition is false
  };
  struct Instruction {
    Kind kind = Kind::Kernel;
    std::string name;              // operator name or delegate id, for errors
    std::string plugin;            // who serves it
    // Copies of name and plugin kept by the trace session (set_trace_session): a 1.5 tracer keeps the pointers.
    const char* trace_name = nullptr;
    const char* trace_plugin = nullptr;
    // Calls (Kernel, Prim, Delegate, Folded): the arguments as the program lists them.
    std::vector<et_value*> args;
    std::vector<int32_t> arg_values;  // their value indices
    std::vector<int32_t> int_lists;   // IntList arguments to materialise before the call
    std::vector<uint32_t> data_checks;  // arguments that may be tensors without data (check_tensor_data)
    KernelTarget kernel;              // Kernel, Folded
    PrimOpFn prim = nullptr;          // Prim
    size_t delegate = 0;              // Delegate: index into delegates_
    MoveOperands move;                // Move
    JumpOperands jump;                // JumpFalse
    int32_t freed = 0;                // Free: value index of a tensor that is no constant (verified at load)
  };
  // Shape storage of a tensor value; the et_tensor points into it.
  struct TensorState {
    et_tensor tensor{};
    int64_t sizes[ET_MAX_RANK]{};
    int64_t strides[ET_MAX_RANK]{};
    uint8_t dim_order[ET_MAX_RANK]{};
    int64_t bound[ET_MAX_RANK]{};  // the program's sizes: the upper bound of a dynamic shape
    size_t bound_bytes = 0;
    bool planned = false;  // data lives in (and inputs are copied into) planned memory
    uint32_t memory_id = 0;        // planned placement, when planned
    uint64_t memory_offset = 0;
  };
  // One value of the method: what kernels see, and the storage behind it.
  struct Value {
    et_value value{};
    std::unique_ptr<TensorState> tensor;  // tensors only (by the program's declaration)
    std::vector<int64_t> ints;            // IntList: the materialised items
    std::vector<int32_t> item_values;     // IntList: the items' value indices
    std::vector<et_tensor*> tensors;      // (Optional)TensorList: the items
  };
  struct Delegate {
    et_backend_descriptor backend{};
    void* handle = nullptr;
    bool initialised = false;
    std::string plugin;
  };

  Method() = default;
  // method_values.cpp
  et_error* init_values();
  et_error* plan_memory();
  et_error* init_tensor(const pte::Tensor& source, Value& value);
  void init_lists();
  void materialise(int32_t int_list_value);
  void find_reused_inputs();
  et_error* set_scalar_input(size_t index, const et_value& given, const std::string& where);
  // method.cpp
  et_error* resolve_delegates(Resolver& resolver, std::vector<std::string>* missing);
  et_error* init_delegates();
  et_error* init_instructions(Resolver& resolver, std::vector<std::string>* missing);
  // method_verify.cpp: what each built-in op, move, free and jump does to the values it names, checked once.
  et_error* verify_instructions();
  std::string check_move(const MoveOperands& move) const;
  std::string check_free(int32_t value) const;
  std::string check_jump(int32_t condition) const;
  // method_folding.cpp
  et_error* fold_constant_layout_ops();
  // method.cpp: per-instruction kernel states (ABI 1.4), after folding; released by the destructor.
  et_error* prepare_kernels();
  // The kernel's release, fenced: it runs in the destructor and on error paths, so what it throws is
  // noted on its plugin and logged, never propagated (the state is abandoned).
  static void release_kernel_state(const Instruction& instr, void* state) noexcept;
  // method.cpp: which arguments check_tensor_data looks at, which int lists each call materialises.
  void plan_call_checks();
  // method_execute.cpp
  et_error* call(Instruction& instr, et_exec_context* context);
  // How a run reports to its trace session: not at all; one call per span (ABI 1.5
  // and older tracers, sessions that record values); raw records (ABI 1.6).
  enum class Tracing { kOff, kSpans, kRecords };
  // One loop for all three: the untraced instantiation has no tracing code at all.
  template <Tracing kMode>
  et_error* run_chains(et_exec_context* context);
  // tracing_execute.cpp
  et_error* execute_traced();
  // An operator's span as a raw record, inline in the recorded loop (tracing_record.h).
  et_error* record_call(size_t chain, size_t pc, Instruction& instr, et_exec_context* context);
  void record_folded(size_t chain, size_t pc, const Instruction& instr, TracedCall& traced);
  static void describe(et_trace_record& record, const Instruction& instr, size_t chain, size_t pc, int32_t kind,
                       uint32_t flags);
  [[gnu::noinline]] et_error* record_delegate(size_t chain, size_t pc, Instruction& instr, et_exec_context* context);
  [[gnu::noinline]] et_error* call_spanned(size_t chain, size_t pc, Instruction& instr, TracedCall& traced,
                                           et_exec_context* context);
  void trace_outputs(const Instruction& instr, TracedCall& call);
  static size_t listed_outputs(const std::vector<et_value*>& args);
  et_error* fail_at(size_t chain, size_t pc, const Instruction& instr, et_error* cause);
  et_error* check_tensor_data(const Instruction& instr) const;
  et_error* jump_condition(int32_t value, size_t pc, bool* truth) const;
  TensorState* tensor_state(int32_t value) const { return values_[value].tensor.get(); }

  std::shared_ptr<Program> program_;
  const pte::ExecutionPlan* plan_ = nullptr;
  std::string name_;
  std::vector<AlignedBuffer> planned_;
  std::vector<AlignedBuffer> folded_;  // results of instructions computed at load
  std::vector<Value> values_;          // sized once at load: kernels hold pointers into it
  std::vector<std::vector<Instruction>> chains_;
  std::vector<Delegate> delegates_;
  std::vector<int32_t> inputs_, outputs_;
  std::vector<bool> input_set_;
  std::vector<bool> input_memory_reused_;  // planned memory the run overwrites: set again before each execute
  ScratchArena scratch_;
  uint64_t executions_ = 0;
  std::shared_ptr<TraceSession> trace_;  // tracing.h; null when the method is not traced
  std::unique_ptr<TracedCall> traced_;   // the runs' per-call state, made once with trace_
  const char* trace_method_name_ = nullptr;  // name_ as kept by trace_
};

}  // namespace etrt
