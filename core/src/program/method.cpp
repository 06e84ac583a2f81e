// Loading a method: values, then delegates, then instructions with their kernels.
#include "method.h"

#include <cstdio>

#include "../error.h"
#include "etrt/etrt.h"

namespace etrt {
namespace {

std::string operator_name(const pte::Operator& op) {
  std::string name = op.name()->str();
  if (op.overload() != nullptr && op.overload()->size() > 0) name += "." + op.overload()->str();
  return name;
}

// "kernel 'aten::relu.out' prepare" (plugin_exception_error adds the plugin); built without
// allocating, as it is built in catch blocks (memory may be what ran out).
struct KernelCall {
  char text[256];
};
KernelCall kernel_call(const std::string& name, const char* function) noexcept {
  KernelCall call;
  std::snprintf(call.text, sizeof call.text, "kernel '%s' %s", name.c_str(), function);
  return call;
}

template <typename T>
const T* at(const flatbuffers::Vector<flatbuffers::Offset<T>>* vector, size_t index) {
  return vector->Get(static_cast<flatbuffers::uoffset_t>(index));
}

}  // namespace

et_error* Method::load(std::shared_ptr<Program> program, const std::string& name, std::unique_ptr<Method>* out,
                       Resolver& resolver) {
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

  // Every provider is found before any delegate is initialised, so one load names all misses.
  std::vector<std::string> missing, missing_backends;
  if (et_error* error = method->resolve_delegates(resolver, &missing_backends)) return error;
  if (et_error* error = method->init_instructions(resolver, &missing)) return error;
  missing.insert(missing.end(), missing_backends.begin(), missing_backends.end());
  if (!missing.empty()) {
    std::string message = method->program_->origin() + ": method '" + name + "' needs " +
                          std::to_string(missing.size()) + " operator(s)/backend(s) no plugin provides:";
    for (const std::string& m : missing) message += "\n  " + m;
    return make_error(ET_ERR_NOT_FOUND, message);
  }
  if (et_error* error = method->verify_instructions()) return error;
  if (et_error* error = method->init_delegates()) return error;
  if (plan->inputs())
    for (int32_t i : *plan->inputs()) method->inputs_.push_back(i);
  if (plan->outputs())
    for (int32_t o : *plan->outputs()) method->outputs_.push_back(o);
  method->input_set_.assign(method->inputs_.size(), false);
  method->find_reused_inputs();
  if (et_error* error = method->fold_constant_layout_ops()) return error;
  method->plan_call_checks();
  if (et_error* error = method->prepare_kernels()) return error;
  *out = std::move(method);
  return nullptr;
}

Method::~Method() {
  for (std::vector<Instruction>& chain : chains_)
    for (Instruction& instr : chain)
      if (instr.kernel.state != nullptr) release_kernel_state(instr, instr.kernel.state);
  for (Delegate& d : delegates_)
    if (d.initialised && d.backend.destroy != nullptr) d.backend.destroy(d.backend.user_data, d.handle);
}

et_error* Method::resolve_delegates(Resolver& resolver, std::vector<std::string>* missing) {
  const auto* delegates = plan_->delegates();
  delegates_.resize(delegates ? delegates->size() : 0);
  for (size_t i = 0; i < delegates_.size(); ++i) {
    ResolvedBackend found;
    if (et_error* error = resolver.find_backend(at(delegates, i)->id()->str(), &found)) {
      missing->push_back(error->message);
      delete error;
      continue;
    }
    delegates_[i].backend = found.backend;
    delegates_[i].plugin = std::move(found.plugin);
  }
  return nullptr;
}

et_error* Method::init_delegates() {
  const auto* delegates = plan_->delegates();
  for (size_t i = 0; i < delegates_.size(); ++i) {
    const pte::BackendDelegate* source = at(delegates, i);
    Delegate& d = delegates_[i];
    std::string where = program_->origin() + ": method '" + name_ + "', delegate " + std::to_string(i) + " (" +
                        source->id()->str() + " from plugin '" + d.plugin + "')";
    // is_available is optional (ABI 1.2): a backend without it runs everywhere it loads.
    if (d.backend.is_available != nullptr && !d.backend.is_available(d.backend.user_data))
      return make_error(ET_ERR_NOT_SUPPORTED, where + ": backend is not available on this machine");
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
    if (et_error* error = d.backend.init(d.backend.user_data, &args, &d.handle)) {
      std::string message = where + " failed to initialise: " + error->message;
      int32_t code = error->code;
      delete error;
      et_error* wrapped = make_error(code, message);
      wrapped->plugin = d.plugin;
      return wrapped;
    }
    d.initialised = true;
  }
  return nullptr;
}

et_error* Method::init_instructions(Resolver& resolver, std::vector<std::string>* missing) {
  const auto* operators = plan_->operators();
  // One lookup per operator of the plan, however many instructions use it.
  struct Served {
    bool looked_up = false;
    std::string name;
    PrimOpFn prim = nullptr;
    ResolvedKernel kernel;
  };
  std::vector<Served> served(operators ? operators->size() : 0);
  auto serve = [&](size_t op_index) -> const Served& {
    Served& s = served[op_index];
    if (s.looked_up) return s;
    s.looked_up = true;
    s.name = operator_name(*at(operators, op_index));
    if ((s.prim = builtin_server(ET_ENTRY_OPERATOR, s.name)) != nullptr) {
      s.kernel.plugin = "etrt (built-in)";
    } else if (et_error* error = resolver.find_kernel(s.name, &s.kernel)) {
      missing->push_back(error->message);
      delete error;
    }
    return s;
  };

  const auto* chains = plan_->chains();
  for (size_t c = 0; chains != nullptr && c < chains->size(); ++c) {
    const pte::Chain* chain = at(chains, c);
    std::vector<Instruction>& out = chains_.emplace_back();
    size_t count = chain->instructions() ? chain->instructions()->size() : 0;
    out.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      const pte::Instruction* source = at(chain->instructions(), i);
      Instruction& instr = out.emplace_back();
      const flatbuffers::Vector<int32_t>* args = nullptr;
      switch (source->instr_args_type()) {
        case pte::InstructionArguments::KernelCall: {
          const auto* call = source->instr_args_as_KernelCall();
          const Served& s = serve(static_cast<size_t>(call->op_index()));
          instr.kind = s.prim ? Kind::Prim : Kind::Kernel;
          instr.name = s.name;
          instr.plugin = s.kernel.plugin;
          instr.prim = s.prim;
          instr.kernel = {s.kernel.fn, s.kernel.user_data, s.kernel.prepare, s.kernel.run_prepared, s.kernel.release};
          args = call->args();
          break;
        }
        case pte::InstructionArguments::DelegateCall: {
          const auto* call = source->instr_args_as_DelegateCall();
          instr.kind = Kind::Delegate;
          instr.delegate = static_cast<size_t>(call->delegate_index());
          instr.name = at(plan_->delegates(), instr.delegate)->id()->str();
          instr.plugin = delegates_[instr.delegate].plugin;
          args = call->args();
          break;
        }
        case pte::InstructionArguments::MoveCall:
          instr.kind = Kind::Move;
          instr.name = "MoveCall";
          instr.move = {source->instr_args_as_MoveCall()->move_from(), source->instr_args_as_MoveCall()->move_to()};
          break;
        case pte::InstructionArguments::JumpFalseCall: {
          const auto* jump = source->instr_args_as_JumpFalseCall();
          instr.kind = Kind::JumpFalse;
          instr.name = "JumpFalseCall";
          instr.jump = {jump->cond_value_index(), static_cast<size_t>(jump->destination_instruction())};
          break;
        }
        default:
          instr.kind = Kind::Free;
          instr.name = "FreeCall";
          instr.freed = source->instr_args_as_FreeCall()->value_index();
          break;
      }
      if (args != nullptr)
        for (int32_t a : *args) {
          instr.args.push_back(&values_[a].value);
          instr.arg_values.push_back(a);
          if (values_[a].value.tag == ET_VALUE_INT_LIST) instr.int_lists.push_back(a);
        }
    }
  }
  return nullptr;
}

void Method::release_kernel_state(const Instruction& instr, void* state) noexcept {
  try {
    instr.kernel.release(instr.kernel.user_data, state);
  } catch (...) {
    // plugin_exception_error notes the fault on the plugin and logs it; the state is abandoned.
    delete plugin_exception_error(instr.plugin, kernel_call(instr.name, "release").text);
  }
}

// Kernels that prepare (ABI 1.4) get each of their instructions once, with the arguments every call will see:
// after memory planning (tensors point at their memory) and folding (folded instructions never run).
et_error* Method::prepare_kernels() {
  for (size_t c = 0; c < chains_.size(); ++c)
    for (size_t pc = 0; pc < chains_[c].size(); ++pc) {
      Instruction& instr = chains_[c][pc];
      if (instr.kind != Kind::Kernel || instr.kernel.prepare == nullptr) continue;
      for (int32_t list : instr.int_lists) materialise(list);
      void* state = nullptr;
      et_error* error = nullptr;
      try {  // a plugin's exception stops here, as at every call into a plugin
        error = instr.kernel.prepare(instr.kernel.user_data, instr.args.data(), instr.args.size(), &state);
      } catch (...) {
        error = plugin_exception_error(instr.plugin, kernel_call(instr.name, "prepare").text);
        state = nullptr;  // whatever it wrote before throwing is not trusted
      }
      if (error != nullptr) {
        if (state != nullptr) release_kernel_state(instr, state);
        error->message = "preparing the kernel failed: " + error->message;
        return fail_at(c, pc, instr, error);
      }
      instr.kernel.state = state;
    }
  return nullptr;
}

// What each call must do before the kernel runs, decided once: planned and constant tensors always have their
// data, so only the others (inputs the caller provides, values freed during the run) need a check; an int list
// whose items nothing writes (constants, not inputs, never an instruction's argument or a move's target) was
// materialised at load and stays so. A Move may put any tensor into any value: with moves every tensor argument
// is checked.
void Method::plan_call_checks() {
  bool moves = false;
  std::vector<bool> written(values_.size(), false);
  for (int32_t input : inputs_) written[static_cast<size_t>(input)] = true;
  for (const std::vector<Instruction>& chain : chains_)
    for (const Instruction& instr : chain) {
      moves |= instr.kind == Kind::Move;
      if (instr.kind == Kind::Move) written[static_cast<size_t>(instr.move.to)] = true;
      for (int32_t a : instr.arg_values) written[static_cast<size_t>(a)] = true;
    }
  for (std::vector<Instruction>& chain : chains_)
    for (Instruction& instr : chain) {
      for (size_t i = 0; i < instr.args.size(); ++i) {
        const TensorState* state = tensor_state(instr.arg_values[i]);
        bool has_data = state != nullptr && (state->planned || state->tensor.is_const);
        if (instr.args[i]->tag == ET_VALUE_TENSOR && (moves || !has_data))
          instr.data_checks.push_back(static_cast<uint32_t>(i));
      }
      std::erase_if(instr.int_lists, [&](int32_t list) {
        if (moves) return false;
        for (int32_t item : values_[list].item_values)
          if (item < 0 || written[static_cast<size_t>(item)]) return false;
        return true;
      });
    }
}

}  // namespace etrt
