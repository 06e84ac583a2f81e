// Reductions over a list of dims (or all dims): sum, mean, amax, amin,
// argmax, argmin, var, std. Each output element reduces its slice; the
// reduced dims are walked in logical (row-major) order with adjacent dims
// merged, so a reduction over trailing contiguous dims is one flat run.
// When there are fewer outputs than threads, the reduced range itself is
// split across the pool and partial results merged.

#include <vector>

#include "pointwise_common.h"
#include "prepared_plan.h"

namespace etrt::kernels::pw {
namespace {

// The arrays are read only below their ranks, so they are left uninitialised: zeroing their 640 bytes
// cost a small reduction more than its planning.
struct ReducePlan {
  // Kept dims in logical order (for output indexing).
  int kept_rank = 0;
  int64_t kept_sizes[ET_MAX_RANK], kept_in_strides[ET_MAX_RANK];
  // Reduced dims, logical order, adjacent ones merged (strides in elements).
  int red_rank = 0;
  int64_t red_sizes[ET_MAX_RANK], red_strides[ET_MAX_RANK];
  int64_t outputs = 1, reduced = 1;
  // Output shape.
  int out_rank = 0;
  int64_t out_sizes[ET_MAX_RANK];
};

// dims: the reduced dims (absent or empty = all).
et_error* plan_reduction(const char* op, const et_tensor& in, bool has_dims, const IntArrayRef& dims, bool keepdim,
                         ReducePlan* plan) {
  bool reduce[ET_MAX_RANK] = {};
  if (!has_dims || dims.count == 0) {
    for (int i = 0; i < in.rank; ++i) reduce[i] = true;
  } else {
    for (size_t k = 0; k < dims.count; ++k) {
      int64_t d = 0;
      ETRT_TRY(normalize_dim(op, dims.items[k], in.rank, &d));
      if (in.rank == 0) continue;
      if (reduce[d]) return invalid(op, "dim " + str(d) + " appears multiple times in the list of dims");
      reduce[d] = true;
    }
  }
  for (int i = 0; i < in.rank; ++i) {
    if (reduce[i]) {
      plan->reduced *= in.sizes[i];
      int r = plan->red_rank;
      if (r > 0 && plan->red_strides[r - 1] == in.strides[i] * in.sizes[i]) {
        plan->red_sizes[r - 1] *= in.sizes[i];
        plan->red_strides[r - 1] = in.strides[i];
      } else {
        plan->red_sizes[r] = in.sizes[i];
        plan->red_strides[r] = in.strides[i];
        ++plan->red_rank;
      }
      if (keepdim) plan->out_sizes[plan->out_rank++] = 1;
    } else {
      plan->kept_sizes[plan->kept_rank] = in.sizes[i];
      plan->kept_in_strides[plan->kept_rank] = in.strides[i];
      ++plan->kept_rank;
      plan->outputs *= in.sizes[i];
      plan->out_sizes[plan->out_rank++] = in.sizes[i];
    }
  }
  if (plan->red_rank == 0) {
    plan->red_rank = 1;
    plan->red_sizes[0] = 1;
    plan->red_strides[0] = 0;
  }
  return nullptr;
}

// Calls acc.run(ptr, stride, n, flat_index_of_first) for runs covering the
// reduced flat range [begin, end) of one output's slice starting at base.
template <typename T, typename Acc>
void reduce_range(const T* base, const ReducePlan& p, int64_t begin, int64_t end, Acc& acc) {
  const int r = p.red_rank;
  int64_t idx[ET_MAX_RANK];
  int64_t rest = begin;
  for (int d = r - 1; d >= 0; --d) {
    idx[d] = rest % p.red_sizes[d];
    rest /= p.red_sizes[d];
  }
  int64_t i = begin;
  while (i < end) {
    const T* q = base;
    for (int d = 0; d < r - 1; ++d) q += idx[d] * p.red_strides[d];
    q += idx[r - 1] * p.red_strides[r - 1];
    int64_t n = std::min(end - i, p.red_sizes[r - 1] - idx[r - 1]);
    acc.run(q, p.red_strides[r - 1], n, i);
    i += n;
    idx[r - 1] += n;
    for (int d = r - 1; d > 0 && idx[d] >= p.red_sizes[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

constexpr int kLanes = 8;

// Sum in double (floats) or int64 (integers), with independent lanes so the
// contiguous loop vectorises.
template <typename T>
struct SumAcc {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  A total = 0;
  void run(const T* x, int64_t stride, int64_t n, int64_t) {
    if (stride == 1) {
      A lanes[kLanes] = {};
      int64_t k = 0;
      for (; k + kLanes <= n; k += kLanes)
        for (int j = 0; j < kLanes; ++j) lanes[j] += static_cast<A>(x[k + j]);
      for (; k < n; ++k) lanes[0] += static_cast<A>(x[k]);
      for (int j = 0; j < kLanes; ++j) total += lanes[j];
    } else {
      for (int64_t k = 0; k < n; ++k) total += static_cast<A>(x[k * stride]);
    }
  }
  void merge(const SumAcc& o) { total += o.total; }
};

template <typename T, bool kMax>
struct ExtremeAcc {
  T best = kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  bool nan = false;
  void run(const T* x, int64_t stride, int64_t n, int64_t) {
    T b = best;
    bool has_nan = false;
    if (stride == 1) {
      for (int64_t k = 0; k < n; ++k) {
        T v = x[k];
        if constexpr (std::is_floating_point_v<T>) has_nan |= v != v;
        b = kMax ? (v > b ? v : b) : (v < b ? v : b);
      }
    } else {
      for (int64_t k = 0; k < n; ++k) {
        T v = x[k * stride];
        if constexpr (std::is_floating_point_v<T>) has_nan |= v != v;
        b = kMax ? (v > b ? v : b) : (v < b ? v : b);
      }
    }
    best = b;
    nan |= has_nan;
  }
  void merge(const ExtremeAcc& o) {
    best = kMax ? (o.best > best ? o.best : best) : (o.best < best ? o.best : best);
    nan |= o.nan;
  }
  T value() const {
    if constexpr (std::is_floating_point_v<T>)
      if (nan) return std::numeric_limits<T>::quiet_NaN();
    return best;
  }
};

// First index of the max/min; NaN counts as the extreme (first NaN wins).
template <typename T, bool kMax>
struct ArgAcc {
  T best{};
  int64_t index = -1;
  bool is_nan = false;
  void consider(T v, int64_t i) {
    if (is_nan) return;
    if constexpr (std::is_floating_point_v<T>) {
      if (v != v) {
        best = v, index = i, is_nan = true;
        return;
      }
    }
    if (index < 0 || (kMax ? v > best : v < best)) best = v, index = i;
  }
  void run(const T* x, int64_t stride, int64_t n, int64_t first) {
    for (int64_t k = 0; k < n && !is_nan; ++k) consider(x[k * stride], first + k);
  }
  void merge(const ArgAcc& o) {  // o covers a later range
    if (o.index < 0 || is_nan) return;
    if (o.is_nan) {
      *this = o;
      return;
    }
    if (index < 0 || (kMax ? o.best > best : o.best < best)) best = o.best, index = o.index;
  }
};

// any/all: stops looking once the answer is known.
template <typename T, bool kAny>
struct LogicalAcc {
  bool result = !kAny;
  void run(const T* x, int64_t stride, int64_t n, int64_t) {
    if (result == kAny) return;
    for (int64_t k = 0; k < n; ++k)
      if ((x[k * stride] != T(0)) == kAny) {
        result = kAny;
        return;
      }
  }
  void merge(const LogicalAcc& o) { result = kAny ? (result || o.result) : (result && o.result); }
};

// Products in double (floats) or int64 wrapping like PyTorch's (unsigned: no signed overflow).
template <typename T>
struct ProdAcc {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
  A total = 1;
  void run(const T* x, int64_t stride, int64_t n, int64_t) {
    for (int64_t k = 0; k < n; ++k) total *= static_cast<A>(static_cast<std::conditional_t<std::is_floating_point_v<T>, double, int64_t>>(x[k * stride]));
  }
  void merge(const ProdAcc& o) { total *= o.total; }
};

template <typename T>
struct SquaredDevAcc {
  double mean = 0, total = 0;
  void run(const T* x, int64_t stride, int64_t n, int64_t) {
    for (int64_t k = 0; k < n; ++k) {
      double d = static_cast<double>(x[k * stride]) - mean;
      total += d * d;
    }
  }
  void merge(const SquaredDevAcc& o) { total += o.total; }
};

// Offset (elements) of kept index `o` in the input.
inline int64_t kept_offset(const ReducePlan& p, int64_t o) {
  int64_t off = 0;
  for (int d = p.kept_rank - 1; d >= 0; --d) {
    off += (o % p.kept_sizes[d]) * p.kept_in_strides[d];
    o /= p.kept_sizes[d];
  }
  return off;
}

// For every output o: acc = make(o); reduce its slice; finish(o, acc).
// Splits the reduced range when there are few outputs.
template <typename T, typename Make, typename Finish>
void reduce_all(const T* in, const ReducePlan& p, Make&& make, Finish&& finish) {
  using Acc = decltype(make(int64_t(0)));
  const int64_t R = p.reduced, O = p.outputs;
  if (O == 0) return;
  if (R == 0) {  // empty slices: the accumulators' initial values
    for (int64_t o = 0; o < O; ++o) finish(o, make(o));
    return;
  }
  const size_t threads = std::max<size_t>(1, host.api()->num_threads());
  if (static_cast<size_t>(O) < threads && R >= static_cast<int64_t>(2 * kGrain)) {
    const int64_t chunks = std::min<int64_t>(R / static_cast<int64_t>(kGrain), 4 * static_cast<int64_t>(threads));
    for (int64_t o = 0; o < O; ++o) {
      const T* base = in + kept_offset(p, o);
      std::vector<Acc> partial(static_cast<size_t>(chunks), make(o));
      parallel(static_cast<size_t>(chunks), 1, [&](size_t b, size_t e) {
        for (size_t c = b; c < e; ++c) {
          int64_t lo = R * static_cast<int64_t>(c) / chunks, hi = R * static_cast<int64_t>(c + 1) / chunks;
          reduce_range(base, p, lo, hi, partial[c]);
        }
      });
      for (int64_t c = 1; c < chunks; ++c) partial[0].merge(partial[static_cast<size_t>(c)]);
      finish(o, partial[0]);
    }
    return;
  }
  const size_t grain = std::max<size_t>(1, kGrain / static_cast<size_t>(std::max<int64_t>(R, 1)));
  parallel(static_cast<size_t>(O), grain, [&](size_t b, size_t e) {
    for (size_t o = b; o < e; ++o) {
      Acc acc = make(static_cast<int64_t>(o));
      reduce_range(in + kept_offset(p, static_cast<int64_t>(o)), p, 0, R, acc);
      finish(static_cast<int64_t>(o), acc);
    }
  });
}

enum class Kind { Sum, Mean, Max, Min, ArgMax, ArgMin, Var, Std, Any, All, Prod };

// float32 sum or mean of slices that are each one contiguous run, small enough for one thread: summed in double
// lanes like the general path and written straight into a contiguous float32 `out`, without the general path's
// double result buffer and its conversion pass (most of a small reduction's cost).
bool small_float_slices(const et_tensor& in, const et_tensor& out, const ReducePlan& p, Kind k) {
  return (k == Kind::Sum || k == Kind::Mean) && in.dtype == ET_DTYPE_FLOAT32 && out.dtype == ET_DTYPE_FLOAT32 &&
         p.red_rank == 1 && (p.red_strides[0] == 1 || p.reduced <= 1) &&
         p.outputs * p.reduced <= static_cast<int64_t>(kGrain) && view_of(out).contiguous();
}

inline float slice_result(const float* x, int64_t n, bool mean) {
  SumAcc<float> acc;
  if (n > 0) acc.run(x, 1, n, 0);
  return static_cast<float>(mean ? acc.total / static_cast<double>(n) : acc.total);
}

bool reduce_small_float_slices(const et_tensor& in, et_tensor& out, const ReducePlan& p, Kind k) {
  if (!small_float_slices(in, out, p, k)) return false;
  const auto* x = static_cast<const float*>(in.data);
  auto* y = static_cast<float*>(out.data);
  for (int64_t o = 0; o < p.outputs; ++o) y[o] = slice_result(x + kept_offset(p, o), p.reduced, k == Kind::Mean);
  return true;
}

// Prepared float32 sums and means (prepared_plan.h) of a contiguous input over trailing dims: the plan is a loop of
// one dim over the outputs whose input stride is the slice (its byte stride gives the slice length), so a call
// checks the operands and the dims list (its items may be symbolic) and sums.
template <Kind kKind>
bool plan_float_slices(LoopPlan& plan, const et_tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                       std::optional<ScalarType> dtype, const et_tensor& out) {
  plan.clear();
  if (self.dtype != ET_DTYPE_FLOAT32 || out.dtype != ET_DTYPE_FLOAT32 ||
      (dtype && static_cast<int32_t>(*dtype) != ET_DTYPE_FLOAT32))
    return false;
  if (static_cast<uint32_t>(self.rank) > ET_MAX_RANK || !etrt::plugin::is_contiguous(self)) return true;
  ReducePlan p;
  if (et_error* error = plan_reduction("", self, dim.has_value(), dim.value_or(IntArrayRef{}), keepdim, &p)) {
    host.api()->error_destroy(error);  // a bad dim: the generic path reports it
    return true;
  }
  if (!small_float_slices(self, out, p, kKind) || p.out_rank != out.rank ||
      !std::equal(p.out_sizes, p.out_sizes + p.out_rank, out.sizes))
    return true;
  Loop L;
  L.rank = 1;
  L.nops = 2;
  L.numel = L.sizes[0] = p.outputs;
  L.strides[0][0] = sizeof(float);
  L.strides[1][0] = p.reduced * static_cast<int64_t>(sizeof(float));
  plan.set({&out, &self}, L, dim.value_or(IntArrayRef{}));
  return true;
}

struct Request {
  Kind kind;
  bool has_dims = false;
  IntArrayRef dims;
  bool keepdim = false;
  bool has_dtype = false;
  int64_t dtype = 0;
  double correction = 1;
};

et_error* reduce(const char* op, const et_tensor& input, et_tensor& out, const Request& q) {
  ETRT_TRY(check_data(op, input, "self"));
  Scratch bool_bytes;
  et_tensor normalized;
  int64_t normalized_strides[ET_MAX_RANK];
  const et_tensor* source = normalized_bools(input, bool_bytes, &normalized, normalized_strides);
  if (source == nullptr) return out_of_memory(op);
  const et_tensor& in = *source;
  ETRT_TRY(check_storage(op, in, "self"));
  ETRT_TRY(check_storage(op, out, "out"));
  const Kind k = q.kind;
  if (q.has_dtype && q.dtype != out.dtype)
    return invalid(op, std::string("dtype argument ") + dtype_name(static_cast<int32_t>(q.dtype)) +
                           " does not match the output dtype " + dtype_name(out.dtype));
  // Result dtype rules.
  if (k == Kind::Mean && !is_float(in.dtype) && !(q.has_dtype && is_float(static_cast<int32_t>(q.dtype))))
    return invalid(op, std::string("could not infer output dtype: input dtype must be floating point, got ") +
                           dtype_name(in.dtype) + " (pass dtype)");
  if ((k == Kind::Mean || k == Kind::Var || k == Kind::Std) && !is_float(out.dtype))
    return invalid(op, std::string("output dtype must be floating point, got ") + dtype_name(out.dtype));
  if ((k == Kind::Var || k == Kind::Std) && !is_float(in.dtype))
    return unsupported(op, std::string("dtype ") + dtype_name(in.dtype) + " is not supported (floating point only)");
  if ((k == Kind::Max || k == Kind::Min) && out.dtype != in.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(in.dtype));
  if ((k == Kind::Any || k == Kind::All) && out.dtype != ET_DTYPE_BOOL && out.dtype != ET_DTYPE_UINT8)
    return invalid(op, std::string("output dtype must be bool or uint8, got ") + dtype_name(out.dtype));
  if (k == Kind::Prod && !q.has_dtype && !can_cast(is_float(in.dtype) ? in.dtype : ET_DTYPE_INT64, out.dtype))
    return invalid(op, std::string("result type ") + dtype_name(is_float(in.dtype) ? in.dtype : ET_DTYPE_INT64) +
                           " can't be cast to the output dtype " + dtype_name(out.dtype));
  if ((k == Kind::ArgMax || k == Kind::ArgMin) && out.dtype != ET_DTYPE_INT64)
    return invalid(op, std::string("output dtype must be int64, got ") + dtype_name(out.dtype));
  if (k == Kind::Sum && !q.has_dtype && !can_cast(is_float(in.dtype) ? in.dtype : ET_DTYPE_INT64, out.dtype))
    return invalid(op, std::string("result type ") + dtype_name(is_float(in.dtype) ? in.dtype : ET_DTYPE_INT64) +
                           " can't be cast to the output dtype " + dtype_name(out.dtype));

  ReducePlan p;
  ETRT_TRY(plan_reduction(op, in, q.has_dims, q.dims, q.keepdim, &p));
  if (p.reduced == 0 && (k == Kind::Max || k == Kind::Min || k == Kind::ArgMax || k == Kind::ArgMin) && p.outputs > 0)
    return invalid(op, "cannot reduce over a zero-size dimension of input shape " + shape_string(in) +
                           " (the operation has no identity)");
  ETRT_TRY(resize_out(op, out, p.out_sizes, p.out_rank));
  if (p.outputs == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  if (reduce_small_float_slices(in, out, p, k)) return nullptr;

  // Results are written as double (floats), int64 (integers) or the input
  // dtype (max/min), then converted into out.
  int32_t acc_dtype;
  if (k == Kind::ArgMax || k == Kind::ArgMin) acc_dtype = ET_DTYPE_INT64;
  else if (k == Kind::Max || k == Kind::Min) acc_dtype = in.dtype;
  else if (k == Kind::Any || k == Kind::All) acc_dtype = ET_DTYPE_BOOL;
  else if (is_float(in.dtype) || (k != Kind::Sum && k != Kind::Prod)) acc_dtype = ET_DTYPE_FLOAT64;
  else acc_dtype = ET_DTYPE_INT64;
  OutputBuffer ob;
  if (!ob.init(out, acc_dtype, true)) return out_of_memory(op);
  char* res = ob.view().data;
  const double R = static_cast<double>(p.reduced);
  // Sums of ints promoted to float when the dtype asks for it.
  dispatch_storage(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = reinterpret_cast<const T*>(in.data);
    auto* rd = reinterpret_cast<double*>(res);
    auto* ri = reinterpret_cast<int64_t*>(res);
    auto* rt = reinterpret_cast<T*>(res);
    switch (k) {
      case Kind::Sum:
      case Kind::Mean:
        reduce_all(x, p, [](int64_t) { return SumAcc<T>{}; }, [&](int64_t o, const SumAcc<T>& a) {
          if (acc_dtype == ET_DTYPE_INT64) ri[o] = static_cast<int64_t>(a.total);
          else rd[o] = k == Kind::Mean ? static_cast<double>(a.total) / R : static_cast<double>(a.total);
        });
        break;
      case Kind::Max:
        reduce_all(x, p, [](int64_t) { return ExtremeAcc<T, true>{}; },
                   [&](int64_t o, const ExtremeAcc<T, true>& a) { rt[o] = a.value(); });
        break;
      case Kind::Min:
        reduce_all(x, p, [](int64_t) { return ExtremeAcc<T, false>{}; },
                   [&](int64_t o, const ExtremeAcc<T, false>& a) { rt[o] = a.value(); });
        break;
      case Kind::ArgMax:
        reduce_all(x, p, [](int64_t) { return ArgAcc<T, true>{}; },
                   [&](int64_t o, const ArgAcc<T, true>& a) { ri[o] = std::max<int64_t>(a.index, 0); });
        break;
      case Kind::ArgMin:
        reduce_all(x, p, [](int64_t) { return ArgAcc<T, false>{}; },
                   [&](int64_t o, const ArgAcc<T, false>& a) { ri[o] = std::max<int64_t>(a.index, 0); });
        break;
      case Kind::Any:
        reduce_all(x, p, [](int64_t) { return LogicalAcc<T, true>{}; },
                   [&](int64_t o, const LogicalAcc<T, true>& a) { reinterpret_cast<bool*>(res)[o] = a.result; });
        break;
      case Kind::All:
        reduce_all(x, p, [](int64_t) { return LogicalAcc<T, false>{}; },
                   [&](int64_t o, const LogicalAcc<T, false>& a) { reinterpret_cast<bool*>(res)[o] = a.result; });
        break;
      case Kind::Prod:
        reduce_all(x, p, [](int64_t) { return ProdAcc<T>{}; }, [&](int64_t o, const ProdAcc<T>& a) {
          if (acc_dtype == ET_DTYPE_INT64) ri[o] = static_cast<int64_t>(a.total);
          else rd[o] = static_cast<double>(a.total);
        });
        break;
      case Kind::Var:
      case Kind::Std: {
        // Two passes: the mean, then the squared deviations from it.
        std::vector<double> means(static_cast<size_t>(p.outputs));
        reduce_all(x, p, [](int64_t) { return SumAcc<T>{}; },
                   [&](int64_t o, const SumAcc<T>& a) { means[static_cast<size_t>(o)] = static_cast<double>(a.total) / R; });
        const double denom = std::max(0.0, R - q.correction);
        reduce_all(x, p, [&](int64_t o) { SquaredDevAcc<T> a; a.mean = means[static_cast<size_t>(o)]; return a; },
                   [&](int64_t o, const SquaredDevAcc<T>& a) {
                     double v = a.total / denom;
                     rd[o] = k == Kind::Std ? std::sqrt(v) : v;
                   });
        break;
      }
    }
  });
  ob.finish();
  return nullptr;
}

// (self, dim?, keepdim, *, dtype?, out): sum.IntList_out / mean.out
template <Kind kKind>
et_error* sum_like(Call call, const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                   std::optional<ScalarType> dtype, Tensor& out) {
  if (LoopPlan* plan = plan_of(call))
    if (const Loop* L = plan->bind({&out, &self}, dim.value_or(IntArrayRef{}))) {
      const auto* x = reinterpret_cast<const float*>(L->data[1]);
      auto* y = reinterpret_cast<float*>(L->data[0]);
      const int64_t reduced = L->strides[1][0] / static_cast<int64_t>(sizeof(float));
      for (int64_t o = 0; o < L->numel; ++o) y[o] = slice_result(x + o * reduced, reduced, kKind == Kind::Mean);
      return nullptr;
    }
  Request q{kKind, dim.has_value(), dim.value_or(IntArrayRef{}), keepdim, dtype.has_value(),
            dtype ? static_cast<int64_t>(*dtype) : 0, 1};
  return generic_then_replan(
      call, [&] { return reduce(call.op, self, out, q); },
      [&](LoopPlan& plan) { return plan_float_slices<kKind>(plan, self, dim, keepdim, dtype, out); });
}

template <Kind kKind>
et_error* prepare_sum_like(Prepare& prepare, const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                           std::optional<ScalarType> dtype, Tensor& out) {
  return prepare_plan(prepare,
                      [&](LoopPlan& plan) { return plan_float_slices<kKind>(plan, self, dim, keepdim, dtype, out); });
}

// (self, int[1] dim=[], keepdim, *, out): amax/amin
template <Kind kKind>
et_error* extreme(Call call, const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim, Tensor& out) {
  Request q{kKind, dim.has_value(), dim.value_or(IntArrayRef{}), keepdim, false, 0, 1};
  return reduce(call.op, self, out, q);
}

// (self, int? dim=None, keepdim, *, out): argmax/argmin; dim=None reduces the
// flattened input (keepdim gives all-ones of the input's rank).
template <Kind kKind>
et_error* arg_extreme(Call call, const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  int64_t d = dim.value_or(0);
  Request q{kKind, dim.has_value(), IntArrayRef{&d, 1}, keepdim, false, 0, 1};
  return reduce(call.op, self, out, q);
}

// (self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, out)
template <Kind kKind>
et_error* variance(Call call, const Tensor& self, std::optional<IntArrayRef> dim, std::optional<Scalar> correction,
                   bool keepdim, Tensor& out) {
  Request q{kKind, dim.has_value(), dim.value_or(IntArrayRef{}), keepdim, false, 0,
            correction ? correction->to_double() : 1.0};
  return reduce(call.op, self, out, q);
}

// mean.dtype_out(self, *, ScalarType? dtype=None, out): over every dim.
et_error* mean_dtype_out(Call call, const Tensor& self, std::optional<ScalarType> dtype, Tensor& out) {
  Request q{Kind::Mean, false, {}, false, dtype.has_value(), dtype ? static_cast<int64_t>(*dtype) : 0, 1};
  return reduce(call.op, self, out, q);
}

// var.out(self, int[1]? dim, bool unbiased=True, bool keepdim=False, *, out)
et_error* var_unbiased_out(Call call, const Tensor& self, std::optional<IntArrayRef> dim, bool unbiased, bool keepdim,
                           Tensor& out) {
  Request q{Kind::Var, dim.has_value(), dim.value_or(IntArrayRef{}), keepdim, false, 0, unbiased ? 1.0 : 0.0};
  return reduce(call.op, self, out, q);
}

// var_mean.correction_out(self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, out0, out1)
et_error* var_mean_out(Call call, const Tensor& self, std::optional<IntArrayRef> dim, std::optional<Scalar> correction,
                       bool keepdim, Tensor& var, Tensor& mean) {
  Request q{Kind::Var, dim.has_value(), dim.value_or(IntArrayRef{}), keepdim, false, 0,
            correction ? correction->to_double() : 1.0};
  ETRT_TRY(reduce(call.op, self, var, q));
  q.kind = Kind::Mean;
  return reduce(call.op, self, mean, q);
}

// any.all_out / all.all_out (self, *, out), max.unary_out / min.unary_out (self, *, out): every dim.
template <Kind kKind>
et_error* reduce_every_dim(Call call, const Tensor& self, Tensor& out) {
  return reduce(call.op, self, out, Request{kKind, false, {}, false, false, 0, 1});
}

// any.dims_out / all.dims_out (self, int[]? dim=None, bool keepdim=False, *, out)
template <Kind kKind>
et_error* logical_dims(Call call, const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim, Tensor& out) {
  return reduce(call.op, self, out, Request{kKind, dim.has_value(), dim.value_or(IntArrayRef{}), keepdim, false, 0, 1});
}

// any.out / all.out (self, int dim, bool keepdim=False, *, out)
template <Kind kKind>
et_error* logical_dim(Call call, const Tensor& self, int64_t dim, bool keepdim, Tensor& out) {
  return reduce(call.op, self, out, Request{kKind, true, IntArrayRef{&dim, 1}, keepdim, false, 0, 1});
}

// prod.out(self, *, ScalarType? dtype=None, out)
et_error* prod_out(Call call, const Tensor& self, std::optional<ScalarType> dtype, Tensor& out) {
  Request q{Kind::Prod, false, {}, false, dtype.has_value(), dtype ? static_cast<int64_t>(*dtype) : 0, 1};
  return reduce(call.op, self, out, q);
}

// prod.int_out(self, int dim, bool keepdim=False, *, ScalarType? dtype=None, out)
et_error* prod_dim_out(Call call, const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype,
                       Tensor& out) {
  Request q{Kind::Prod, true, IntArrayRef{&dim, 1}, keepdim, dtype.has_value(), dtype ? static_cast<int64_t>(*dtype) : 0, 1};
  return reduce(call.op, self, out, q);
}

// max.dim_max / min.dim_min (self, int dim, bool keepdim=False, *, values, indices) -> (values, indices)
template <Kind kValue, Kind kIndex>
et_error* extreme_with_index(Call call, const Tensor& self, int64_t dim, bool keepdim, Tensor& values,
                             Tensor& indices) {
  ETRT_TRY(reduce(call.op, self, values, Request{kValue, true, IntArrayRef{&dim, 1}, keepdim, false, 0, 1}));
  return reduce(call.op, self, indices, Request{kIndex, true, IntArrayRef{&dim, 1}, keepdim, false, 0, 1});
}

}  // namespace
}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> reductions_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_REDUCTIONS
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
