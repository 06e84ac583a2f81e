// where and masked_fill: a select between two broadcast operands by a bool condition, computed in the operands'
// promoted dtype (a select converts nothing), with a prepared plan (prepared_plan.h) for operands of one dtype.

#include "pointwise_common.h"
#include "prepared_plan.h"

namespace etrt::kernels {
namespace {

using namespace pw;

template <typename T>
void where_run(char* const* p, const int64_t* s, int64_t n) {
  constexpr int64_t it = sizeof(T);
  T* __restrict z = reinterpret_cast<T*>(p[0]);
  const uint8_t* c = reinterpret_cast<const uint8_t*>(p[1]);  // bool bytes: any nonzero is true
  const T* x = reinterpret_cast<const T*>(p[2]);
  const T* y = reinterpret_cast<const T*>(p[3]);
  if (s[0] == it && s[1] == 1) {
    if (s[2] == it && s[3] == it) {
      for (int64_t k = 0; k < n; ++k) z[k] = c[k] != 0 ? x[k] : y[k];
      return;
    }
    if (s[2] == 0 && s[3] == it) {
      const T a = *x;
      for (int64_t k = 0; k < n; ++k) z[k] = c[k] != 0 ? a : y[k];
      return;
    }
    if (s[2] == it && s[3] == 0) {
      const T b = *y;
      for (int64_t k = 0; k < n; ++k) z[k] = c[k] != 0 ? x[k] : b;
      return;
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    bool cond = *reinterpret_cast<const uint8_t*>(p[1] + k * s[1]) != 0;
    *reinterpret_cast<T*>(p[0] + k * s[0]) = *reinterpret_cast<const T*>(p[cond ? 2 : 3] + k * s[cond ? 2 : 3]);
  }
}

void run_where(const Loop& L, size_t element_bytes) {
  switch (element_bytes) {
    case 1: run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { where_run<uint8_t>(p, s, n); }); break;
    case 2: run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { where_run<uint16_t>(p, s, n); }); break;
    case 4: run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { where_run<uint32_t>(p, s, n); }); break;
    default: run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { where_run<uint64_t>(p, s, n); }); break;
  }
}

et_error* where_generic(const char* op, const Tensor& condition, const Tensor& self, const Tensor& other,
                        Tensor& out);

// out = cond ? a : b, all broadcast; `common` the promoted dtype of a and b.
et_error* where(const char* op, const View& cond, const View& a, const View& b, int32_t common, et_tensor& out,
                const int64_t* shape, int64_t rank) {
  ETRT_TRY(check_storage(op, out, "out"));
  if (cond.dtype != ET_DTYPE_BOOL)
    return unsupported(op, std::string("condition/mask dtype must be bool, got ") + dtype_name(cond.dtype));
  if (!is_storage_supported(common))
    return unsupported(op, std::string("dtype ") + dtype_name(common) + " is not supported");
  ETRT_TRY(check_result_cast(op, common, out.dtype));
  ETRT_TRY(resize_out(op, out, shape, rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  // Computed in the promoted storage dtype itself (a select converts nothing).
  Scratch sa, sb;
  View ca, cb;
  if (!as_dtype(a, common, sa, &ca) || !as_dtype(b, common, sb, &cb)) return out_of_memory(op);
  OutputBuffer ob;
  if (!ob.init(out, common, false)) return out_of_memory(op);
  run_where(make_loop(static_cast<int>(rank), shape, {&ob.view(), &cond, &ca, &cb}), element_size(common));
  ob.finish();
  return nullptr;
}

// A prepared where (prepared_plan.h): a bool condition, self, other and out of one dtype, out already of the
// broadcast shape; then where() converts and checks nothing, and the call is the loop.
bool plan_where(LoopPlan& plan, const et_tensor& out, const et_tensor& cond, const et_tensor& a, const et_tensor& b) {
  plan.clear();
  if (cond.dtype != ET_DTYPE_BOOL || a.dtype != b.dtype || a.dtype != out.dtype || !is_storage_supported(a.dtype))
    return false;
  for (const et_tensor* t : {&cond, &a, &b})
    if (static_cast<uint32_t>(t->rank) > ET_MAX_RANK) return true;
  int64_t ab[ET_MAX_RANK], shape[ET_MAX_RANK], rab = 0, rank = 0;
  if (!broadcast_shapes(a.sizes, a.rank, b.sizes, b.rank, ab, &rab) ||
      !broadcast_shapes(cond.sizes, cond.rank, ab, rab, shape, &rank) || rank != out.rank ||
      !std::equal(shape, shape + rank, out.sizes))
    return true;
  const View vo = view_of(out), vc = view_of(cond), va = view_of(a), vb = view_of(b);
  plan.set({&out, &cond, &a, &b}, make_loop(static_cast<int>(rank), shape, {&vo, &vc, &va, &vb}));
  return true;
}

et_error* prepare_where_out(Prepare& prepare, const Tensor& condition, const Tensor& self, const Tensor& other,
                            Tensor& out) {
  return prepare_plan(prepare, [&](LoopPlan& plan) { return plan_where(plan, out, condition, self, other); });
}

// where.self_out(condition, self, other, *, out)
et_error* where_out(Call call, const Tensor& condition, const Tensor& self, const Tensor& other, Tensor& out) {
  if (LoopPlan* plan = plan_of(call))
    if (const Loop* L = plan->bind({&out, &condition, &self, &other})) {
      run_where(*L, element_size(out.dtype));
      return nullptr;
    }
  return generic_then_replan(
      call, [&] { return where_generic(call.op, condition, self, other, out); },
      [&](LoopPlan& plan) { return plan_where(plan, out, condition, self, other); });
}

et_error* where_generic(const char* op, const Tensor& condition, const Tensor& self, const Tensor& other,
                        Tensor& out) {
  const std::pair<const et_tensor*, const char*> operands[] = {{&condition, "condition"}, {&self, "self"}, {&other, "other"}};
  for (const auto& [t, name] : operands) {
    ETRT_TRY(check_data(op, *t, name));
    ETRT_TRY(check_storage(op, *t, name));
  }
  int64_t ab[ET_MAX_RANK], shape[ET_MAX_RANK], rab, rank;
  if (!broadcast_shapes(self.sizes, self.rank, other.sizes, other.rank, ab, &rab) ||
      !broadcast_shapes(condition.sizes, condition.rank, ab, rab, shape, &rank))
    return invalid(op, "shapes " + shape_string(condition) + " (condition), " + shape_string(self) + " and " +
                           shape_string(other) + " are not broadcastable");
  return where(op, view_of(condition), view_of(self), view_of(other), promoted(self, other), out, shape, rank);
}

// masked_fill.Scalar_out(self, mask, Scalar value, *, out)
et_error* masked_fill_out(Call call, const Tensor& self, const Tensor& mask, Scalar value, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_data(op, mask, "mask"));
  ETRT_TRY(check_storage(op, self, "self"));
  int64_t shape[ET_MAX_RANK], rank = 0;
  bool ok = broadcast_shapes(self.sizes, self.rank, mask.sizes, mask.rank, shape, &rank) && rank == self.rank;
  for (int64_t d = 0; ok && d < rank; ++d) ok = shape[d] == self.sizes[d];
  if (!ok)
    return invalid(op, "mask of shape " + shape_string(mask) + " does not broadcast to self's shape " +
                           shape_string(self));
  if (self.dtype == ET_DTYPE_BOOL && value.kind != Scalar::kBool && value.to_double() != 0 && value.to_double() != 1)
    return invalid(op, "value " + value.text() + " cannot be converted to bool without overflow");
  uint64_t storage;
  View sv = scalar_view(value, self.dtype, &storage);
  return where(op, view_of(mask), sv, view_of(self), self.dtype, out, shape, rank);
}

}  // namespace

std::span<const KernelDef> where_ops_kernels() {
  static constexpr KernelDef kKernels[] = {
#define KERNELS_WHERE_OPS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
