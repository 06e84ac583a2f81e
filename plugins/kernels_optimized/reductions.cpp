// Reductions over a list of dims (or all dims): sum, mean, amax, amin,
// argmax, argmin, var, std. Each output element reduces its slice; the
// reduced dims are walked in logical (row-major) order with adjacent dims
// merged, so a reduction over trailing contiguous dims is one flat run.
// When there are fewer outputs than threads, the reduced range itself is
// split across the pool and partial results merged.

#include <vector>

#include "pointwise_common.h"
#include "pointwise_ops.h"

namespace etrt::kernels::pw {
namespace {

struct ReducePlan {
  // Kept dims in logical order (for output indexing).
  int kept_rank = 0;
  int64_t kept_sizes[ET_MAX_RANK]{}, kept_in_strides[ET_MAX_RANK]{}, kept_out_strides[ET_MAX_RANK]{};
  // Reduced dims, logical order, adjacent ones merged (strides in elements).
  int red_rank = 0;
  int64_t red_sizes[ET_MAX_RANK]{}, red_strides[ET_MAX_RANK]{};
  int64_t outputs = 1, reduced = 1;
  // Output shape.
  int out_rank = 0;
  int64_t out_sizes[ET_MAX_RANK]{};
};

// dims: the reduced dims (absent or empty = all).
et_error* plan_reduction(const char* op, const et_tensor& in, bool has_dims, const IntList& dims, bool keepdim,
                         ReducePlan* plan) {
  bool reduce[ET_MAX_RANK] = {};
  if (!has_dims || dims.count == 0) {
    for (int i = 0; i < in.rank; ++i) reduce[i] = true;
  } else {
    for (size_t k = 0; k < dims.count; ++k) {
      int64_t d = 0;
      PW_TRY(normalize_dim(op, dims.items[k], in.rank, &d));
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

enum class Kind { Sum, Mean, Max, Min, ArgMax, ArgMin, Var, Std };

struct Request {
  Kind kind;
  bool has_dims = false;
  IntList dims;
  bool keepdim = false;
  bool has_dtype = false;
  int64_t dtype = 0;
  double correction = 1;
};

et_error* reduce(const char* op, const et_tensor& in, et_tensor& out, const Request& q) {
  PW_TRY(check_data(op, in, "self"));
  PW_TRY(check_storage(op, in, "self"));
  PW_TRY(check_storage(op, out, "out"));
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
  if ((k == Kind::ArgMax || k == Kind::ArgMin) && out.dtype != ET_DTYPE_INT64)
    return invalid(op, std::string("output dtype must be int64, got ") + dtype_name(out.dtype));
  if (k == Kind::Sum && !q.has_dtype && !can_cast(is_float(in.dtype) ? in.dtype : ET_DTYPE_INT64, out.dtype))
    return invalid(op, std::string("result type ") + dtype_name(is_float(in.dtype) ? in.dtype : ET_DTYPE_INT64) +
                           " can't be cast to the output dtype " + dtype_name(out.dtype));

  ReducePlan p;
  PW_TRY(plan_reduction(op, in, q.has_dims, q.dims, q.keepdim, &p));
  if (p.reduced == 0 && (k == Kind::Max || k == Kind::Min || k == Kind::ArgMax || k == Kind::ArgMin) && p.outputs > 0)
    return invalid(op, "cannot reduce over a zero-size dimension of input shape " + shape_str(in) +
                           " (the operation has no identity)");
  PW_TRY(resize_out(op, out, p.out_sizes, p.out_rank));
  if (p.outputs == 0) return nullptr;
  PW_TRY(check_data(op, out, "out"));

  // Results are written as double (floats), int64 (integers) or the input
  // dtype (max/min), then converted into out.
  int32_t acc_dtype;
  if (k == Kind::ArgMax || k == Kind::ArgMin) acc_dtype = ET_DTYPE_INT64;
  else if (k == Kind::Max || k == Kind::Min) acc_dtype = in.dtype;
  else if (is_float(in.dtype) || k != Kind::Sum) acc_dtype = ET_DTYPE_FLOAT64;
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
et_error* sum_like(const char* op, Kind kind, et_value* const* args, size_t nargs) {
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(6));
  et_tensor *self = nullptr, *out = nullptr;
  Request q{kind, false, {}, false, false, 0, 1};
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.opt_int_list(1, "dim", &q.has_dims, &q.dims));
  PW_TRY(r.boolean(2, "keepdim", &q.keepdim));
  PW_TRY(r.opt_integer(3, "dtype", &q.has_dtype, &q.dtype));
  PW_TRY(r.tensor(4, "out", &out));
  return reduce(op, *self, *out, q);
}

// (self, int[1] dim=[], keepdim, *, out): amax/amin
et_error* extreme(const char* op, Kind kind, et_value* const* args, size_t nargs) {
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *out = nullptr;
  Request q{kind, false, {}, false, false, 0, 1};
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.opt_int_list(1, "dim", &q.has_dims, &q.dims));
  PW_TRY(r.boolean(2, "keepdim", &q.keepdim));
  PW_TRY(r.tensor(3, "out", &out));
  return reduce(op, *self, *out, q);
}

// (self, int? dim=None, keepdim, *, out): argmax/argmin
et_error* arg_extreme(const char* op, Kind kind, et_value* const* args, size_t nargs) {
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *self = nullptr, *out = nullptr;
  Request q{kind, false, {}, false, false, 0, 1};
  bool has_dim = false;
  int64_t dim = 0;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.opt_integer(1, "dim", &has_dim, &dim));
  PW_TRY(r.boolean(2, "keepdim", &q.keepdim));
  PW_TRY(r.tensor(3, "out", &out));
  if (has_dim) {
    q.has_dims = true;
    q.dims.items = &dim;
    q.dims.count = 1;
    return reduce(op, *self, *out, q);
  }
  // dim=None: over the flattened input; keepdim gives all-ones of the input's rank.
  q.has_dims = false;
  return reduce(op, *self, *out, q);
}

// (self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, out)
et_error* variance(const char* op, Kind kind, et_value* const* args, size_t nargs) {
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(6));
  et_tensor *self = nullptr, *out = nullptr;
  Request q{kind, false, {}, false, false, 0, 1};
  bool has_corr = false;
  Scalar corr;
  PW_TRY(r.tensor(0, "self", &self));
  PW_TRY(r.opt_int_list(1, "dim", &q.has_dims, &q.dims));
  PW_TRY(r.opt_scalar(2, "correction", &has_corr, &corr));
  PW_TRY(r.boolean(3, "keepdim", &q.keepdim));
  PW_TRY(r.tensor(4, "out", &out));
  q.correction = has_corr ? corr.to_double() : 1.0;
  return reduce(op, *self, *out, q);
}

}  // namespace

et_error* sum_out(void*, et_exec_context*, et_value* const* a, size_t n) { return sum_like("aten::sum.IntList_out", Kind::Sum, a, n); }
et_error* mean_out(void*, et_exec_context*, et_value* const* a, size_t n) { return sum_like("aten::mean.out", Kind::Mean, a, n); }
et_error* amax_out(void*, et_exec_context*, et_value* const* a, size_t n) { return extreme("aten::amax.out", Kind::Max, a, n); }
et_error* amin_out(void*, et_exec_context*, et_value* const* a, size_t n) { return extreme("aten::amin.out", Kind::Min, a, n); }
et_error* argmax_out(void*, et_exec_context*, et_value* const* a, size_t n) { return arg_extreme("aten::argmax.out", Kind::ArgMax, a, n); }
et_error* argmin_out(void*, et_exec_context*, et_value* const* a, size_t n) { return arg_extreme("aten::argmin.out", Kind::ArgMin, a, n); }
et_error* var_out(void*, et_exec_context*, et_value* const* a, size_t n) { return variance("aten::var.correction_out", Kind::Var, a, n); }
et_error* std_out(void*, et_exec_context*, et_value* const* a, size_t n) { return variance("aten::std.correction_out", Kind::Std, a, n); }

}  // namespace etrt::kernels::pw
