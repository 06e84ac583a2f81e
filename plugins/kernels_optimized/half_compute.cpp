// Half-precision calls of the float32 kernels (see half_compute.h): stage half tensors as float32, run the
// kernel, round the outputs back.
#include "half_compute.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels.h"
#include "pointwise_common.h"

namespace etrt::kernels {
namespace {

using etrt::plugin::KernelDef;

// Operators that handle float16/bfloat16 themselves: they only move or convert elements (copy_view).
constexpr std::string_view kNativeHalf[] = {
    "aten::_to_copy.out",  "dim_order_ops::_to_dim_order_copy.out", "aten::clone.out",
    "dim_order_ops::_clone_dim_order.out", "aten::alias_copy.out", "aten::detach_copy.out",
    "aten::lift_fresh_copy.out", "aten::_conj_physical.out", "aten::copy_", "aten::copy.out",
};

// Operators PyTorch does not define for floating-point tensors: no float32 detour, their own dtype error.
constexpr std::string_view kNoHalfCompute[] = {
    "aten::bitwise_and.Tensor_out", "aten::bitwise_or.Tensor_out", "aten::bitwise_xor.Tensor_out",
    "aten::bitwise_and.Scalar_out", "aten::bitwise_or.Scalar_out", "aten::bitwise_xor.Scalar_out",
    "aten::bitwise_left_shift.Tensor_out", "aten::bitwise_left_shift.Tensor_Scalar_out",
    "aten::bitwise_right_shift.Tensor_out", "aten::bitwise_right_shift.Tensor_Scalar_out", "aten::bitwise_not.out",
};

template <size_t N>
bool listed(const std::string_view (&names)[N], std::string_view op) {
  for (std::string_view n : names)
    if (n == op) return true;
  return false;
}

inline bool is_half(int32_t dtype) { return dtype == ET_DTYPE_FLOAT16 || dtype == ET_DTYPE_BFLOAT16; }

// Whether any tensor among the arguments is float16 or bfloat16 (the fast path's only cost).
bool has_half(et_value* const* args, size_t nargs) {
  if (args == nullptr) return false;
  for (size_t i = 0; i < nargs; ++i) {
    const et_value* v = args[i];
    if (v == nullptr) continue;
    if (v->tag == ET_VALUE_TENSOR) {
      if (v->tensor != nullptr && is_half(v->tensor->dtype)) return true;
    } else if ((v->tag == ET_VALUE_TENSOR_LIST || v->tag == ET_VALUE_OPTIONAL_TENSOR_LIST) && v->items != nullptr) {
      for (size_t k = 0; k < v->count; ++k) {
        const et_tensor* t = static_cast<et_tensor* const*>(v->items)[k];
        if (t != nullptr && is_half(t->dtype)) return true;
      }
    }
  }
  return false;
}

// Elements a dense-or-strided tensor spans in memory (0 when empty).
size_t span_elements(const et_tensor& t) {
  size_t span = 1;
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.sizes[d] == 0) return 0;
    span += static_cast<size_t>(t.sizes[d] - 1) * static_cast<size_t>(t.strides[d] < 0 ? 0 : t.strides[d]);
  }
  return span;
}

// A half tensor and its float32 stand-in (which owns its shape arrays and memory).
struct Staged {
  et_tensor* original = nullptr;
  et_tensor temp{};
  int64_t sizes[ET_MAX_RANK] = {};
  int64_t strides[ET_MAX_RANK] = {};
  bool input = false, output = false;
  ~Staged() {
    if (temp.data != nullptr) host.api()->free(temp.data);
  }
};

class Staging {
 public:
  explicit Staging(const KernelDef& def) : def_(def) {}

  // The float32 arguments for `args`; null with *error set on failure.
  et_error* build(et_value* const* args, size_t nargs) {
    values_.resize(nargs);
    pointers_.resize(nargs);
    lists_.reserve(nargs);
    for (size_t i = 0; i < nargs; ++i) {
      const et_value& v = *args[i];
      values_[i] = v;
      pointers_[i] = &values_[i];
      const bool is_out = i >= def_.params || etrt::plugin::detail::name_at(def_.signature, i) == "out";
      if (v.tag == ET_VALUE_TENSOR && v.tensor != nullptr) {
        ETRT_TRY(stage(v.tensor, is_out, &values_[i].tensor));
      } else if ((v.tag == ET_VALUE_TENSOR_LIST || v.tag == ET_VALUE_OPTIONAL_TENSOR_LIST) && v.items != nullptr) {
        auto& items = lists_.emplace_back(static_cast<et_tensor* const*>(v.items),
                                          static_cast<et_tensor* const*>(v.items) + v.count);
        for (et_tensor*& t : items)
          if (t != nullptr) ETRT_TRY(stage(t, is_out, &t));
        values_[i].items = items.data();
      } else if (v.tag == ET_VALUE_INT && is_half(static_cast<int32_t>(v.as_int)) && i < def_.params &&
                 etrt::plugin::detail::name_at(def_.signature, i) == "dtype") {
        values_[i].as_int = ET_DTYPE_FLOAT32;  // the float call's output dtype
      }
    }
    return nullptr;
  }
  et_value* const* args() const { return pointers_.data(); }

  // Rounds the float32 outputs into the half outputs, resizing them as the kernel resized the stand-ins.
  et_error* write_back() {
    for (auto& s : staged_) {
      if (!s->output) continue;
      et_tensor& out = *s->original;
      bool resized = false;
      for (int32_t d = 0; d < out.rank; ++d) resized |= out.sizes[d] != s->sizes[d];
      if (resized) ETRT_TRY(host.api()->tensor_resize(&out, s->sizes, static_cast<size_t>(out.rank)));
      if (etrt::plugin::numel(out) == 0) continue;
      if (out.data == nullptr) return host.error(ET_ERR_INVALID_ARGUMENT, std::string(def_.name) + ": out has no data");
      pw::copy_view(pw::view_of(out), pw::view_of(s->temp));
    }
    return nullptr;
  }

 private:
  et_error* stage(et_tensor* t, bool is_out, et_tensor** replacement) {
    if (!is_half(t->dtype)) return nullptr;
    if (t->rank < 0 || t->rank > ET_MAX_RANK)
      return host.error(ET_ERR_INVALID_ARGUMENT, std::string(def_.name) + ": tensor of rank " + std::to_string(t->rank));
    Staged* s = nullptr;
    for (auto& existing : staged_)
      if (existing->original == t) s = existing.get();
    if (s == nullptr) {
      s = staged_.emplace_back(std::make_unique<Staged>()).get();
      s->original = t;
      s->temp = *t;
      s->temp.dtype = ET_DTYPE_FLOAT32;
      for (int32_t d = 0; d < t->rank; ++d) s->sizes[d] = t->sizes[d], s->strides[d] = t->strides[d];
      s->temp.sizes = s->sizes;
      s->temp.strides = s->strides;
      s->temp.is_const = 0;
      // Room for what the half tensor may hold (an output may grow within its capacity) and what it spans now.
      const size_t elements = std::max(t->capacity_bytes / 2, span_elements(*t));
      s->temp.capacity_bytes = elements * sizeof(float);
      s->temp.nbytes = t->nbytes * 2;
      s->temp.data = host.api()->alloc(elements == 0 ? sizeof(float) : elements * sizeof(float), 64);
      if (s->temp.data == nullptr) return pw::out_of_memory(def_.name);
    }
    if (is_out) s->output = true;
    if (!is_out && !s->input) {
      s->input = true;
      if (span_elements(*t) > 0) {
        if (t->data == nullptr) return host.error(ET_ERR_INVALID_ARGUMENT, std::string(def_.name) + ": a tensor has no data");
        pw::copy_view(pw::view_of(s->temp), pw::view_of(*t));
      }
    }
    *replacement = &s->temp;
    return nullptr;
  }

  const KernelDef& def_;
  std::vector<et_value> values_;
  std::vector<et_value*> pointers_;
  std::vector<std::vector<et_tensor*>> lists_;  // reserved up front: items pointers stay valid
  std::vector<std::unique_ptr<Staged>> staged_;
};

// Runs `def` on float32 stand-ins of the half tensors in args.
et_error* call_in_float(const KernelDef& def, et_exec_context* context, et_value* const* args, size_t nargs) {
  try {
    Staging staging(def);
    ETRT_TRY(staging.build(args, nargs));
    ETRT_TRY(def.fn(const_cast<KernelDef*>(&def), context, staging.args(), nargs));
    return staging.write_back();
  } catch (const std::bad_alloc&) {
    return pw::out_of_memory(def.name);
  } catch (const std::exception& e) {
    return host.error(ET_ERR_INTERNAL, std::string(def.name) + ": internal error: " + e.what());
  }
}

// The registered entry points: user_data is the kernel's KernelDef.
et_error* half_call(void* user_data, et_exec_context* context, et_value* const* args, size_t nargs) noexcept {
  const KernelDef& def = *static_cast<const KernelDef*>(user_data);
  if (!has_half(args, nargs)) [[likely]] return def.fn(user_data, context, args, nargs);
  return call_in_float(def, context, args, nargs);
}

#if ET_ABI_TARGET_MINOR >= 4
// A half call declines to prepare (the kernel's plan is for its own dtypes); the host then calls half_call for it.
// A prepared instruction runs the kernel's own run_prepared, without a scan: its plan holds only for the very
// tensors it was made for, whose dtypes cannot change; another tensor takes the kernel's generic path, which
// checks dtypes.
et_error* half_prepare(void* user_data, et_value* const* args, size_t nargs, void** out_state) noexcept {
  const KernelDef& def = *static_cast<const KernelDef*>(user_data);
  if (has_half(args, nargs)) {
    *out_state = nullptr;
    return nullptr;
  }
  return def.prepare(user_data, args, nargs, out_state);
}
#endif

}  // namespace

bool half_computed_in_float(const char* op) {
  return !listed(kNativeHalf, op) && !listed(kNoHalfCompute, op);
}

et_error* register_with_half(const etrt::plugin::Host& host_, std::span<const KernelDef> defs) {
  etrt::plugin::detail::kernel_host_api = host_.api();
  for (const KernelDef& def : defs) {
    et_kernel_descriptor kernel = etrt::plugin::descriptor_of(def);
    if (half_computed_in_float(def.name)) {
      kernel.fn = half_call;
#if ET_ABI_TARGET_MINOR >= 4
      if (def.prepare != nullptr) kernel.prepare = half_prepare;
#endif
    }
    ETRT_TRY(host_.api()->register_kernel(host_.self(), &kernel));
  }
  return nullptr;
}

}  // namespace etrt::kernels
