// Computing at load what every run would recompute from constants.
//
// ExecuTorch's exporter lowers nn.Linear to permute_copy(weight) + addmm, so a
// plain program transposes each weight on every run (a third of a small MLP's
// time). A layout op whose tensor inputs are all constants gives the same
// result every run: it is run once here, into memory of its own, and skipped
// afterwards.
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "../error.h"
#include "../logging.h"
#include "method.h"

namespace etrt {
namespace {

// Pure functions of their inputs that only move data (no state, no randomness).
bool is_foldable_operator(std::string_view name) {
  static const std::unordered_set<std::string_view> kLayoutOps = {
      "aten::permute_copy", "aten::t_copy",         "aten::transpose_copy", "aten::view_copy",
      "aten::expand_copy",  "aten::unsqueeze_copy", "aten::squeeze_copy",   "aten::clone",
  };
  return kLayoutOps.count(name.substr(0, name.find('.'))) > 0;
}

// Folded results hold a copy of constants: cap the memory they may add.
constexpr size_t kMaxFoldedBytes = size_t{256} << 20;

}  // namespace

// A kernel that fails here fails the load: its inputs are constants and the
// method has no control flow, so every run would fail the same way.
et_error* Method::fold_constant_layout_ops() {
  // Control flow could skip or repeat an instruction; keep such methods as they are.
  for (const auto& chain : chains_)
    for (const Instruction& instr : chain)
      if (instr.kind == Kind::JumpFalse) return nullptr;

  // Values some instruction writes or rebinds: an out argument, a move target,
  // a freed value. A folded input must be none of them; a folded output only
  // the one out argument of its own instruction.
  std::vector<int> writes(values_.size(), 0);
  std::vector<bool> touched(values_.size(), false);
  for (const auto& chain : chains_)
    for (const Instruction& instr : chain) {
      if ((instr.kind == Kind::Kernel || instr.kind == Kind::Prim) && !instr.arg_values.empty())
        ++writes[instr.arg_values.back()];
      if (instr.kind == Kind::Delegate)
        for (int32_t arg : instr.arg_values) touched[arg] = true;  // delegates may write any argument
      if (instr.kind == Kind::Move) touched[instr.move.from] = touched[instr.move.to] = true;
      if (instr.kind == Kind::Free) touched[instr.freed] = true;
    }
  for (int32_t v : inputs_) touched[v] = true;
  for (int32_t v : outputs_) touched[v] = true;

  size_t folded_bytes = 0, folded_count = 0;
  et_exec_context context{name_.c_str(), 0, &scratch_};
  for (size_t c = 0; c < chains_.size(); ++c)
    for (size_t pc = 0; pc < chains_[c].size(); ++pc) {
      Instruction& instr = chains_[c][pc];
      if (instr.kind != Kind::Kernel || instr.args.empty() || !is_foldable_operator(instr.name)) continue;
      const int32_t out = instr.arg_values.back();
      TensorState* slot = tensor_state(out);
      if (values_[out].value.tag != ET_VALUE_TENSOR || writes[out] != 1 || touched[out] || slot == nullptr) continue;
      bool constant_inputs = true, any_tensor = false;
      for (size_t i = 0; i < instr.args.size(); ++i) {
        const et_value* arg = instr.args[i];
        const int32_t v = instr.arg_values[i];
        if (v == out || arg->tag != ET_VALUE_TENSOR) continue;  // ints, lists and the out/return pair
        any_tensor = true;
        constant_inputs = constant_inputs && arg->tensor->is_const && writes[v] == 0 && !touched[v];
      }
      if (!any_tensor || !constant_inputs || slot->tensor.dynamism != ET_SHAPE_STATIC) continue;
      if (slot->bound_bytes > kMaxFoldedBytes - folded_bytes) continue;

      AlignedBuffer result(slot->bound_bytes);
      if (slot->bound_bytes > 0 && result.data() == nullptr) continue;  // not folded: the run computes it
      void* planned_data = slot->tensor.data;
      slot->tensor.data = result.data();
      context.instruction = pc;
      if (et_error* error = call(instr, &context)) {
        slot->tensor.data = planned_data;
        error = fail_at(c, pc, instr, error);
        error->message = program_->origin() + ": computing on constants at load: " + error->message;
        return error;
      }
      slot->tensor.is_const = 1;
      slot->planned = true;  // method-owned memory: never replaced by an input, never freed by the run
      folded_bytes += slot->bound_bytes;
      folded_.push_back(std::move(result));
      instr.kind = Kind::Folded;
      ++folded_count;
    }
  if (folded_count > 0)
    log_message(LogLevel::Debug, "method '" + name_ + "': computed " + std::to_string(folded_count) +
                                     " instruction(s) on constants at load (" + std::to_string(folded_bytes) + " bytes)");
  return nullptr;
}

}  // namespace etrt
