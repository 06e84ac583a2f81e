// Unary elementwise operators and activations: math functions, relu,
// hardtanh, clamp, gelu (erf and tanh forms), sigmoid, silu, hardswish, ...
// The exp-based float32 activations use pw::exp_fast so their contiguous
// loops vectorise.

#include "pointwise_common.h"
#include "pointwise_ops.h"

namespace etrt::kernels::pw {
namespace {

// Which computation types an operator supports.
enum Kinds : unsigned { kF = 1, kI = 2, kB = 4 };

template <typename OT, typename T, typename F>
inline void unary_run(char* const* p, const int64_t* s, int64_t n, const F& f) {
  if (s[0] == sizeof(OT) && s[1] == sizeof(T)) {
    OT* __restrict z = reinterpret_cast<OT*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    for (int64_t k = 0; k < n; ++k) z[k] = static_cast<OT>(f(x[k]));
    return;
  }
  for (int64_t k = 0; k < n; ++k)
    *reinterpret_cast<OT*>(p[0] + k * s[0]) = static_cast<OT>(f(*reinterpret_cast<const T*>(p[1] + k * s[1])));
}

const char* kinds_text(unsigned kinds) {
  if (kinds == kF) return "floating point dtypes";
  if (kinds == (kF | kI)) return "floating point and integral dtypes";
  return "floating point, integral and bool dtypes";
}

// Runs f elementwise. `cd` is the computation dtype (float32, float64, int64
// or bool), `rd` the result dtype before the cast into out; `make(tag)`
// returns the functor for computation type T.
template <unsigned kKinds, bool kBoolResult = false, typename Make>
et_error* unary(const char* op, const et_tensor& in, et_tensor& out, int32_t cd, int32_t rd, Make&& make) {
  PW_TRY(check_data(op, in, "self"));
  PW_TRY(check_storage(op, in, "self"));
  PW_TRY(check_storage(op, out, "out"));
  bool ok = (is_float(cd) && (kKinds & kF)) || (cd == ET_DTYPE_INT64 && (kKinds & kI)) ||
            (cd == ET_DTYPE_BOOL && (kKinds & kB));
  if (!ok)
    return unsupported(op, std::string("dtype ") + dtype_name(in.dtype) + " is not supported (" + kinds_text(kKinds) +
                               " only)");
  PW_TRY(check_result_cast(op, rd, out.dtype));
  PW_TRY(resize_out(op, out, in.sizes, in.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  PW_TRY(check_data(op, out, "out"));
  Scratch scratch;
  View x;
  if (!as_dtype(view_of(in), cd, scratch, &x)) return out_of_memory(op);
  OutputBuffer ob;
  if (!ob.init(out, kBoolResult ? ET_DTYPE_BOOL : cd, false)) return out_of_memory(op);
  Loop L = make_loop(in.rank, in.sizes, {&ob.view(), &x});
  auto go = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using OT = std::conditional_t<kBoolResult, bool, T>;
    auto f = make(tag);
    run_loop(L, [&](char* const* p, const int64_t* s, int64_t n) { unary_run<OT, T>(p, s, n, f); });
  };
  if constexpr ((kKinds & kF) != 0) {
    if (cd == ET_DTYPE_FLOAT32) go(Tag<float>{});
    else if (cd == ET_DTYPE_FLOAT64) go(Tag<double>{});
  }
  if constexpr ((kKinds & kI) != 0)
    if (cd == ET_DTYPE_INT64) go(Tag<int64_t>{});
  if constexpr ((kKinds & kB) != 0)
    if (cd == ET_DTYPE_BOOL) go(Tag<bool>{});
  ob.finish();
  return nullptr;
}

// Reads (self, out) for an op with `extra` arguments between them.
et_error* self_out(const ArgReader& r, size_t extra, et_tensor** self, et_tensor** out) {
  PW_TRY(r.count(3 + extra));
  PW_TRY(r.tensor(0, "self", self));
  PW_TRY(r.tensor(1 + extra, "out", out));
  return nullptr;
}

// Float functions promote integral inputs to float32.
int32_t float_dtype(int32_t d) { return is_float(d) ? compute_dtype(d) : ET_DTYPE_FLOAT32; }

template <typename Make>
et_error* float_op(const char* op, et_value* const* args, size_t nargs, Make&& make) {
  ArgReader r(op, args, nargs);
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(self_out(r, 0, &self, &out));
  int32_t cd = float_dtype(self->dtype);
  int32_t rd = is_float(self->dtype) ? self->dtype : ET_DTYPE_FLOAT32;
  return unary<kF>(op, *self, *out, cd, rd, make);
}

// Activations defined for floating point inputs only.
template <typename Make>
et_error* activation(const char* op, const ArgReader& r, size_t extra, Make&& make) {
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(self_out(r, extra, &self, &out));
  if (!is_float(self->dtype))
    return unsupported(op, std::string("dtype ") + dtype_name(self->dtype) + " is not supported (floating point only)");
  return unary<kF>(op, *self, *out, compute_dtype(self->dtype), self->dtype, make);
}

// Operators that keep the input's dtype.
template <unsigned kKinds, typename Make>
et_error* same_dtype_op(const char* op, et_value* const* args, size_t nargs, Make&& make) {
  ArgReader r(op, args, nargs);
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(self_out(r, 0, &self, &out));
  return unary<kKinds>(op, *self, *out, compute_dtype(self->dtype), self->dtype, make);
}

template <typename T>
inline T sigmoid(T x) {
  if constexpr (std::is_same_v<T, float>) return 1.0f / (1.0f + exp_fast(-x));
  else return T(1) / (T(1) + std::exp(-x));
}

// erf for float32 (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7), vectorisable.
inline float erf_fast(float x) {
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float y = 1.0f - p * t * exp_fast(-a * a);
  return std::copysign(y, x);
}

#define PW_FLOAT_OP(fname, opname, expr)                                            \
  et_error* fname(void*, et_exec_context*, et_value* const* args, size_t nargs) {   \
    return float_op(opname, args, nargs, [](auto tag) {                             \
      using T = typename decltype(tag)::type;                                       \
      return [](T x) -> T { return expr; };                                         \
    });                                                                             \
  }

}  // namespace

PW_FLOAT_OP(sigmoid_out, "aten::sigmoid.out", sigmoid<T>(x))
PW_FLOAT_OP(tanh_out, "aten::tanh.out", std::tanh(x))
PW_FLOAT_OP(exp_out, "aten::exp.out", exp_fast(x))
PW_FLOAT_OP(expm1_out, "aten::expm1.out", std::expm1(x))
PW_FLOAT_OP(log_out, "aten::log.out", std::log(x))
PW_FLOAT_OP(log1p_out, "aten::log1p.out", std::log1p(x))
PW_FLOAT_OP(sqrt_out, "aten::sqrt.out", std::sqrt(x))
PW_FLOAT_OP(rsqrt_out, "aten::rsqrt.out", T(1) / std::sqrt(x))
PW_FLOAT_OP(reciprocal_out, "aten::reciprocal.out", T(1) / x)
PW_FLOAT_OP(sin_out, "aten::sin.out", std::sin(x))
PW_FLOAT_OP(cos_out, "aten::cos.out", std::cos(x))
PW_FLOAT_OP(erf_out, "aten::erf.out", std::erf(x))
#undef PW_FLOAT_OP

et_error* relu_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  return same_dtype_op<kF | kI>("aten::relu.out", args, nargs, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T x) -> T { return x < T(0) ? T(0) : x; };
  });
}

et_error* neg_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  return same_dtype_op<kF | kI>("aten::neg.out", args, nargs, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T x) -> T { return static_cast<T>(-x); };
  });
}

et_error* abs_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  return same_dtype_op<kF | kI>("aten::abs.out", args, nargs, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T x) -> T { return x < T(0) ? static_cast<T>(-x) : x; };
  });
}

#define PW_ROUND_OP(fname, opname, fn)                                              \
  et_error* fname(void*, et_exec_context*, et_value* const* args, size_t nargs) {   \
    return same_dtype_op<kF | kI>(opname, args, nargs, [](auto tag) {               \
      using T = typename decltype(tag)::type;                                       \
      return [](T x) -> T {                                                         \
        if constexpr (std::is_floating_point_v<T>) return fn(x);                    \
        else return x;                                                              \
      };                                                                            \
    });                                                                             \
  }
PW_ROUND_OP(floor_out, "aten::floor.out", std::floor)
PW_ROUND_OP(ceil_out, "aten::ceil.out", std::ceil)
PW_ROUND_OP(round_out, "aten::round.out", std::nearbyint)
PW_ROUND_OP(trunc_out, "aten::trunc.out", std::trunc)
#undef PW_ROUND_OP

et_error* logical_not_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::logical_not.out";
  ArgReader r(op, args, nargs);
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(self_out(r, 0, &self, &out));
  return unary<kB, true>(op, *self, *out, ET_DTYPE_BOOL, ET_DTYPE_BOOL, [](auto) { return [](bool x) { return !x; }; });
}

et_error* bitwise_not_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::bitwise_not.out";
  ArgReader r(op, args, nargs);
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(self_out(r, 0, &self, &out));
  return unary<kI | kB>(op, *self, *out, compute_dtype(self->dtype), self->dtype, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T x) -> T {
      if constexpr (std::is_same_v<T, bool>) return !x;
      else return static_cast<T>(~x);
    };
  });
}

// hardtanh.out(self, Scalar min_val=-1, Scalar max_val=1, *, out)
et_error* hardtanh_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::hardtanh.out";
  ArgReader r(op, args, nargs);
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(self_out(r, 2, &self, &out));
  Scalar lo, hi;
  PW_TRY(r.scalar(1, "min_val", &lo));
  PW_TRY(r.scalar(2, "max_val", &hi));
  return unary<kF | kI>(op, *self, *out, compute_dtype(self->dtype), self->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T l, h;
    if constexpr (std::is_floating_point_v<T>) l = static_cast<T>(lo.to_double()), h = static_cast<T>(hi.to_double());
    else l = static_cast<T>(lo.to_int()), h = static_cast<T>(hi.to_int());
    return [l, h](T x) -> T {
      T y = x < l ? l : x;
      return y > h ? h : y;
    };
  });
}

// clamp.out(self, Scalar? min=None, Scalar? max=None, *, out)
et_error* clamp_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::clamp.out";
  ArgReader r(op, args, nargs);
  et_tensor *self = nullptr, *out = nullptr;
  PW_TRY(self_out(r, 2, &self, &out));
  bool has_lo = false, has_hi = false;
  Scalar lo, hi;
  PW_TRY(r.opt_scalar(1, "min", &has_lo, &lo));
  PW_TRY(r.opt_scalar(2, "max", &has_hi, &hi));
  if (!has_lo && !has_hi) return invalid(op, "at least one of 'min' or 'max' must not be None");
  ResultType rt;
  rt.add(*self);
  if (has_lo) rt.add(lo);
  if (has_hi) rt.add(hi);
  int32_t common = rt.get();
  int32_t cd = compute_dtype(common);
  if (cd == ET_DTYPE_BOOL) cd = ET_DTYPE_INT64;
  return unary<kF | kI>(op, *self, *out, cd, common, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T l = std::numeric_limits<T>::lowest(), h = std::numeric_limits<T>::max();
    if constexpr (std::is_floating_point_v<T>) {
      l = -std::numeric_limits<T>::infinity(), h = std::numeric_limits<T>::infinity();
      if (has_lo) l = static_cast<T>(lo.to_double());
      if (has_hi) h = static_cast<T>(hi.to_double());
    } else {
      if (has_lo) l = static_cast<T>(lo.to_int());
      if (has_hi) h = static_cast<T>(hi.to_int());
    }
    return [l, h](T x) -> T {
      T y = x < l ? l : x;
      return y > h ? h : y;
    };
  });
}

// gelu.out(self, *, str approximate='none', out)
et_error* gelu_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::gelu.out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  bool present = false;
  std::string mode = "none";
  PW_TRY(r.opt_string(1, "approximate", &present, &mode));
  if (!present) mode = "none";
  if (mode == "none") {
    return activation(op, r, 1, [](auto tag) {
      using T = typename decltype(tag)::type;
      return [](T x) -> T {
        if constexpr (std::is_same_v<T, float>) return 0.5f * x * (1.0f + erf_fast(x * 0.70710678118654752f));
        else return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
      };
    });
  }
  if (mode == "tanh") {
    // 0.5 x (1 + tanh(u)) == x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
    return activation(op, r, 1, [](auto tag) {
      using T = typename decltype(tag)::type;
      return [](T x) -> T {
        const T u = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
        return x * sigmoid<T>(T(2) * u);
      };
    });
  }
  return invalid(op, "approximate must be 'none' or 'tanh', got '" + mode + "'");
}

et_error* silu_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  ArgReader r("aten::silu.out", args, nargs);
  return activation(r.op(), r, 0, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T x) -> T { return x * sigmoid<T>(x); };
  });
}

et_error* hardswish_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  ArgReader r("aten::hardswish.out", args, nargs);
  return activation(r.op(), r, 0, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T x) -> T {
      T y = x + T(3);
      y = y < T(0) ? T(0) : y;
      y = y > T(6) ? T(6) : y;
      return x * y / T(6);
    };
  });
}

et_error* hardsigmoid_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  ArgReader r("aten::hardsigmoid.out", args, nargs);
  return activation(r.op(), r, 0, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T x) -> T {
      T y = x + T(3);
      y = y < T(0) ? T(0) : y;
      y = y > T(6) ? T(6) : y;
      return y / T(6);
    };
  });
}

// leaky_relu.out(self, Scalar negative_slope=0.01, *, out)
et_error* leaky_relu_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  ArgReader r("aten::leaky_relu.out", args, nargs);
  PW_TRY(r.count(4));
  Scalar slope;
  PW_TRY(r.scalar(1, "negative_slope", &slope));
  return activation(r.op(), r, 1, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T s = static_cast<T>(slope.to_double());
    return [s](T x) -> T { return x > T(0) ? x : x * s; };
  });
}

}  // namespace etrt::kernels::pw
