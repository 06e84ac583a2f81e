// The load-time check of what every instruction that is not a plugin's call does
// to the values it names. After it, every value keeps the kind the program
// declares for the whole run (a tensor its dtype and rank, a list its length),
// so execution never meets an operand of the wrong kind and checks nothing of
// the sort per instruction.
#include "../error.h"
#include "method.h"

namespace etrt {
namespace {

std::string value_text(int32_t index, const et_value& value) {
  return "value " + std::to_string(index) + " (" + value_kind_text(value) + ")";
}

}  // namespace

// A Move makes the destination refer to what the source holds (a tensor, a list's items), as ExecuTorch's
// executor does. The destination keeps its declared kind only if the source has the same one; and the
// destination may be written by a later kernel, which must never write the program's own constants.
std::string Method::check_move(const MoveOperands& move) const {
  const et_value& from = values_[move.from].value;
  const et_value& to = values_[move.to].value;
  const std::string what = value_text(move.from, from) + " cannot move into " + value_text(move.to, to);
  if (from.tag != to.tag) return what + ": a move keeps the destination's kind";
  switch (from.tag) {
    case ET_VALUE_TENSOR:
      if (from.tensor->dtype != to.tensor->dtype || from.tensor->rank != to.tensor->rank)
        return what + ": a move keeps the destination's dtype and rank";
      if (from.tensor->is_const)
        return what + ": the source's data belongs to the program (a constant), and the destination may be written";
      return "";
    case ET_VALUE_INT_LIST:
    case ET_VALUE_DOUBLE_LIST:
    case ET_VALUE_BOOL_LIST:
    case ET_VALUE_TENSOR_LIST:
    case ET_VALUE_OPTIONAL_TENSOR_LIST:
      if (from.count != to.count) return what + ": a move keeps the destination's length";
      return "";
    default:
      return "";
  }
}

// Free releases a tensor's data for the rest of the run. Only data the run attached may go: an input aliased
// from the caller or a view. Planned memory belongs to the plan (freeing it releases nothing); a constant's
// data belongs to the program, and kernels rely on constants having it.
std::string Method::check_free(int32_t index) const {
  const et_value& value = values_[index].value;
  if (value.tag != ET_VALUE_TENSOR) return value_text(index, value) + " is not a tensor: only a tensor's data can be freed";
  if (value.tensor->is_const)
    return value_text(index, value) + " is a constant: its data belongs to the program and cannot be freed";
  return "";
}

std::string Method::check_jump(int32_t index) const {
  const et_value& value = values_[index].value;
  if (value.tag == ET_VALUE_BOOL || (value.tag == ET_VALUE_TENSOR && value.tensor->dtype == ET_DTYPE_BOOL)) return "";
  return "the condition, " + value_text(index, value) + ", is neither a bool nor a bool tensor";
}

// Runs on the values as the program declares them, before anything executes or is computed at load.
et_error* Method::verify_instructions() {
  for (size_t c = 0; c < chains_.size(); ++c)
    for (size_t pc = 0; pc < chains_[c].size(); ++pc) {
      const Instruction& instr = chains_[c][pc];
      std::string problem;
      switch (instr.kind) {
        case Kind::Prim:
          problem = check_prim_operands(instr.name, instr.args.data(), instr.args.size());
          break;
        case Kind::Move:
          problem = check_move(instr.move);
          break;
        case Kind::Free:
          problem = check_free(instr.freed);
          break;
        case Kind::JumpFalse:
          problem = check_jump(instr.jump.condition);
          break;
        default:  // plugin kernels and delegates check their own arguments
          break;
      }
      if (!problem.empty()) {
        et_error* error = fail_at(c, pc, instr, make_error(ET_ERR_INVALID_PROGRAM, problem));
        error->message = program_->origin() + ": " + error->message;
        return error;
      }
    }
  return nullptr;
}

}  // namespace etrt
