// Per-instruction loop plans of the pointwise and copy kernels (ABI 1.4 prepared kernels, etrt/kernel.hpp).
//
// A kernel's prepare function makes the plan at method load when the instruction's operands have the dtypes of
// its fast path: the strided loop (broadcast, coalesced dims, byte strides) the generic path would build on
// every call. Each call then only checks that the operands are still the tensors, and of the shapes, the plan
// was made for (static shapes cannot change; dynamic ones are compared) and puts this call's data pointers into
// the loop. When they are not, the kernel takes its generic path, which validates and resizes as always, and
// then plans again for the shapes the operands now have (a dynamic shape that changed once costs one generic
// call, not one per run).
#pragma once

#include <initializer_list>

#include "strided_loop.h"

namespace etrt::kernels::pw {

using etrt::plugin::PreparedState;

class LoopPlan final : public PreparedState {
 public:
  // The loop with this call's data pointers, or null when the plan does not hold for these operands (the output
  // first, in the loop's operand order) and this int list argument (empty when the plan depends on none).
  // `scalar`: this call's value of a plan's trailing scalar operand (a tensor-scalar op's converted scalar, one
  // element broadcast), null for a plan without one.
  const Loop* bind(std::initializer_list<const et_tensor*> operands, IntArrayRef list = {}, void* scalar = nullptr) {
    if (!valid_ || operands.size() != tensor_count_ || (scalar != nullptr) != (tensor_count_ < static_cast<size_t>(loop_.nops)))
      return nullptr;
    int k = 0;
    for (const et_tensor* t : operands) {
      if (t != tensors_[k]) return nullptr;
      if (t->data == nullptr && loop_.numel > 0) return nullptr;  // the generic path words the error
      loop_.data[k++] = static_cast<char*>(t->data);
    }
    if (scalar != nullptr) loop_.data[k] = static_cast<char*>(scalar);
    if (dynamic_shapes_ && !same_shapes()) return nullptr;
    if ((list_count_ | list.count) != 0 && !same_list(list)) return nullptr;
    return &loop_;
  }

  // Records `loop` as the plan for the operands' current shapes (and `list`'s current items). A loop with one
  // operand more than `operands` has a trailing scalar operand, whose data each bind supplies.
  void set(std::initializer_list<const et_tensor*> operands, const Loop& loop, IntArrayRef list = {}) {
    valid_ = (operands.size() == static_cast<size_t>(loop.nops) || operands.size() + 1 == static_cast<size_t>(loop.nops)) &&
             list.count <= ET_MAX_RANK;
    if (!valid_) return;
    tensor_count_ = operands.size();
    loop_ = loop;
    dynamic_shapes_ = false;
    int k = 0;
    for (const et_tensor* t : operands) {
      tensors_[k] = t;
      ranks_[k] = t->rank;
      for (int32_t d = 0; d < t->rank; ++d) sizes_[k][d] = t->sizes[d];
      dynamic_shapes_ |= t->dynamism != ET_SHAPE_STATIC;
      ++k;
    }
    list_count_ = list.count;
    for (size_t i = 0; i < list.count; ++i) list_[i] = list.items[i];
  }
  void clear() { valid_ = false; }
  bool valid() const { return valid_; }

 private:
  bool same_shapes() const {
    for (size_t k = 0; k < tensor_count_; ++k) {
      const et_tensor& t = *tensors_[k];
      if (t.rank != ranks_[k]) return false;
      for (int32_t d = 0; d < t.rank; ++d)
        if (t.sizes[d] != sizes_[k][d]) return false;
    }
    return true;
  }
  // The list's items may be symbolic (computed during the run) even when every tensor is static.
  bool same_list(IntArrayRef list) const {
    if (list.count != list_count_) return false;
    for (size_t i = 0; i < list.count; ++i)
      if (list.items[i] != list_[i]) return false;
    return true;
  }

  bool valid_ = false;
  bool dynamic_shapes_ = false;  // some operand may change shape (static ones cannot): compare them per call
  size_t tensor_count_ = 0;      // the loop's operands that are tensors (all, or all but a trailing scalar)
  const et_tensor* tensors_[kMaxOperands] = {};
  int32_t ranks_[kMaxOperands] = {};
  int64_t sizes_[kMaxOperands][ET_MAX_RANK];
  size_t list_count_ = 0;
  int64_t list_[ET_MAX_RANK];
  Loop loop_;
};

// Whether `a` and `b` have one shape, of a rank a plan can hold: the operands of the plans that run over one
// shape (unary ops, tensor-scalar ops, softmax).
inline bool same_plannable_shape(const et_tensor& a, const et_tensor& b) {
  return static_cast<uint32_t>(a.rank) <= ET_MAX_RANK && a.rank == b.rank && std::equal(a.sizes, a.sizes + a.rank, b.sizes);
}

// The instruction's plan when the kernel was prepared (null otherwise).
inline LoopPlan* plan_of(const etrt::plugin::Call& call) { return static_cast<LoopPlan*>(call.state); }

// Makes a plan with `planner(plan)` at prepare time. The planner returns false when the operands' dtypes rule the
// fast path out for good: the kernel declines (no state). It may return true without a valid plan (shapes that
// do not fit yet: symbolic sizes not computed at load); the first call then plans.
template <typename Planner>
et_error* prepare_plan(etrt::plugin::Prepare& prepare, Planner&& planner) {
  auto plan = std::make_unique<LoopPlan>();
  if (planner(*plan)) prepare.state = std::move(plan);
  return nullptr;
}

// Runs the generic path and, when it succeeded on a prepared instruction whose plan no longer held, plans again
// for the operands' new shapes.
template <typename Generic, typename Planner>
et_error* generic_then_replan(const etrt::plugin::Call& call, Generic&& generic, Planner&& planner) {
  ETRT_TRY(generic());
  if (LoopPlan* plan = plan_of(call)) planner(*plan);
  return nullptr;
}

}  // namespace etrt::kernels::pw
