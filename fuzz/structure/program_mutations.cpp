// The program-level mutations of fuzz/structure/program_mutations.h. Each draws one
// place in the object tree and changes it the way a crafted file would: a value
// index that points at the wrong kind of value or past the table, an instruction of
// another kind with the same operands, a list one longer or shorter than its
// readers expect, a size whose products overflow.
#include "program_mutations.h"

#include <algorithm>
#include <string>
#include <utility>

#include "list_mutations.h"
#include "mutation_table.h"

namespace etrt_fuzz {
namespace {

using pte::ExecutionPlanT;
using pte::InstructionArguments;
using pte::KernelTypes;

// Operators a program can name: the runtime's built-in prim operators and portable kernels that
// take lists, sizes and indices. A kernel call renamed to one of these gets operands it never expected.
struct OperatorName {
  const char* name;
  const char* overload;
};
constexpr OperatorName kOperatorNames[] = {
    {"aten::_local_scalar_dense", "default"}, {"aten::_local_scalar_dense", ""},
    {"executorch_prim::et_view", "default"},  {"aten::sym_size", "int"},
    {"aten::sym_numel", ""},                  {"executorch_prim::add", "Scalar"},
    {"executorch_prim::mul", "Scalar"},       {"executorch_prim::floordiv", "int"},
    {"executorch_prim::mod", "Scalar"},       {"executorch_prim::truediv", "Scalar"},
    {"executorch_prim::neg", "Scalar"},       {"executorch_prim::eq", "Scalar"},
    {"executorch_prim::sym_max", "Scalar"},   {"aten::view_copy", "out"},
    {"aten::gather", "out"},                  {"aten::index", "Tensor_out"},
    {"aten::index_select", "out"},            {"aten::cat", "out"},
    {"aten::stack", "out"},                   {"aten::embedding", "out"},
    {"aten::copy_", ""},                      {"aten::add", "out"},
    {"aten::mul", "out"},                     {"aten::mm", "out"},
    {"aten::bmm", "out"},                     {"aten::permute_copy", "out"},
    {"aten::full", "out"},                    {"aten::arange", "start_out"},
    {"aten::scalar_tensor", "out"},           {"aten::slice_copy", "Tensor_out"},
    {"aten::select_copy", "int_out"},         {"aten::expand_copy", "out"},
    {"aten::split_with_sizes_copy", "out"},   {"aten::where", "self_out"},
    {"aten::sum", "IntList_out"},             {"aten::_to_copy", "out"},
    {"dim_order_ops::_to_dim_order_copy", "out"}, {"aten::unsqueeze_copy", "out"},
    {"aten::squeeze_copy", "dims_out"},       {"aten::constant_pad_nd", "out"},
    {"aten::convolution", "out"},             {"aten::max_pool2d_with_indices", "out"},
    {"aten::addmm", "out"},                   {"aten::_softmax", "out"},
    {"aten::native_layer_norm", "out"},       {"aten::clone", "out"},
    {"aten::masked_fill", "Scalar_out"},      {"aten::argmax", "out"},
};

constexpr pte::ScalarType kScalarTypes[] = {
    pte::ScalarType::BYTE,  pte::ScalarType::CHAR,   pte::ScalarType::SHORT, pte::ScalarType::INT,
    pte::ScalarType::LONG,  pte::ScalarType::HALF,   pte::ScalarType::FLOAT, pte::ScalarType::DOUBLE,
    pte::ScalarType::BOOL,  pte::ScalarType::QINT8,  pte::ScalarType::BFLOAT16, pte::ScalarType::UINT16,
    pte::ScalarType::QUINT4X2, static_cast<pte::ScalarType>(8), static_cast<pte::ScalarType>(30),
    static_cast<pte::ScalarType>(-1), static_cast<pte::ScalarType>(127)};

ExecutionPlanT* pick_plan(PteFile& file, Random& random) {
  auto& plans = file.program->execution_plan;
  return plans.empty() ? nullptr : random.pick(plans).get();
}

int32_t to_int32(int64_t v) { return static_cast<int32_t>(static_cast<uint64_t>(v)); }

// A value index of the given kind, or any index when the plan has none of that kind.
int32_t value_of_kind(ExecutionPlanT& plan, KernelTypes kind, Random& random) {
  std::vector<int32_t> matching;
  for (size_t i = 0; i < plan.values.size(); ++i)
    if (plan.values[i]->val.type == kind) matching.push_back(static_cast<int32_t>(i));
  if (matching.empty()) return to_int32(random.index(0, static_cast<int64_t>(plan.values.size())));
  return random.pick(matching);
}

// A value of a plan, both drawn at random; nullptr when the plan has no values, or (with_table)
// when the value's union has no table.
pte::KernelTypesUnion* pick_value(PteFile& file, Random& random, ExecutionPlanT** plan, bool with_table) {
  *plan = pick_plan(file, random);
  if (*plan == nullptr || (*plan)->values.empty()) return nullptr;
  pte::KernelTypesUnion* val = &random.pick((*plan)->values)->val;
  return with_table && val->value == nullptr ? nullptr : val;
}

std::vector<pte::InstructionT*> instructions(ExecutionPlanT& plan) {
  std::vector<pte::InstructionT*> out;
  for (auto& chain : plan.chains)
    for (auto& instruction : chain->instructions) out.push_back(instruction.get());
  return out;
}

// The value operands of an instruction (not its operator, delegate or jump target).
std::vector<int32_t*> value_operands(pte::InstructionT& instruction) {
  auto& args = instruction.instr_args;
  if (args.value == nullptr) return {};
  std::vector<int32_t*> out;
  switch (args.type) {
    case InstructionArguments::KernelCall:
      for (int32_t& a : args.AsKernelCall()->args) out.push_back(&a);
      break;
    case InstructionArguments::DelegateCall:
      for (int32_t& a : args.AsDelegateCall()->args) out.push_back(&a);
      break;
    case InstructionArguments::MoveCall:
      out = {&args.AsMoveCall()->move_from, &args.AsMoveCall()->move_to};
      break;
    case InstructionArguments::JumpFalseCall: out = {&args.AsJumpFalseCall()->cond_value_index}; break;
    case InstructionArguments::FreeCall: out = {&args.AsFreeCall()->value_index}; break;
    default: break;
  }
  return out;
}

// Every index an instruction or the plan's interface holds, with the size of the table it indexes.
struct Operand {
  int32_t* field;
  int64_t count;
};

std::vector<Operand> operands(ExecutionPlanT& plan) {
  std::vector<Operand> out;
  const auto values = static_cast<int64_t>(plan.values.size());
  for (auto& chain : plan.chains) {
    for (auto& instruction : chain->instructions) {
      for (int32_t* field : value_operands(*instruction)) out.push_back({field, values});
      auto& args = instruction->instr_args;
      if (args.value == nullptr) continue;
      if (auto* call = args.AsKernelCall()) out.push_back({&call->op_index, static_cast<int64_t>(plan.operators.size())});
      if (auto* call = args.AsDelegateCall())
        out.push_back({&call->delegate_index, static_cast<int64_t>(plan.delegates.size())});
      if (auto* jump = args.AsJumpFalseCall())
        out.push_back({&jump->destination_instruction, static_cast<int64_t>(chain->instructions.size())});
    }
    for (int32_t& i : chain->inputs) out.push_back({&i, values});
    for (int32_t& i : chain->outputs) out.push_back({&i, values});
  }
  for (int32_t& i : plan.inputs) out.push_back({&i, values});
  for (int32_t& i : plan.outputs) out.push_back({&i, values});
  return out;
}

// A Free, Move or JumpFalse aimed at `next`'s operands: frees what it is about to read, moves
// another value of the same kind over it, or jumps around it.
pte::InstructionT instruction_before(ExecutionPlanT& plan, pte::InstructionT* next, size_t chain_length,
                                     Random& random) {
  std::vector<int32_t*> targets = next ? value_operands(*next) : std::vector<int32_t*>{};
  int32_t target = targets.empty() ? to_int32(random.index(0, static_cast<int64_t>(plan.values.size())))
                                   : *random.pick(targets);
  pte::InstructionT instruction;
  switch (random.below(3)) {
    case 0: {
      pte::FreeCallT free_call;
      free_call.value_index = target;
      instruction.instr_args.Set(std::move(free_call));
      break;
    }
    case 1: {
      pte::MoveCallT move;
      bool known = target >= 0 && static_cast<size_t>(target) < plan.values.size();
      move.move_from = known ? value_of_kind(plan, plan.values[target]->val.type, random)
                             : to_int32(random.index(0, static_cast<int64_t>(plan.values.size())));
      move.move_to = target;
      if (random.one_in(3)) std::swap(move.move_from, move.move_to);
      instruction.instr_args.Set(std::move(move));
      break;
    }
    default: {
      pte::JumpFalseCallT jump;
      jump.cond_value_index = random.one_in(2) ? value_of_kind(plan, KernelTypes::Bool, random) : target;
      jump.destination_instruction = to_int32(random.index(0, static_cast<int64_t>(chain_length + 1)));
      instruction.instr_args.Set(std::move(jump));
      break;
    }
  }
  return instruction;
}

bool instruction_kind(PteFile& file, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  if (plan == nullptr) return false;
  std::vector<pte::InstructionT*> all = instructions(*plan);
  if (all.empty()) return false;
  pte::InstructionT& instruction = *random.pick(all);
  std::vector<int32_t> old;
  for (int32_t* field : value_operands(instruction)) old.push_back(*field);
  const auto values = static_cast<int64_t>(plan->values.size());
  auto operand = [&](size_t i) {
    if (i < old.size() && !random.one_in(4)) return old[i];
    return old.empty() || random.one_in(2) ? to_int32(random.index(0, values)) : random.pick(old);
  };
  if (old.empty())
    for (size_t n = 1 + random.below(4); n > 0; --n) old.push_back(to_int32(random.index(0, values)));
  auto kind = static_cast<InstructionArguments>(1 + random.below(5));
  if (kind == instruction.instr_args.type) kind = static_cast<InstructionArguments>(1 + (static_cast<int>(kind) % 5));
  switch (kind) {
    case InstructionArguments::KernelCall: {
      pte::KernelCallT call;
      call.op_index = to_int32(random.index(0, static_cast<int64_t>(plan->operators.size())));
      call.args = old;
      instruction.instr_args.Set(std::move(call));
      break;
    }
    case InstructionArguments::DelegateCall: {
      pte::DelegateCallT call;
      call.delegate_index = to_int32(random.index(0, static_cast<int64_t>(plan->delegates.size())));
      call.args = old;
      instruction.instr_args.Set(std::move(call));
      break;
    }
    case InstructionArguments::MoveCall: {
      pte::MoveCallT move;
      move.move_from = operand(0);
      move.move_to = operand(1);
      instruction.instr_args.Set(std::move(move));
      break;
    }
    case InstructionArguments::JumpFalseCall: {
      pte::JumpFalseCallT jump;
      jump.cond_value_index = operand(0);
      jump.destination_instruction = to_int32(random.index(0, static_cast<int64_t>(all.size())));
      instruction.instr_args.Set(std::move(jump));
      break;
    }
    default: {
      pte::FreeCallT free_call;
      free_call.value_index = operand(random.below(old.size()));
      instruction.instr_args.Set(std::move(free_call));
      break;
    }
  }
  return true;
}

bool operand_index(PteFile& file, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  if (plan == nullptr) return false;
  std::vector<Operand> all = operands(*plan);
  if (all.empty()) return false;
  Operand& operand = random.pick(all);
  *operand.field = to_int32(random.index(*operand.field, operand.count));
  return true;
}

bool operand_list(PteFile& file, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  if (plan == nullptr) return false;
  std::vector<std::vector<int32_t>*> lists;
  for (pte::InstructionT* instruction : instructions(*plan)) {
    if (auto* call = instruction->instr_args.AsKernelCall()) lists.push_back(&call->args);
    if (auto* call = instruction->instr_args.AsDelegateCall()) lists.push_back(&call->args);
  }
  if (lists.empty()) return false;
  return change_length(*random.pick(lists), random, to_int32(random.index(0, static_cast<int64_t>(plan->values.size()))));
}

bool instruction_list(PteFile& file, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  if (plan == nullptr || plan->chains.empty()) return false;
  auto& list = random.pick(plan->chains)->instructions;
  if (random.one_in(2)) {
    size_t at = random.below(list.size() + 1);
    pte::InstructionT* next = at < list.size() ? list[at].get() : nullptr;
    list.insert(list.begin() + static_cast<ptrdiff_t>(at),
                std::make_unique<pte::InstructionT>(instruction_before(*plan, next, list.size(), random)));
    return true;
  }
  return change_owned_length(list, random);
}

bool tensor_field(ExecutionPlanT& plan, pte::TensorT& tensor, PteFile& file, Random& random) {
  switch (random.below(10)) {
    case 0: tensor.scalar_type = kScalarTypes[random.below(sizeof kScalarTypes / sizeof kScalarTypes[0])]; return true;
    case 1: tensor.storage_offset = random.int32(tensor.storage_offset); return true;
    case 2:
    case 3:
      if (tensor.sizes.empty()) return false;
      if (random.one_in(4)) {
        int32_t size = random.int32(0);
        for (int32_t& s : tensor.sizes) s = size;  // every dimension the same boundary: products overflow
      } else {
        int32_t& size = random.pick(tensor.sizes);
        size = random.int32(size);
      }
      return true;
    case 4:
      if (tensor.dim_order.empty()) return false;
      if (random.one_in(2) && tensor.dim_order.size() > 1) {
        std::swap(tensor.dim_order[random.below(tensor.dim_order.size())], tensor.dim_order[random.below(tensor.dim_order.size())]);
      } else {
        const uint8_t orders[] = {0, 1, static_cast<uint8_t>(tensor.dim_order.size()), 255, 16};
        random.pick(tensor.dim_order) = orders[random.below(sizeof orders)];
      }
      return true;
    case 5:
      tensor.data_buffer_idx = static_cast<uint32_t>(random.index(tensor.data_buffer_idx, static_cast<int64_t>(file.program->constant_buffer.size())));
      return true;
    case 6:
      if (!tensor.allocation_info) return false;
      if (random.one_in(2))
        tensor.allocation_info->memory_id = static_cast<uint32_t>(random.index(tensor.allocation_info->memory_id, static_cast<int64_t>(plan.non_const_buffer_sizes.size())));
      else if (random.one_in(2))
        tensor.allocation_info->memory_offset_low = random.uint32(tensor.allocation_info->memory_offset_low, 0);
      else
        tensor.allocation_info->memory_offset_high = random.uint32(tensor.allocation_info->memory_offset_high, 0);
      return true;
    case 7: tensor.shape_dynamism = static_cast<pte::TensorShapeDynamism>(random.below(4)); return true;
    case 8: tensor.layout = static_cast<int8_t>(random.below(3)); return true;
    default:
      if (!tensor.extra_tensor_info) tensor.extra_tensor_info = std::make_unique<pte::ExtraTensorInfoT>();
      tensor.extra_tensor_info->location = static_cast<pte::TensorDataLocation>(random.below(3));
      tensor.extra_tensor_info->fully_qualified_name = random.one_in(2) ? "" : "missing.weight";
      tensor.extra_tensor_info->mutable_data_segments_idx = random.uint64(tensor.extra_tensor_info->mutable_data_segments_idx);
      return true;
  }
}

bool value_field(PteFile& file, Random& random) {
  ExecutionPlanT* plan = nullptr;
  pte::KernelTypesUnion* picked = pick_value(file, random, &plan, /*with_table=*/true);
  if (picked == nullptr) return false;
  pte::KernelTypesUnion& val = *picked;
  switch (val.type) {
    case KernelTypes::Int: val.AsInt()->int_val = random.int64(val.AsInt()->int_val); return true;
    case KernelTypes::Bool: val.AsBool()->bool_val = !val.AsBool()->bool_val; return true;
    case KernelTypes::Double: val.AsDouble()->double_val = random.real(val.AsDouble()->double_val); return true;
    case KernelTypes::String: val.AsString()->string_val = random.one_in(2) ? "" : "\xff\xfe"; return true;
    case KernelTypes::Tensor: return tensor_field(*plan, *val.AsTensor(), file, random);
    case KernelTypes::IntList: {
      auto& items = val.AsIntList()->items;
      if (items.empty()) return false;
      int64_t& item = random.pick(items);
      item = random.one_in(2) ? value_of_kind(*plan, KernelTypes::Int, random) : random.index(item, static_cast<int64_t>(plan->values.size()));
      return true;
    }
    case KernelTypes::DoubleList: {
      auto& items = val.AsDoubleList()->items;
      if (items.empty()) return false;
      double& item = random.pick(items);
      item = random.real(item);
      return true;
    }
    case KernelTypes::TensorList:
    case KernelTypes::OptionalTensorList: {
      auto& items = val.type == KernelTypes::TensorList ? val.AsTensorList()->items : val.AsOptionalTensorList()->items;
      if (items.empty()) return false;
      int32_t& item = random.pick(items);
      item = to_int32(random.index(item, static_cast<int64_t>(plan->values.size())));
      return true;
    }
    default: return false;
  }
}

// A fresh value of `kind`, made of the plan's own values where it refers to some.
void fresh_value(ExecutionPlanT& plan, pte::KernelTypesUnion& val, KernelTypes kind, Random& random) {
  const auto values = static_cast<int64_t>(plan.values.size());
  switch (kind) {
    case KernelTypes::Null: val.Set(pte::NullT{}); break;
    case KernelTypes::Int: {
      pte::IntT v;
      v.int_val = random.int64(0);
      val.Set(std::move(v));
      break;
    }
    case KernelTypes::Bool: {
      pte::BoolT v;
      v.bool_val = random.one_in(2);
      val.Set(std::move(v));
      break;
    }
    case KernelTypes::Double: {
      pte::DoubleT v;
      v.double_val = random.real(1.0);
      val.Set(std::move(v));
      break;
    }
    case KernelTypes::Tensor: {
      int32_t like = value_of_kind(plan, KernelTypes::Tensor, random);
      if (like >= 0 && like < values && plan.values[like]->val.AsTensor() != nullptr) {
        val.Set(pte::TensorT(*plan.values[like]->val.AsTensor()));
      } else {
        pte::TensorT t;
        t.scalar_type = pte::ScalarType::FLOAT;
        t.sizes = {2};
        t.dim_order = {0};
        val.Set(std::move(t));
      }
      break;
    }
    case KernelTypes::String: {
      pte::StringT v;
      v.string_val = "fuzz";
      val.Set(std::move(v));
      break;
    }
    case KernelTypes::IntList: {
      pte::IntListT v;
      for (size_t n = random.below(4); n > 0; --n) v.items.push_back(value_of_kind(plan, KernelTypes::Int, random));
      val.Set(std::move(v));
      break;
    }
    case KernelTypes::DoubleList: {
      pte::DoubleListT v;
      v.items = {1.0, random.real(0.0)};
      val.Set(std::move(v));
      break;
    }
    case KernelTypes::BoolList: {
      pte::BoolListT v;
      v.items = {true, false};
      val.Set(std::move(v));
      break;
    }
    case KernelTypes::TensorList:
    case KernelTypes::OptionalTensorList: {
      std::vector<int32_t> items;
      for (size_t n = random.below(4); n > 0; --n) items.push_back(value_of_kind(plan, KernelTypes::Tensor, random));
      if (kind == KernelTypes::TensorList) {
        pte::TensorListT v;
        v.items = std::move(items);
        val.Set(std::move(v));
      } else {
        items.push_back(-1);
        pte::OptionalTensorListT v;
        v.items = std::move(items);
        val.Set(std::move(v));
      }
      break;
    }
    default: break;
  }
}

bool value_kind(PteFile& file, Random& random) {
  ExecutionPlanT* plan = nullptr;
  pte::KernelTypesUnion* picked = pick_value(file, random, &plan, /*with_table=*/false);
  if (picked == nullptr) return false;
  pte::KernelTypesUnion& val = *picked;
  if (random.one_in(8)) {  // the type stays, its table goes (the verifier accepts this)
    KernelTypes kind = val.type == KernelTypes::NONE ? KernelTypes::Tensor : val.type;
    val.Reset();
    val.type = kind;
    return true;
  }
  if (random.one_in(16)) {  // a type this schema does not have
    val.Reset();
    val.type = static_cast<KernelTypes>(12 + random.below(244));
    return true;
  }
  auto kind = static_cast<KernelTypes>(random.below(12));
  if (kind == val.type) kind = static_cast<KernelTypes>((static_cast<int>(kind) + 1) % 12);
  if (kind == KernelTypes::NONE) {
    val.Reset();
    return true;
  }
  fresh_value(*plan, val, kind, random);
  return true;
}

bool list_length(PteFile& file, Random& random) {
  ExecutionPlanT* plan = nullptr;
  pte::KernelTypesUnion* picked = pick_value(file, random, &plan, /*with_table=*/true);
  if (picked == nullptr) return false;
  pte::KernelTypesUnion& val = *picked;
  switch (val.type) {
    case KernelTypes::Tensor: {
      pte::TensorT& t = *val.AsTensor();
      if (random.one_in(2)) return change_length(t.sizes, random, random.int32(1));
      return change_length(t.dim_order, random, static_cast<uint8_t>(t.dim_order.size()));
    }
    case KernelTypes::IntList:
      return change_length(val.AsIntList()->items, random, static_cast<int64_t>(value_of_kind(*plan, KernelTypes::Int, random)));
    case KernelTypes::TensorList:
      return change_length(val.AsTensorList()->items, random, to_int32(random.index(0, static_cast<int64_t>(plan->values.size()))));
    case KernelTypes::OptionalTensorList: return change_length(val.AsOptionalTensorList()->items, random, -1);
    case KernelTypes::DoubleList: return change_length(val.AsDoubleList()->items, random, random.real(0.0));
    case KernelTypes::BoolList: return change_length(val.AsBoolList()->items, random, true);
    default: return false;
  }
}

bool values_table(PteFile& file, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  if (plan == nullptr) return false;
  return change_owned_length(plan->values, random);
}

bool allocation(PteFile& file, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  if (plan == nullptr) return false;
  std::vector<pte::TensorT*> tensors;
  for (auto& value : plan->values)
    if (auto* t = value->val.AsTensor(); t != nullptr && value->val.value != nullptr) tensors.push_back(t);
  if (tensors.empty()) return false;
  pte::TensorT& tensor = *random.pick(tensors);
  switch (random.below(4)) {
    case 0: tensor.allocation_info.reset(); return true;  // no longer planned: constant, input or nothing
    case 1: {
      pte::TensorT& other = *random.pick(tensors);  // alias another tensor's memory
      if (!other.allocation_info) return false;
      tensor.allocation_info = std::make_unique<pte::AllocationDetailsT>(*other.allocation_info);
      return true;
    }
    case 2:
      tensor.allocation_info = std::make_unique<pte::AllocationDetailsT>();
      tensor.allocation_info->memory_id = static_cast<uint32_t>(random.index(1, static_cast<int64_t>(plan->non_const_buffer_sizes.size())));
      tensor.allocation_info->memory_offset_low = random.uint32(0, 64);
      return true;
    default:
      tensor.data_buffer_idx = static_cast<uint32_t>(random.index(1, static_cast<int64_t>(file.program->constant_buffer.size())));
      return true;
  }
}

bool operator_name(PteFile& file, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  if (plan == nullptr) return false;
  if (plan->operators.empty() || random.one_in(8)) plan->operators.push_back(std::make_unique<pte::OperatorT>());
  pte::OperatorT& op = *random.pick(plan->operators);
  switch (random.below(4)) {
    case 0:
    case 1: {
      const OperatorName& name = kOperatorNames[random.below(sizeof kOperatorNames / sizeof kOperatorNames[0])];
      op.name = name.name;
      op.overload = name.overload;
      return true;
    }
    case 2: {  // another operator of the program
      ExecutionPlanT* donor = pick_plan(file, random);
      if (donor->operators.empty()) return false;
      op = *random.pick(donor->operators);
      return true;
    }
    default:
      if (random.one_in(2)) op.overload = random.one_in(2) ? "" : "out";
      else op.name = op.name.substr(0, random.below(op.name.size() + 1));
      return true;
  }
}

bool plan_io(PteFile& file, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  if (plan == nullptr) return false;
  const auto values = static_cast<int64_t>(plan->values.size());
  std::vector<std::vector<int32_t>*> lists = {&plan->inputs, &plan->outputs};
  for (auto& chain : plan->chains) lists.insert(lists.end(), {&chain->inputs, &chain->outputs});
  return change_length(*random.pick(lists), random, to_int32(random.index(0, values)));
}

bool buffer_sizes(PteFile& file, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  if (plan == nullptr) return false;
  auto& sizes = plan->non_const_buffer_sizes;
  if (sizes.empty() || random.one_in(3)) return change_length(sizes, random, random.int64(64));
  int64_t& size = random.pick(sizes);
  size = random.int64(size);
  return true;
}

bool delegate_reference(PteFile& file, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  if (plan == nullptr || plan->delegates.empty()) return false;
  pte::BackendDelegateT& delegate = *random.pick(plan->delegates);
  switch (random.below(4)) {
    case 0:
      if (!delegate.processed) delegate.processed = std::make_unique<pte::BackendDelegateDataReferenceT>();
      delegate.processed->location = delegate.processed->location == pte::DataLocation::INLINE ? pte::DataLocation::SEGMENT
                                                                                              : pte::DataLocation::INLINE;
      return true;
    case 1:
      if (!delegate.processed) return false;
      delegate.processed->index = static_cast<uint32_t>(random.index(delegate.processed->index, static_cast<int64_t>(file.program->segments.size())));
      return true;
    case 2: {
      const char* ids[] = {"XnnpackBackend", "", "NoSuchBackend", "XnnpackBackend\xff"};
      delegate.id = ids[random.below(4)];
      return true;
    }
    default:
      if (delegate.compile_specs.empty() || random.one_in(3)) return change_owned_length(delegate.compile_specs, random);
      auto& bytes = random.pick(delegate.compile_specs)->value;
      return change_length(bytes, random, static_cast<uint8_t>(random.bits()));
  }
}

// Named data, subsegment offsets, inline constant buffers and the segment table.
bool data_tables(PteFile& file, Random& random) {
  pte::ProgramT& program = *file.program;
  const auto segments = static_cast<int64_t>(program.segments.size());
  switch (random.below(5)) {
    case 0: {
      if (program.named_data.empty()) return false;
      pte::NamedDataT& named = *random.pick(program.named_data);
      if (random.one_in(2)) named.segment_index = static_cast<uint32_t>(random.index(named.segment_index, segments));
      else named.key = random.pick(program.named_data)->key + (random.one_in(2) ? "" : "x");
      return true;
    }
    case 1: {
      std::vector<pte::SubsegmentOffsetsT*> subs;
      if (program.constant_segment) subs.push_back(program.constant_segment.get());
      for (auto& sub : program.mutable_data_segments) subs.push_back(sub.get());
      if (subs.empty()) return false;
      pte::SubsegmentOffsetsT& sub = *random.pick(subs);
      if (random.one_in(3)) sub.segment_index = static_cast<uint32_t>(random.index(sub.segment_index, segments));
      else if (sub.offsets.empty() || random.one_in(3)) return change_length(sub.offsets, random, random.uint64(0));
      else {
        uint64_t& offset = random.pick(sub.offsets);
        offset = random.uint64(offset);
      }
      return true;
    }
    case 2: {
      if (program.constant_buffer.empty() || random.one_in(4)) return change_owned_length(program.constant_buffer, random);
      auto& storage = random.pick(program.constant_buffer)->storage;
      storage.resize(random.one_in(2) ? storage.size() / 2 : storage.size() + 1 + random.below(64));
      return true;
    }
    case 3: {  // a segment's entry points where its bytes are not
      if (program.segments.empty()) return false;
      size_t i = random.below(program.segments.size());
      file.raw.resize(program.segments.size(), true);
      file.segments.resize(program.segments.size());
      file.raw[i] = true;
      file.segments[i].clear();
      pte::DataSegmentT& entry = *program.segments[i];
      if (random.one_in(2)) entry.offset = random.uint64(entry.offset);
      else entry.size = random.uint64(entry.size);
      return true;
    }
    default: {  // a segment shorter or longer than what refers into it
      file.segments.resize(program.segments.size());
      file.raw.resize(program.segments.size(), true);
      std::vector<size_t> laid_out;
      for (size_t i = 0; i < file.segments.size(); ++i)
        if (!file.raw[i]) laid_out.push_back(i);
      if (laid_out.empty()) return false;
      auto& bytes = file.segments[random.pick(laid_out)];
      bytes.resize(random.one_in(2) ? bytes.size() / 2 : bytes.size() + 1 + random.below(64));
      return true;
    }
  }
}

bool plans(PteFile& file, Random& random) {
  auto& list = file.program->execution_plan;
  if (list.size() > 1 && random.one_in(2)) {
    random.pick(list)->name = random.pick(list)->name;  // two methods of one name
    return true;
  }
  return change_owned_length(list, random);
}

constexpr Mutation<PteFile> kMutations[] = {
    {"instruction_kind", instruction_kind, 3}, {"operand_index", operand_index, 5},
    {"operand_list", operand_list, 3},         {"instruction_list", instruction_list, 4},
    {"value_field", value_field, 6},           {"value_kind", value_kind, 3},
    {"list_length", list_length, 3},           {"values_table", values_table, 2},
    {"allocation", allocation, 2},             {"operator_name", operator_name, 3},
    {"plan_io", plan_io, 1},                   {"buffer_sizes", buffer_sizes, 1},
    {"delegate_reference", delegate_reference, 1}, {"data_tables", data_tables, 2},
    {"plans", plans, 1},
};

}  // namespace

const char* mutate_program(PteFile& file, Random& random) { return apply_one(kMutations, file, random); }

const std::vector<const char*>& program_mutation_names() {
  static const std::vector<const char*> names = names_of(kMutations);
  return names;
}

const char* cross_programs(PteFile& file, PteFile& donor, Random& random) {
  ExecutionPlanT* plan = pick_plan(file, random);
  ExecutionPlanT* other = pick_plan(donor, random);
  if (plan == nullptr || other == nullptr) return nullptr;
  switch (random.below(4)) {
    case 0: {
      std::vector<pte::InstructionT*> theirs = instructions(*other);
      if (theirs.empty() || plan->chains.empty()) return nullptr;
      auto& ours = random.pick(plan->chains)->instructions;
      ours.insert(ours.begin() + static_cast<ptrdiff_t>(random.below(ours.size() + 1)),
                  std::make_unique<pte::InstructionT>(*random.pick(theirs)));
      return "cross_instruction";
    }
    case 1:
      if (other->values.empty()) return nullptr;
      plan->values.push_back(std::make_unique<pte::EValueT>(*random.pick(other->values)));
      if (plan->values.size() > 1 && random.one_in(2)) std::swap(plan->values.back(), random.pick(plan->values));
      return "cross_value";
    case 2:
      if (other->operators.empty()) return nullptr;
      if (plan->operators.empty() || random.one_in(3)) plan->operators.push_back(std::make_unique<pte::OperatorT>());
      *random.pick(plan->operators) = *random.pick(other->operators);
      return "cross_operator";
    default: {
      std::vector<std::vector<uint8_t>*> ours = delegate_payloads(file);
      std::vector<std::vector<uint8_t>*> theirs = delegate_payloads(donor);
      if (ours.empty() || theirs.empty()) return nullptr;
      *random.pick(ours) = *random.pick(theirs);
      return "cross_delegate_payload";
    }
  }
}

}  // namespace etrt_fuzz
