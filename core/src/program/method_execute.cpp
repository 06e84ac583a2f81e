// Running a method: the instructions of each chain in order, with jumps.
#include <cstdio>

#include "../error.h"
#include "method.h"
#include "tracing_record.h"

namespace etrt {
namespace {

constexpr uint64_t kMaxInstructionsPerRun = 10'000'000;

// A kernel or backend broke the ABI's rule (no exceptions across it): the
// exception ends here, as this call's error, and the process goes on. Called in
// the catch block; built-in operators are the host's own code (out of memory).
[[gnu::cold, gnu::noinline]] et_error* call_threw(bool built_in, const char* what, const std::string& name,
                                                 const std::string& plugin) noexcept {
  char call[256];  // no allocation here: memory may be what ran out
  std::snprintf(call, sizeof call, "%s '%s'", built_in ? "built-in operator" : what, name.c_str());
  return built_in ? host_exception_error(call) : plugin_exception_error(plugin, call);
}

}  // namespace

et_error* Method::fail_at(size_t chain, size_t pc, const Instruction& instr, et_error* cause) {
  std::string message = "method '" + name_ + "', instruction " + std::to_string(pc) +
                        (chain > 0 ? " of chain " + std::to_string(chain) : std::string()) + " (" + instr.name +
                        (instr.plugin.empty() ? std::string() : ", served by '" + instr.plugin + "'") + "): " +
                        cause->message;
  cause->message = std::move(message);
  if (cause->plugin.empty() && instr.kind != Kind::Prim) cause->plugin = instr.plugin;
  return cause;
}

// A tensor with bytes but no data (freed, or an unplanned value nothing set)
// must not reach a kernel: plugins may assume data is there.
et_error* Method::check_tensor_data(const Instruction& instr) const {
  for (uint32_t i : instr.data_checks) {
    const et_value* arg = instr.args[i];
    if (arg->tag == ET_VALUE_TENSOR && arg->tensor->data == nullptr && arg->tensor->nbytes > 0 &&
        !(instr.kind == Kind::Prim && i + 1 == instr.args.size()))  // et_view's out gets its data from the op
      return make_error(ET_ERR_INVALID_PROGRAM, "tensor argument " + std::to_string(i) +
                                                    " has no data (freed, or an unplanned value nothing produced)");
  }
  return nullptr;
}

// Kernel, built-in or delegate call; scratch memory lives until it returns.
et_error* Method::call(Instruction& instr, et_exec_context* context) {
  if (instr.kind != Kind::Delegate)
    for (int32_t list : instr.int_lists) materialise(list);
  if (!instr.data_checks.empty())  // planned and constant tensors need none (plan_call_checks)
    if (et_error* error = check_tensor_data(instr)) return error;
  et_error* error = nullptr;
  try {  // free while nothing throws (table-driven unwinding): the run loop pays nothing for it
    switch (instr.kind) {
      case Kind::Prim:
        error = instr.prim(instr.args.data(), instr.args.size());
        break;
      case Kind::Delegate: {
        Delegate& d = delegates_[instr.delegate];
        error = d.backend.execute(d.backend.user_data, d.handle, context, instr.args.data(), instr.args.size());
        break;
      }
      default:
        if (instr.kernel.state != nullptr)
          error = instr.kernel.run_prepared(instr.kernel.user_data, instr.kernel.state, context, instr.args.data(),
                                            instr.args.size());
        else
          error = instr.kernel.fn(instr.kernel.user_data, context, instr.args.data(), instr.args.size());
        break;
    }
  } catch (...) {
    error = call_threw(instr.kind == Kind::Prim, instr.kind == Kind::Delegate ? "backend" : "kernel", instr.name,
                       instr.plugin);
  }
  scratch_.reset();
  return error;
}

et_error* Method::jump_condition(int32_t value, size_t pc, bool* truth) const {
  const et_value& cond = values_[value].value;
  if (cond.tag == ET_VALUE_BOOL) {
    *truth = cond.as_int != 0;
    return nullptr;
  }
  if (cond.tag != ET_VALUE_TENSOR || cond.tensor->dtype != ET_DTYPE_BOOL)
    return make_error(ET_ERR_INVALID_PROGRAM, "method '" + name_ + "', instruction " + std::to_string(pc) +
                                                  ": jump condition is neither a bool nor a bool tensor");
  if (cond.tensor->data == nullptr && cond.tensor->nbytes > 0)
    return make_error(ET_ERR_INVALID_PROGRAM, "method '" + name_ + "', instruction " + std::to_string(pc) +
                                                  ": jump condition tensor has no data");
  *truth = true;
  const auto* data = static_cast<const uint8_t*>(cond.tensor->data);
  for (size_t i = 0; i < cond.tensor->nbytes; ++i) *truth = *truth && data[i] != 0;
  return nullptr;
}

template <Method::Tracing kMode>
et_error* Method::run_chains(et_exec_context* context) {
  uint64_t executed = 0;
  for (size_t c = 0; c < chains_.size(); ++c) {
    std::vector<Instruction>& chain = chains_[c];
    size_t pc = 0;
    while (pc < chain.size()) {
      if (++executed > kMaxInstructionsPerRun)
        return make_error(ET_ERR_INVALID_PROGRAM, "method '" + name_ + "': more than 10,000,000 instructions in one run (runaway loop?)");
      Instruction& instr = chain[pc];
      context->instruction = pc;
      switch (instr.kind) {
        case Kind::Kernel:
        case Kind::Prim:
        case Kind::Delegate: {
          et_error* error = nullptr;
          if constexpr (kMode == Tracing::kOff)
            error = call(instr, context);
          else if constexpr (kMode == Tracing::kSpans)
            error = call_spanned(c, pc, instr, *context->traced, context);
          else if (instr.kind == Kind::Delegate) [[unlikely]]
            error = record_delegate(c, pc, instr, context);
          else
            error = record_call(c, pc, instr, context);
          if (error) return fail_at(c, pc, instr, error);
          ++pc;
          break;
        }
        case Kind::Move:
          values_[instr.move.to].value = values_[instr.move.from].value;
          ++pc;
          break;
        case Kind::JumpFalse: {
          bool truth = false;
          if (et_error* error = jump_condition(instr.jump.condition, pc, &truth)) return error;
          pc = truth ? pc + 1 : instr.jump.destination;
          break;
        }
        case Kind::Folded:
          // Computed at load; a trace still lists it (zero length) so every operator instruction appears.
          if constexpr (kMode == Tracing::kSpans) call_spanned(c, pc, instr, *context->traced, context);
          if constexpr (kMode == Tracing::kRecords) record_folded(c, pc, instr, *context->traced);
          ++pc;
          break;
        case Kind::Free: {
          // The value's own tensor, never a constant (verify_instructions). Planned memory belongs to the plan:
          // freeing releases only data the run attached.
          TensorState& freed = *values_[instr.freed].tensor;
          if (!freed.planned) freed.tensor.data = nullptr;
          ++pc;
          break;
        }
      }
    }
  }
  return nullptr;
}

template et_error* Method::run_chains<Method::Tracing::kSpans>(et_exec_context* context);    // tracing_execute.cpp
template et_error* Method::run_chains<Method::Tracing::kRecords>(et_exec_context* context);  // tracing_execute.cpp

et_error* Method::execute() {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (!input_set_[i])
      return make_error(ET_ERR_INVALID_STATE,
                        "method '" + name_ + "': input " + std::to_string(i) +
                            (executions_ > 0 && input_memory_reused_[i]
                                 ? " must be set again before each execute (the program reuses its memory during a run)"
                                 : " was not set"));
  et_error* error = nullptr;
  if (trace_ != nullptr) [[unlikely]] {
    error = execute_traced();
  } else {
    et_exec_context context{name_.c_str(), 0, &scratch_};
    error = run_chains<Tracing::kOff>(&context);
  }
  if (error != nullptr) return error;
  ++executions_;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (input_memory_reused_[i]) input_set_[i] = false;
  return nullptr;
}

}  // namespace etrt
