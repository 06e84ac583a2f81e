// aten::add.out and aten::mul.out: float32, NumPy broadcasting, split across
// the host's thread pool.
#include <algorithm>
#include <cstring>
#include <string>

#include "kernels.h"

namespace etrt::kernels {
namespace {

using etrt::plugin::dtype_name;
using etrt::plugin::is_contiguous;
using etrt::plugin::numel;
using etrt::plugin::shape_string;

enum class BinaryOp { Add, Mul };

// Elements per parallel chunk: large enough that dispatch costs nothing.
constexpr size_t kGrain = 1 << 14;

struct Broadcast {
  int32_t rank = 0;
  int64_t sizes[ET_MAX_RANK]{};
  int64_t a_strides[ET_MAX_RANK]{};  // 0 on broadcast dims
  int64_t b_strides[ET_MAX_RANK]{};
};

// Aligns a and b to the output's rank from the right; fails if not broadcastable to out.
et_error* plan_broadcast(const char* op, const et_tensor& a, const et_tensor& b, const et_tensor& out,
                         Broadcast* plan) {
  plan->rank = out.rank;
  for (int32_t i = 0; i < out.rank; ++i) {
    int32_t ai = i - (out.rank - a.rank), bi = i - (out.rank - b.rank);
    int64_t as = ai >= 0 ? a.sizes[ai] : 1, bs = bi >= 0 ? b.sizes[bi] : 1;
    int64_t os = out.sizes[i];
    if ((as != os && as != 1) || (bs != os && bs != 1))
      return host.error(ET_ERR_INVALID_ARGUMENT, std::string(op) + ": shapes " + shape_string(a) + " and " +
                                                     shape_string(b) + " do not broadcast to the output shape " +
                                                     shape_string(out));
    plan->sizes[i] = os;
    plan->a_strides[i] = (ai >= 0 && as != 1) ? a.strides[ai] : 0;
    plan->b_strides[i] = (bi >= 0 && bs != 1) ? b.strides[bi] : 0;
  }
  if (a.rank > out.rank || b.rank > out.rank)
    return host.error(ET_ERR_INVALID_ARGUMENT, std::string(op) + ": output rank " + std::to_string(out.rank) +
                                                   " is smaller than an input's");
  return nullptr;
}

template <BinaryOp kOp>
inline float apply(float x, float y, float alpha) {
  if constexpr (kOp == BinaryOp::Add) return x + alpha * y;
  else return x * y;
}

template <BinaryOp kOp>
et_error* run_binary(const char* op, const et_tensor& a, const et_tensor& b, float alpha, et_tensor& out) {
  for (const et_tensor* t : {&a, &b, static_cast<const et_tensor*>(&out)}) {
    if (t->dtype != ET_DTYPE_FLOAT32)
      return host.error(ET_ERR_NOT_SUPPORTED, std::string(op) + ": dtype " + dtype_name(t->dtype) +
                                                  " is not supported (float32 only)");
  }
  // Output shape: the broadcast of the inputs; resize out if it is dynamic.
  int32_t rank = std::max(a.rank, b.rank);
  int64_t shape[ET_MAX_RANK];
  for (int32_t i = 0; i < rank; ++i) {
    int32_t ai = i - (rank - a.rank), bi = i - (rank - b.rank);
    int64_t as = ai >= 0 ? a.sizes[ai] : 1, bs = bi >= 0 ? b.sizes[bi] : 1;
    if (as != bs && as != 1 && bs != 1)
      return host.error(ET_ERR_INVALID_ARGUMENT, std::string(op) + ": shapes " + shape_string(a) + " and " +
                                                     shape_string(b) + " are not broadcastable");
    shape[i] = as == 1 ? bs : as;
  }
  if (rank == out.rank) {
    if (et_error* error = host.api()->tensor_resize(&out, shape, static_cast<size_t>(rank))) return error;
  }
  Broadcast plan;
  if (et_error* error = plan_broadcast(op, a, b, out, &plan)) return error;
  if (!is_contiguous(out))
    return host.error(ET_ERR_NOT_SUPPORTED, std::string(op) + ": output must be contiguous");

  const auto* x = static_cast<const float*>(a.data);
  const auto* y = static_cast<const float*>(b.data);
  auto* z = static_cast<float*>(out.data);
  size_t count = numel(out);
  if (count == 0) return nullptr;

  bool same_layout = is_contiguous(a) && is_contiguous(b) && numel(a) == count && numel(b) == count;
  if (same_layout) {
    host.parallel_for(count, kGrain, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) z[i] = apply<kOp>(x[i], y[i], alpha);
    });
    return nullptr;
  }
  // General case: walk the output in row-major order, mapping each index to
  // both inputs through their (possibly zero) strides.
  host.parallel_for(count, kGrain, [&](size_t begin, size_t end) {
    int64_t index[ET_MAX_RANK];
    size_t rest = begin;
    for (int32_t d = plan.rank - 1; d >= 0; --d) {
      index[d] = static_cast<int64_t>(rest % plan.sizes[d]);
      rest /= plan.sizes[d];
    }
    for (size_t i = begin; i < end; ++i) {
      int64_t ao = 0, bo = 0;
      for (int32_t d = 0; d < plan.rank; ++d) {
        ao += index[d] * plan.a_strides[d];
        bo += index[d] * plan.b_strides[d];
      }
      z[i] = apply<kOp>(x[ao], y[bo], alpha);
      for (int32_t d = plan.rank - 1; d >= 0; --d) {
        if (++index[d] < plan.sizes[d]) break;
        index[d] = 0;
      }
    }
  });
  return nullptr;
}

et_error* scalar_value(const char* op, const et_value* value, float* out) {
  if (value->tag == ET_VALUE_INT) *out = static_cast<float>(value->as_int);
  else if (value->tag == ET_VALUE_DOUBLE) *out = static_cast<float>(value->as_double);
  else if (value->tag == ET_VALUE_BOOL) *out = value->as_int != 0 ? 1.0f : 0.0f;
  else return host.error(ET_ERR_INVALID_ARGUMENT, std::string(op) + ": alpha must be a scalar");
  return nullptr;
}

// Arguments as the program lists them: schema arguments, then the return value.
et_error* add_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::add.out";
  if (et_error* e = plugin::expect_args(host, op, nargs, 5)) return e;
  for (size_t i : {0, 1, 3})
    if (et_error* e = plugin::expect_tensor(host, op, args, i)) return e;
  float alpha = 1.0f;
  if (et_error* e = scalar_value(op, args[2], &alpha)) return e;
  return run_binary<BinaryOp::Add>(op, *args[0]->tensor, *args[1]->tensor, alpha, *args[3]->tensor);
}

et_error* mul_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::mul.out";
  if (et_error* e = plugin::expect_args(host, op, nargs, 4)) return e;
  for (size_t i : {0, 1, 2})
    if (et_error* e = plugin::expect_tensor(host, op, args, i)) return e;
  return run_binary<BinaryOp::Mul>(op, *args[0]->tensor, *args[1]->tensor, 1.0f, *args[2]->tensor);
}

constexpr KernelEntry kKernels[] = {
    {"aten::add.out", add_out},
    {"aten::mul.out", mul_out},
};

}  // namespace

std::span<const KernelEntry> binary_elementwise_kernels() { return kKernels; }

}  // namespace etrt::kernels
