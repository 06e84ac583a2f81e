#include "method.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "../error.h"
#include "../host_api.h"
#include "../registry.h"

namespace etrt {
namespace {

constexpr uint64_t kMaxInstructionsPerRun = 10'000'000;
constexpr uint64_t kMaxPlannedBytes = uint64_t{32} << 30;

std::string shape_text(const int64_t* sizes, int32_t rank) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string operator_name(const pte::Operator& op) {
  std::string name = op.name()->str();
  if (op.overload() != nullptr && op.overload()->size() > 0) name += "." + op.overload()->str();
  return name;
}

void compute_strides(et_tensor& t, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t i = t.rank; i-- > 0;) {
    uint8_t dim = t.dim_order[i];
    strides[dim] = stride;
    stride *= std::max<int64_t>(t.sizes[dim], 1);
  }
}

bool is_dense_in_order(const et_tensor& t) {
  int64_t expected = 1;
  for (int32_t i = t.rank; i-- > 0;) {
    uint8_t dim = t.dim_order != nullptr ? t.dim_order[i] : static_cast<uint8_t>(i);
    if (t.sizes[dim] != 1 && t.strides[dim] != expected) return false;
    expected *= t.sizes[dim];
  }
  return true;
}

}  // namespace

et_error* Method::load(std::shared_ptr<Program> program, const std::string& name, std::unique_ptr<Method>* out) {
  const pte::ExecutionPlan* plan = program->plan(name);
  if (plan == nullptr) {
    std::string names;
    for (size_t i = 0; i < program->method_count(); ++i) names += (i ? ", " : "") + program->method_name(i);
    return make_error(ET_ERR_NOT_FOUND, program->origin() + ": no method named '" + name + "' (methods: " + names + ")");
  }
  std::unique_ptr<Method> method(new Method());
  method->program_ = std::move(program);
  method->plan_ = plan;
  method->name_ = name;
  if (et_error* error = method->init_values()) return error;

  std::vector<std::string> missing;
  if (et_error* error = method->init_instructions(&missing)) return error;
  if (et_error* error = method->init_delegates(&missing)) return error;
  if (!missing.empty()) {
    std::string message = method->program_->origin() + ": method '" + name + "' needs " +
                          std::to_string(missing.size()) + " operator(s)/backend(s) no plugin provides:";
    for (const std::string& m : missing) message += "\n  " + m;
    return make_error(ET_ERR_NOT_FOUND, message);
  }
  if (plan->inputs())
    for (int32_t i : *plan->inputs()) method->inputs_.push_back(i);
  if (plan->outputs())
    for (int32_t o : *plan->outputs()) method->outputs_.push_back(o);
  method->input_set_.assign(method->inputs_.size(), false);
  method->find_reused_inputs();
  method->fold_constant_layout_ops();
  *out = std::move(method);
  return nullptr;
}

Method::~Method() {
  for (Delegate& d : delegates_)
    if (d.backend.destroy != nullptr) d.backend.destroy(d.backend.user_data, d.handle);
}

et_error* Method::init_values() {
  const auto* values = plan_->values();
  size_t count = values ? values->size() : 0;
  values_.assign(count, et_value{});
  tensor_index_.assign(count, -1);
  int_list_items_.resize(count);
  list_indices_.resize(count);
  tensor_list_items_.resize(count);

  // Planned memory: only as much of each buffer as the tensors in it use, so a
  // corrupt buffer size cannot make us allocate more than the file justifies.
  const auto* buffer_sizes = plan_->non_const_buffer_sizes();
  size_t buffer_count = buffer_sizes ? buffer_sizes->size() : 0;
  std::vector<uint64_t> used(buffer_count, 0);
  size_t tensor_count = 0;
  for (size_t v = 0; v < count; ++v) {
    const pte::Tensor* t = values->Get(static_cast<flatbuffers::uoffset_t>(v))->val_as_Tensor();
    if (t == nullptr) continue;
    ++tensor_count;
    if (const pte::AllocationDetails* alloc = t->allocation_info()) {
      size_t nbytes = 0;
      std::string ignored;
      Program::tensor_nbytes(*t, &nbytes, &ignored);  // validated at program load
      uint64_t offset = (static_cast<uint64_t>(alloc->memory_offset_high()) << 32) | alloc->memory_offset_low();
      used[alloc->memory_id()] = std::max<uint64_t>(used[alloc->memory_id()], offset + nbytes);
    }
  }
  uint64_t total = 0;
  for (uint64_t u : used) total += u;
  if (total > kMaxPlannedBytes)
    return make_error(ET_ERR_OUT_OF_MEMORY, program_->origin() + ": method '" + name_ + "' plans " +
                                                std::to_string(total) + " bytes of memory, more than the 32 GiB limit");
  planned_.reserve(buffer_count);
  for (size_t i = 0; i < buffer_count; ++i) {
    planned_.emplace_back(static_cast<size_t>(used[i]));
    if (used[i] > 0 && planned_.back().data() == nullptr)
      return make_error(ET_ERR_OUT_OF_MEMORY, program_->origin() + ": cannot allocate " + std::to_string(used[i]) +
                                                  " bytes of planned memory for method '" + name_ + "'");
  }

  tensors_.resize(tensor_count);
  size_t slot_index = 0;
  for (size_t v = 0; v < count; ++v) {
    const pte::EValue* source = values->Get(static_cast<flatbuffers::uoffset_t>(v));
    et_value& value = values_[v];
    value.struct_size = sizeof(et_value);
    switch (source->val_type()) {
      case pte::KernelTypes::Int:
        value.tag = ET_VALUE_INT;
        value.as_int = source->val_as_Int()->int_val();
        break;
      case pte::KernelTypes::Bool:
        value.tag = ET_VALUE_BOOL;
        value.as_int = source->val_as_Bool()->bool_val() ? 1 : 0;
        break;
      case pte::KernelTypes::Double:
        value.tag = ET_VALUE_DOUBLE;
        value.as_double = source->val_as_Double()->double_val();
        break;
      case pte::KernelTypes::String: {
        const flatbuffers::String* s = source->val_as_String()->string_val();
        value.tag = ET_VALUE_STRING;
        value.items = s ? s->c_str() : "";
        value.count = s ? s->size() : 0;
        break;
      }
      case pte::KernelTypes::DoubleList: {
        const auto* items = source->val_as_DoubleList()->items();
        value.tag = ET_VALUE_DOUBLE_LIST;
        value.items = items ? items->data() : nullptr;
        value.count = items ? items->size() : 0;
        break;
      }
      case pte::KernelTypes::BoolList: {
        const auto* items = source->val_as_BoolList()->items();
        value.tag = ET_VALUE_BOOL_LIST;
        value.items = items ? items->data() : nullptr;
        value.count = items ? items->size() : 0;
        break;
      }
      case pte::KernelTypes::Tensor: {
        const pte::Tensor* t = source->val_as_Tensor();
        TensorSlot& slot = tensors_[slot_index];
        tensor_index_[v] = static_cast<int32_t>(slot_index++);
        et_tensor& tensor = slot.tensor;
        tensor.struct_size = sizeof(et_tensor);
        tensor.dtype = static_cast<int32_t>(t->scalar_type());
        tensor.rank = static_cast<int32_t>(t->sizes() ? t->sizes()->size() : 0);
        for (int32_t i = 0; i < tensor.rank; ++i) {
          slot.sizes[i] = t->sizes()->Get(static_cast<flatbuffers::uoffset_t>(i));
          slot.dim_order[i] = t->dim_order()->Get(static_cast<flatbuffers::uoffset_t>(i));
        }
        tensor.sizes = slot.sizes;
        tensor.strides = slot.strides;
        tensor.dim_order = slot.dim_order;
        compute_strides(tensor, slot.strides);
        size_t nbytes = 0;
        std::string ignored;
        Program::tensor_nbytes(*t, &nbytes, &ignored);
        tensor.nbytes = nbytes;
        tensor.capacity_bytes = nbytes;
        std::copy(slot.sizes, slot.sizes + tensor.rank, slot.bound);
        slot.bound_bytes = nbytes;
        tensor.dynamism = static_cast<int32_t>(t->shape_dynamism());
        if (const pte::AllocationDetails* alloc = t->allocation_info()) {
          uint64_t offset = (static_cast<uint64_t>(alloc->memory_offset_high()) << 32) | alloc->memory_offset_low();
          tensor.data = planned_[alloc->memory_id()].data() + offset;
          slot.planned = true;
          if (t->data_buffer_idx() > 0) {
            ByteSpan initial = program_->mutable_initial_data(t->data_buffer_idx());
            std::memcpy(tensor.data, initial.data, nbytes);
          }
        } else if (t->data_buffer_idx() > 0) {
          tensor.data = const_cast<uint8_t*>(program_->constant_data(t->data_buffer_idx()).data);
          tensor.is_const = 1;
        }
        value.tag = ET_VALUE_TENSOR;
        value.tensor = &tensor;
        break;
      }
      default:
        value.tag = ET_VALUE_NULL;
        break;
    }
  }
  // Lists refer to other values, which now all exist.
  for (size_t v = 0; v < count; ++v) {
    const pte::EValue* source = values->Get(static_cast<flatbuffers::uoffset_t>(v));
    et_value& value = values_[v];
    if (source->val_type() == pte::KernelTypes::IntList) {
      const auto* items = source->val_as_IntList()->items();
      size_t n = items ? items->size() : 0;
      int_list_items_[v].assign(n, 0);
      list_indices_[v].resize(n);
      for (size_t i = 0; i < n; ++i)
        list_indices_[v][i] = static_cast<int32_t>(items->Get(static_cast<flatbuffers::uoffset_t>(i)));
      value.tag = ET_VALUE_INT_LIST;
      value.items = int_list_items_[v].data();
      value.count = n;
      value.value_indices = list_indices_[v].data();
      materialise(static_cast<int32_t>(v));
    } else if (source->val_type() == pte::KernelTypes::TensorList ||
               source->val_type() == pte::KernelTypes::OptionalTensorList) {
      bool optional = source->val_type() == pte::KernelTypes::OptionalTensorList;
      const auto* items = optional ? source->val_as_OptionalTensorList()->items() : source->val_as_TensorList()->items();
      std::vector<et_tensor*>& pointers = tensor_list_items_[v];
      for (size_t i = 0; items != nullptr && i < items->size(); ++i) {
        int32_t item = items->Get(static_cast<flatbuffers::uoffset_t>(i));
        pointers.push_back(item >= 0 && tensor_index_[item] >= 0 ? &tensors_[tensor_index_[item]].tensor : nullptr);
      }
      value.tag = optional ? ET_VALUE_OPTIONAL_TENSOR_LIST : ET_VALUE_TENSOR_LIST;
      value.items = pointers.data();
      value.count = pointers.size();
      value.value_indices = items ? items->data() : nullptr;
    }
  }
  return nullptr;
}

void Method::materialise(int32_t v) {
  et_value& list = values_[v];
  auto* items = int_list_items_[v].data();
  for (size_t i = 0; i < list.count; ++i) items[i] = values_[list.value_indices[i]].as_int;
}

et_error* Method::init_instructions(std::vector<std::string>* missing) {
  const auto* operators = plan_->operators();
  // One lookup per operator of the plan, however many instructions use it.
  struct Resolved {
    bool ok = false;
    et_kernel_fn kernel = nullptr;
    void* user_data = nullptr;
    PrimOpFn prim = nullptr;
    std::string plugin;
  };
  std::vector<Resolved> resolved(operators ? operators->size() : 0);
  std::vector<bool> looked_up(resolved.size(), false);
  auto resolve = [&](size_t op_index) -> Resolved& {
    Resolved& r = resolved[op_index];
    if (looked_up[op_index]) return r;
    looked_up[op_index] = true;
    std::string name = operator_name(*operators->Get(static_cast<flatbuffers::uoffset_t>(op_index)));
    if (PrimOpFn prim = find_prim_op(name)) {
      r = {true, nullptr, nullptr, prim, "etrt (built-in)"};
      return r;
    }
    Provider provider;
    if (et_error* error = Registry::instance().find(ET_ENTRY_OPERATOR, name, &provider)) {
      missing->push_back(error->message);
      delete error;
      return r;
    }
    r = {true, provider.kernel.fn, provider.kernel.user_data, nullptr, provider.plugin->name};
    return r;
  };

  const auto* chains = plan_->chains();
  for (size_t c = 0; chains != nullptr && c < chains->size(); ++c) {
    const pte::Chain* chain = chains->Get(static_cast<flatbuffers::uoffset_t>(c));
    std::vector<Instruction>& out = chains_.emplace_back();
    size_t count = chain->instructions() ? chain->instructions()->size() : 0;
    for (size_t i = 0; i < count; ++i) {
      const pte::Instruction* source = chain->instructions()->Get(static_cast<flatbuffers::uoffset_t>(i));
      Instruction& instr = out.emplace_back();
      const flatbuffers::Vector<int32_t>* args = nullptr;
      switch (source->instr_args_type()) {
        case pte::InstructionArguments::KernelCall: {
          const auto* call = source->instr_args_as_KernelCall();
          Resolved& r = resolve(static_cast<size_t>(call->op_index()));
          instr.kind = r.prim ? Kind::Prim : Kind::Kernel;
          instr.op_name = operator_name(*operators->Get(static_cast<flatbuffers::uoffset_t>(call->op_index())));
          instr.kernel = r.kernel;
          instr.user_data = r.user_data;
          instr.prim = r.prim;
          instr.plugin = r.plugin;
          args = call->args();
          break;
        }
        case pte::InstructionArguments::DelegateCall: {
          const auto* call = source->instr_args_as_DelegateCall();
          instr.kind = Kind::Delegate;
          instr.delegate = static_cast<size_t>(call->delegate_index());
          instr.op_name = plan_->delegates()->Get(static_cast<flatbuffers::uoffset_t>(call->delegate_index()))->id()->str();
          args = call->args();
          break;
        }
        case pte::InstructionArguments::MoveCall:
          instr.kind = Kind::Move;
          instr.a = source->instr_args_as_MoveCall()->move_from();
          instr.b = source->instr_args_as_MoveCall()->move_to();
          break;
        case pte::InstructionArguments::JumpFalseCall:
          instr.kind = Kind::JumpFalse;
          instr.a = source->instr_args_as_JumpFalseCall()->cond_value_index();
          instr.b = source->instr_args_as_JumpFalseCall()->destination_instruction();
          break;
        default:
          instr.kind = Kind::Free;
          instr.a = source->instr_args_as_FreeCall()->value_index();
          break;
      }
      if (args != nullptr)
        for (int32_t a : *args) {
          instr.args.push_back(&values_[a]);
          if (values_[a].tag == ET_VALUE_INT_LIST) instr.int_lists.push_back(a);
        }
    }
  }
  return nullptr;
}

et_error* Method::init_delegates(std::vector<std::string>* missing) {
  const auto* delegates = plan_->delegates();
  size_t count = delegates ? delegates->size() : 0;
  delegates_.resize(count);
  // Resolve every backend before initialising any, so all misses are reported together.
  std::vector<bool> found(count, false);
  for (size_t i = 0; i < count; ++i) {
    std::string id = delegates->Get(static_cast<flatbuffers::uoffset_t>(i))->id()->str();
    Provider provider;
    if (et_error* error = Registry::instance().find(ET_ENTRY_BACKEND, id, &provider)) {
      missing->push_back(error->message);
      delete error;
      continue;
    }
    delegates_[i].backend = provider.backend;
    delegates_[i].plugin = provider.plugin->name;
    found[i] = true;
  }
  if (!missing->empty()) return nullptr;
  for (size_t i = 0; i < count; ++i) {
    const pte::BackendDelegate* source = delegates->Get(static_cast<flatbuffers::uoffset_t>(i));
    Delegate& d = delegates_[i];
    std::string where = program_->origin() + ": method '" + name_ + "', delegate " + std::to_string(i) + " (" +
                        source->id()->str() + " from plugin '" + d.plugin + "')";
    if (!d.backend.is_available(d.backend.user_data)) {
      d.backend.destroy = nullptr;
      return make_error(ET_ERR_NOT_SUPPORTED, where + ": backend is not available on this machine");
    }
    std::vector<et_compile_spec> specs;
    if (source->compile_specs())
      for (const pte::CompileSpec* spec : *source->compile_specs()) {
        et_compile_spec s{};
        s.struct_size = sizeof s;
        s.key = spec->key()->c_str();
        s.value = spec->value() ? spec->value()->data() : nullptr;
        s.value_size = spec->value() ? spec->value()->size() : 0;
        specs.push_back(s);
      }
    ByteSpan blob = program_->delegate_blob(*source);
    et_backend_init_args args{};
    args.struct_size = sizeof args;
    args.processed = blob.data;
    args.processed_size = blob.size;
    args.compile_specs = specs.data();
    args.num_compile_specs = specs.size();
    args.named_data = program_->named_data();
    void* handle = nullptr;
    if (et_error* error = d.backend.init(d.backend.user_data, &args, &handle)) {
      d.backend.destroy = nullptr;  // nothing to destroy
      std::string message = where + " failed to initialise: " + error->message;
      int32_t code = error->code;
      std::string plugin = d.plugin;
      delete error;
      et_error* wrapped = make_error(code, message);
      wrapped->plugin = plugin;
      return wrapped;
    }
    d.handle = handle;
  }
  return nullptr;
}

// The memory planner gives an input's bytes to later tensors once the input is
// dead, so after a run such an input no longer holds what the caller set.
void Method::find_reused_inputs() {
  const auto* values = plan_->values();
  auto placement = [&](int32_t v, uint32_t* id, uint64_t* begin, uint64_t* end) {
    const pte::Tensor* t = values->Get(static_cast<flatbuffers::uoffset_t>(v))->val_as_Tensor();
    if (t == nullptr || t->allocation_info() == nullptr) return false;
    *id = t->allocation_info()->memory_id();
    *begin = (static_cast<uint64_t>(t->allocation_info()->memory_offset_high()) << 32) | t->allocation_info()->memory_offset_low();
    *end = *begin + tensors_[tensor_index_[v]].tensor.capacity_bytes;
    return true;
  };
  input_memory_reused_.assign(inputs_.size(), false);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    uint32_t id = 0;
    uint64_t begin = 0, end = 0;
    if (!placement(inputs_[i], &id, &begin, &end) || begin == end) continue;
    for (size_t v = 0; v < values_.size() && !input_memory_reused_[i]; ++v) {
      uint32_t other_id = 0;
      uint64_t other_begin = 0, other_end = 0;
      if (static_cast<int32_t>(v) == inputs_[i] || !placement(static_cast<int32_t>(v), &other_id, &other_begin, &other_end)) continue;
      input_memory_reused_[i] = other_id == id && other_begin < end && begin < other_end;
    }
  }
}

et_error* Method::set_input(size_t index, const et_value& value) {
  std::string where = "method '" + name_ + "', input " + std::to_string(index);
  if (index >= inputs_.size())
    return make_error(ET_ERR_INVALID_ARGUMENT, where + ": out of range (the method has " +
                                                   std::to_string(inputs_.size()) + " inputs)");
  et_value& target = values_[inputs_[index]];
  // The program's declaration decides (a move may have changed the value since).
  if (tensor_index_[inputs_[index]] < 0) {
    // Scalar inputs are constants baked into the program; they must match its declaration.
    const pte::EValue* declared = plan_->values()->Get(static_cast<flatbuffers::uoffset_t>(inputs_[index]));
    bool same = false;
    switch (declared->val_type()) {
      case pte::KernelTypes::Int:
        same = value.tag == ET_VALUE_INT && value.as_int == declared->val_as_Int()->int_val();
        break;
      case pte::KernelTypes::Bool:
        same = value.tag == ET_VALUE_BOOL && (value.as_int != 0) == declared->val_as_Bool()->bool_val();
        break;
      case pte::KernelTypes::Double: {
        double want = declared->val_as_Double()->double_val();
        same = value.tag == ET_VALUE_DOUBLE && std::fabs(value.as_double - want) <= 1e-4 + 1e-5 * std::fabs(want);
        break;
      }
      default:
        same = value.tag == target.tag;
        break;
    }
    if (!same)
      return make_error(ET_ERR_INVALID_ARGUMENT, where + ": this input is a constant baked into the program and the value given differs");
    input_set_[index] = true;
    return nullptr;
  }
  if (value.tag != ET_VALUE_TENSOR || value.tensor == nullptr)
    return make_error(ET_ERR_INVALID_ARGUMENT, where + ": expected a tensor");
  const et_tensor& given = *value.tensor;
  TensorSlot& slot = tensors_[tensor_index_[inputs_[index]]];
  et_tensor& t = slot.tensor;
  if (given.dtype != t.dtype)
    return make_error(ET_ERR_INVALID_ARGUMENT, where + ": expected dtype " + scalar_type_name(t.dtype) + ", got " +
                                                   scalar_type_name(given.dtype));
  if (given.rank != t.rank)
    return make_error(ET_ERR_INVALID_ARGUMENT, where + ": expected rank " + std::to_string(t.rank) + " " +
                                                   shape_text(slot.bound, t.rank) + ", got rank " + std::to_string(given.rank) +
                                                   " " + shape_text(given.sizes, given.rank));
  // Every check before anything changes, so a refused input leaves the method as it was.
  for (int32_t i = 0; i < t.rank; ++i)
    if (given.sizes[i] < 0)
      return make_error(ET_ERR_INVALID_ARGUMENT, where + ": negative size in " + shape_text(given.sizes, given.rank));
  for (int32_t i = 0; i < t.rank; ++i) {
    bool fits = t.dynamism == ET_SHAPE_STATIC ? given.sizes[i] == slot.bound[i]
                                              : given.sizes[i] >= 0 && given.sizes[i] <= slot.bound[i];
    if (!fits)
      return make_error(ET_ERR_INVALID_ARGUMENT,
                        where + ": shape " + shape_text(given.sizes, given.rank) + " does not fit the program's " +
                            (t.dynamism == ET_SHAPE_STATIC ? "static shape " : "bound ") + shape_text(slot.bound, t.rank) +
                            " (dim " + std::to_string(i) + ")");
  }
  // The caller's data must be dense in the input's dim order (row-major when it gives none).
  bool same_order = true;
  for (int32_t i = 0; i < t.rank; ++i)
    same_order = same_order && t.dim_order[i] == (given.dim_order ? given.dim_order[i] : static_cast<uint8_t>(i));
  if (!same_order || (given.strides != nullptr && !is_dense_in_order(given)))
    return make_error(ET_ERR_NOT_SUPPORTED, where + ": data must be dense in the input's dim order");
  size_t numel = 1;
  for (int32_t i = 0; i < t.rank; ++i) numel *= static_cast<size_t>(given.sizes[i]);
  if (given.data == nullptr && numel > 0) return make_error(ET_ERR_INVALID_ARGUMENT, where + ": tensor has no data");

  if (!slot.planned) t.capacity_bytes = slot.bound_bytes;  // an aliased input may grow back to its bound
  if (et_error* error = host_api()->tensor_resize(&t, given.sizes, static_cast<size_t>(t.rank))) {
    std::string message = where + ": " + error->message;
    delete error;
    return make_error(ET_ERR_INVALID_ARGUMENT, message);
  }
  if (slot.planned) {
    if (t.nbytes > 0) std::memcpy(t.data, given.data, t.nbytes);
  } else {
    t.data = given.data;
  }
  input_set_[index] = true;
  return nullptr;
}

et_error* Method::fail_at(size_t chain, size_t pc, const Instruction& instr, et_error* cause) {
  std::string message = "method '" + name_ + "', instruction " + std::to_string(pc) +
                        (chain > 0 ? " of chain " + std::to_string(chain) : std::string()) + " (" + instr.op_name +
                        (instr.plugin.empty() ? std::string() : ", served by '" + instr.plugin + "'") + "): " +
                        cause->message;
  cause->message = std::move(message);
  if (cause->plugin.empty() && instr.kind != Kind::Prim) cause->plugin = instr.plugin;
  return cause;
}

// A tensor with bytes but no data (freed, or an unplanned value nothing set)
// must not reach a kernel: plugins may assume data is there.
et_error* Method::check_tensor_data(const Instruction& instr) const {
  for (size_t i = 0; i < instr.args.size(); ++i) {
    const et_value* arg = instr.args[i];
    if (arg->tag == ET_VALUE_TENSOR && arg->tensor->data == nullptr && arg->tensor->nbytes > 0 &&
        !(instr.kind == Kind::Prim && i + 1 == instr.args.size()))  // et_view's out gets its data from the op
      return make_error(ET_ERR_INVALID_PROGRAM, "tensor argument " + std::to_string(i) +
                                                    " has no data (freed, or an unplanned value nothing produced)");
  }
  return nullptr;
}

et_error* Method::execute() {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (!input_set_[i])
      return make_error(ET_ERR_INVALID_STATE,
                        "method '" + name_ + "': input " + std::to_string(i) +
                            (executions_ > 0 && input_memory_reused_[i]
                                 ? " must be set again before each execute (the program reuses its memory during a run)"
                                 : " was not set"));
  uint64_t executed = 0;
  et_exec_context context{name_.c_str(), 0};
  for (size_t c = 0; c < chains_.size(); ++c) {
    const std::vector<Instruction>& chain = chains_[c];
    size_t pc = 0;
    while (pc < chain.size()) {
      if (++executed > kMaxInstructionsPerRun)
        return make_error(ET_ERR_INVALID_PROGRAM, "method '" + name_ + "': more than 10,000,000 instructions in one run (runaway loop?)");
      const Instruction& instr = chain[pc];
      context.instruction = pc;
      switch (instr.kind) {
        case Kind::Kernel:
        case Kind::Prim: {
          for (int32_t list : instr.int_lists) materialise(list);
          if (et_error* error = check_tensor_data(instr)) return fail_at(c, pc, instr, error);
          et_error* error = instr.kind == Kind::Prim
                                ? instr.prim(instr.args.data(), instr.args.size())
                                : instr.kernel(instr.user_data, &context, instr.args.data(), instr.args.size());
          if (error != nullptr) return fail_at(c, pc, instr, error);
          ++pc;
          break;
        }
        case Kind::Delegate: {
          Delegate& d = delegates_[instr.delegate];
          if (et_error* error = check_tensor_data(instr)) return fail_at(c, pc, instr, error);
          et_error* error = d.backend.execute(d.backend.user_data, d.handle, &context,
                                              const_cast<et_value* const*>(instr.args.data()), instr.args.size());
          if (error != nullptr) {
            Instruction named = instr;
            named.plugin = d.plugin;
            return fail_at(c, pc, named, error);
          }
          ++pc;
          break;
        }
        case Kind::Move:
          values_[instr.b] = values_[instr.a];
          ++pc;
          break;
        case Kind::JumpFalse: {
          const et_value& cond = values_[instr.a];
          bool truth = false;
          if (cond.tag == ET_VALUE_BOOL) {
            truth = cond.as_int != 0;
          } else if (cond.tag == ET_VALUE_TENSOR && cond.tensor->dtype == ET_DTYPE_BOOL) {
            if (cond.tensor->data == nullptr && cond.tensor->nbytes > 0)
              return make_error(ET_ERR_INVALID_PROGRAM, "method '" + name_ + "', instruction " + std::to_string(pc) +
                                                            ": jump condition tensor has no data");
            truth = true;
            const auto* data = static_cast<const uint8_t*>(cond.tensor->data);
            for (size_t i = 0; i < cond.tensor->nbytes; ++i) truth = truth && data[i] != 0;
          } else {
            return make_error(ET_ERR_INVALID_PROGRAM, "method '" + name_ + "', instruction " + std::to_string(pc) +
                                                          ": jump condition is neither a bool nor a bool tensor");
          }
          pc = truth ? pc + 1 : static_cast<size_t>(instr.b);
          break;
        }
        case Kind::Folded:
          ++pc;
          break;
        case Kind::Free:
          // Planned memory belongs to the plan: freeing releases only data the run attached.
          if (values_[instr.a].tag == ET_VALUE_TENSOR && tensor_index_[instr.a] >= 0 &&
              !tensors_[tensor_index_[instr.a]].planned)
            values_[instr.a].tensor->data = nullptr;
          ++pc;
          break;
      }
    }
  }
  ++executions_;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (input_memory_reused_[i]) input_set_[i] = false;
  return nullptr;
}

}  // namespace etrt
