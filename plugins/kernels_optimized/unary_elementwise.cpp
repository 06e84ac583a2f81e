// Unary elementwise operators and activations: math functions, relu,
// hardtanh, clamp, gelu (erf and tanh forms), sigmoid, silu, hardswish, ...
// Float32 transcendental functions run on the AVX2 vector math of
// plugins/common/vector_math.h when the CPU has AVX2 and FMA; otherwise (and
// for other dtypes) the scalar functions below, whose exp-based float32
// activations use pw::exp_fast so their contiguous loops vectorise.

#include "pointwise_common.h"
#include "prepared_plan.h"
#include "vector_math.h"

namespace etrt::kernels::pw {
namespace {

// Which computation types an operator supports.
enum Kinds : unsigned { kF = 1, kI = 2, kB = 4 };

// A float32 functor with an array form `array(x, y, n)` (y[i] = f(x[i]), x == y
// allowed) from the vector math, used for runs of elements when the CPU has AVX2+FMA.
template <typename Scalar, typename Array>
struct WithArray {
  Scalar scalar;
  Array array;
  float operator()(float x) const { return scalar(x); }
};
template <typename Scalar, typename Array>
WithArray<Scalar, Array> with_array(Scalar scalar, Array array) {
  return {scalar, array};
}
template <typename F>
constexpr bool kHasArray = false;
template <typename Scalar, typename Array>
constexpr bool kHasArray<WithArray<Scalar, Array>> = true;

// Strided runs are gathered into blocks so every layout gets the same values.
constexpr int64_t kArrayBlock = 256;

template <typename Array>
void array_run(char* const* p, const int64_t* s, int64_t n, const Array& array) {
  if (s[0] == sizeof(float) && s[1] == sizeof(float)) {
    array(reinterpret_cast<const float*>(p[1]), reinterpret_cast<float*>(p[0]), static_cast<size_t>(n));
    return;
  }
  float block[kArrayBlock];
  for (int64_t b = 0; b < n; b += kArrayBlock) {
    const int64_t m = std::min(kArrayBlock, n - b);
    for (int64_t k = 0; k < m; ++k) block[k] = *reinterpret_cast<const float*>(p[1] + (b + k) * s[1]);
    array(block, block, static_cast<size_t>(m));
    for (int64_t k = 0; k < m; ++k) *reinterpret_cast<float*>(p[0] + (b + k) * s[0]) = block[k];
  }
}

template <typename OT, typename T, typename F>
inline void unary_run(char* const* p, const int64_t* s, int64_t n, const F& f) {
  if constexpr (kHasArray<F> && std::is_same_v<OT, float> && std::is_same_v<T, float>) {
    if (vm::has_avx2_fma()) return array_run(p, s, n, f.array);
  }
  if (s[0] == sizeof(OT) && s[1] == sizeof(T)) {
    OT* __restrict z = reinterpret_cast<OT*>(p[0]);
    const Stored<T>* x = reinterpret_cast<const Stored<T>*>(p[1]);
    for (int64_t k = 0; k < n; ++k) z[k] = static_cast<OT>(f(load<T>(x[k])));
    return;
  }
  for (int64_t k = 0; k < n; ++k)
    *reinterpret_cast<OT*>(p[0] + k * s[0]) =
        static_cast<OT>(f(load<T>(*reinterpret_cast<const Stored<T>*>(p[1] + k * s[1]))));
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
  ETRT_TRY(check_data(op, in, "self"));
  ETRT_TRY(check_storage(op, in, "self"));
  ETRT_TRY(check_storage(op, out, "out"));
  bool ok = (is_float(cd) && (kKinds & kF)) || (cd == ET_DTYPE_INT64 && (kKinds & kI)) ||
            (cd == ET_DTYPE_BOOL && (kKinds & kB));
  if (!ok)
    return unsupported(op, std::string("dtype ") + dtype_name(in.dtype) + " is not supported (" + kinds_text(kKinds) +
                               " only)");
  ETRT_TRY(check_result_cast(op, rd, out.dtype));
  ETRT_TRY(resize_out(op, out, in.sizes, in.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
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

// A prepared unary op (prepared_plan.h): float32 in and out of one shape; then unary() converts and checks
// nothing, and the call is the loop.
bool plan_float_unary(LoopPlan& plan, const et_tensor& out, const et_tensor& in) {
  plan.clear();
  if (in.dtype != ET_DTYPE_FLOAT32 || out.dtype != ET_DTYPE_FLOAT32) return false;
  if (!same_plannable_shape(in, out)) return true;
  const View vo = view_of(out), vi = view_of(in);
  plan.set({&out, &in}, make_loop(in.rank, in.sizes, {&vo, &vi}));
  return true;
}

// The prepare function of the kernels below (float_op, activation, same_dtype_op).
et_error* prepare_float_unary(Prepare& prepare, const Tensor& self, Tensor& out) {
  return prepare_plan(prepare, [&](LoopPlan& plan) { return plan_float_unary(plan, out, self); });
}

// unary() with a prepared plan: the float32 loop when the plan holds (computation and result dtype float32),
// else unary() and a new plan.
template <unsigned kKinds, typename Make>
et_error* unary_prepared(const Call& call, const et_tensor& in, et_tensor& out, int32_t cd, int32_t rd, Make&& make) {
  if (LoopPlan* plan = plan_of(call))
    if (cd == ET_DTYPE_FLOAT32 && rd == ET_DTYPE_FLOAT32)
      if (const Loop* L = plan->bind({&out, &in})) {
        auto f = make(Tag<float>{});
        run_loop(*L, [&](char* const* p, const int64_t* s, int64_t n) { unary_run<float, float>(p, s, n, f); });
        return nullptr;
      }
  return generic_then_replan(
      call, [&] { return unary<kKinds>(call.op, in, out, cd, rd, make); },
      [&](LoopPlan& plan) { return plan_float_unary(plan, out, in); });
}

// Float functions promote integral inputs to float32.
int32_t float_dtype(int32_t d) { return is_float(d) ? compute_dtype(d) : ET_DTYPE_FLOAT32; }

// A functor type F (F::apply<T>(x)) as the `make` argument of unary(); with
// float32 and an F::array, the array form too.
template <typename F>
concept HasArrayForm = requires { F::array; };
template <typename F, typename Scalar>
auto with_array_of(Scalar scalar) {
  if constexpr (HasArrayForm<F>) return with_array(scalar, F::array);
  else return scalar;
}
template <typename F>
auto make_of() {
  return [](auto tag) {
    using T = typename decltype(tag)::type;
    auto scalar = [](T x) -> T { return F::template apply<T>(x); };
    if constexpr (std::is_same_v<T, float>) return with_array_of<F>(scalar);
    else return scalar;
  };
}

// Float math functions: integral inputs compute in float32.
template <typename F>
et_error* float_op(Call call, const Tensor& self, Tensor& out) {
  int32_t rd = is_float(self.dtype) ? self.dtype : ET_DTYPE_FLOAT32;
  return unary_prepared<kF>(call, self, out, float_dtype(self.dtype), rd, make_of<F>());
}

// Activations defined for floating point inputs only.
template <typename Make>
et_error* activation_with(const Call& call, const Tensor& self, Tensor& out, Make&& make) {
  if (!is_float(self.dtype))
    return unsupported(call.op, std::string("dtype ") + dtype_name(self.dtype) + " is not supported (floating point only)");
  return unary_prepared<kF>(call, self, out, compute_dtype(self.dtype), self.dtype, make);
}
template <typename F>
et_error* activation(Call call, const Tensor& self, Tensor& out) {
  return activation_with(call, self, out, make_of<F>());
}

// Operators that keep the input's dtype (floating point and integral).
template <typename F>
et_error* same_dtype_op(Call call, const Tensor& self, Tensor& out) {
  return unary_prepared<kF | kI>(call, self, out, compute_dtype(self.dtype), self.dtype, make_of<F>());
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

// The elementwise functions, F::apply<T>(x) for computation type T.
struct Sigmoid { template <typename T> static T apply(T x) { return sigmoid<T>(x); } static constexpr auto array = vm::vsigmoid; };
struct Tanh { template <typename T> static T apply(T x) { return std::tanh(x); } static constexpr auto array = vm::vtanh; };
struct Exp { template <typename T> static T apply(T x) { return exp_fast(x); } static constexpr auto array = vm::vexp; };
struct Expm1 { template <typename T> static T apply(T x) { return std::expm1(x); } static constexpr auto array = vm::vexpm1; };
struct Log { template <typename T> static T apply(T x) { return std::log(x); } static constexpr auto array = vm::vlog; };
struct Log1p { template <typename T> static T apply(T x) { return std::log1p(x); } static constexpr auto array = vm::vlog1p; };
struct Sqrt { template <typename T> static T apply(T x) { return std::sqrt(x); } };
struct Rsqrt { template <typename T> static T apply(T x) { return T(1) / std::sqrt(x); } static constexpr auto array = vm::vrsqrt; };
struct Reciprocal { template <typename T> static T apply(T x) { return T(1) / x; } };
struct Sin { template <typename T> static T apply(T x) { return std::sin(x); } static constexpr auto array = vm::vsin; };
struct Cos { template <typename T> static T apply(T x) { return std::cos(x); } static constexpr auto array = vm::vcos; };
struct Erf { template <typename T> static T apply(T x) { return std::erf(x); } static constexpr auto array = vm::verf; };
struct Tan { template <typename T> static T apply(T x) { return std::tan(x); } };
struct Asin { template <typename T> static T apply(T x) { return std::asin(x); } };
struct Acos { template <typename T> static T apply(T x) { return std::acos(x); } };
struct Atan { template <typename T> static T apply(T x) { return std::atan(x); } };
struct Sinh { template <typename T> static T apply(T x) { return std::sinh(x); } };
struct Cosh { template <typename T> static T apply(T x) { return std::cosh(x); } };
struct Asinh { template <typename T> static T apply(T x) { return std::asinh(x); } };
struct Acosh { template <typename T> static T apply(T x) { return std::acosh(x); } };
struct Atanh { template <typename T> static T apply(T x) { return std::atanh(x); } };
struct Log2 { template <typename T> static T apply(T x) { return std::log2(x); } };
struct Log10 { template <typename T> static T apply(T x) { return std::log10(x); } };
// sign(NaN) is 0 in PyTorch (both comparisons are false).
struct Sign { template <typename T> static T apply(T x) { return static_cast<T>((T(0) < x) - (x < T(0))); } };
struct Relu { template <typename T> static T apply(T x) { return x < T(0) ? T(0) : x; } };
struct Neg { template <typename T> static T apply(T x) { return static_cast<T>(-x); } };
struct Abs { template <typename T> static T apply(T x) { return x < T(0) ? static_cast<T>(-x) : x; } };
// Rounding leaves integers as they are.
struct Floor { template <typename T> static T apply(T x) { if constexpr (std::is_floating_point_v<T>) return std::floor(x); else return x; } };
struct Ceil { template <typename T> static T apply(T x) { if constexpr (std::is_floating_point_v<T>) return std::ceil(x); else return x; } };
struct Round { template <typename T> static T apply(T x) { if constexpr (std::is_floating_point_v<T>) return std::nearbyint(x); else return x; } };
struct Trunc { template <typename T> static T apply(T x) { if constexpr (std::is_floating_point_v<T>) return std::trunc(x); else return x; } };
struct Silu {
  template <typename T> static T apply(T x) { return x * sigmoid<T>(x); }
  static void array(const float* x, float* y, size_t n) {
    float block[kArrayBlock];
    for (size_t b = 0; b < n; b += kArrayBlock) {
      const size_t m = std::min<size_t>(kArrayBlock, n - b);
      vm::vsigmoid(x + b, block, m);
      for (size_t k = 0; k < m; ++k) y[b + k] = x[b + k] * block[k];
    }
  }
};
struct Hardswish {
  template <typename T> static T apply(T x) {
    T y = x + T(3);
    y = y < T(0) ? T(0) : y;
    y = y > T(6) ? T(6) : y;
    return x * y / T(6);
  }
};
struct Hardsigmoid {
  template <typename T> static T apply(T x) {
    T y = x + T(3);
    y = y < T(0) ? T(0) : y;
    y = y > T(6) ? T(6) : y;
    return y / T(6);
  }
};

et_error* logical_not_out(Call call, const Tensor& self, Tensor& out) {
  return unary<kB, true>(call.op, self, out, ET_DTYPE_BOOL, ET_DTYPE_BOOL, [](auto) { return [](bool x) { return !x; }; });
}

et_error* bitwise_not_out(Call call, const Tensor& self, Tensor& out) {
  return unary<kI | kB>(call.op, self, out, compute_dtype(self.dtype), self.dtype, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T x) -> T {
      if constexpr (std::is_same_v<T, bool>) return !x;
      else return static_cast<T>(~x);
    };
  });
}

// isnan/isinf: bool results; integral and bool inputs are never NaN or infinite.
template <bool kNan>
et_error* float_class_out(Call call, const Tensor& self, Tensor& out) {
  return unary<kF | kI | kB, true>(call.op, self, out, compute_dtype(self.dtype), ET_DTYPE_BOOL, [](auto tag) {
    using T = typename decltype(tag)::type;
    return [](T x) -> bool {
      bool result = false;
      if constexpr (std::is_floating_point_v<T>) result = kNan ? x != x : std::isinf(x);
      return result;
    };
  });
}

// logit.out(self, float? eps=None, *, out): log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given.
et_error* logit_out(Call call, const Tensor& self, std::optional<double> eps, Tensor& out) {
  int32_t rd = is_float(self.dtype) ? self.dtype : ET_DTYPE_FLOAT32;
  return unary<kF>(call.op, self, out, float_dtype(self.dtype), rd, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool clamp = eps.has_value();
    const T lo = static_cast<T>(eps.value_or(0)), hi = T(1) - lo;
    return [=](T x) -> T {
      if (clamp) x = x < lo ? lo : x > hi ? hi : x;
      return std::log(x / (T(1) - x));
    };
  });
}

// elu.out(self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *, out)
et_error* elu_out(Call call, const Tensor& self, Scalar alpha, Scalar scale, Scalar input_scale, Tensor& out) {
  return activation_with(call, self, out, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T a = static_cast<T>(alpha.to_double()), s = static_cast<T>(scale.to_double()),
            in = static_cast<T>(input_scale.to_double());
    auto scalar = [=](T x) -> T { return x > T(0) ? s * x : s * a * std::expm1(x * in); };
    if constexpr (std::is_same_v<T, float>) {
      return with_array(scalar, [=](const float* x, float* y, size_t n) {
        float block[kArrayBlock];
        for (size_t b = 0; b < n; b += kArrayBlock) {
          const size_t m = std::min<size_t>(kArrayBlock, n - b);
          for (size_t k = 0; k < m; ++k) block[k] = x[b + k] * in;
          vm::vexpm1(block, block, m);
          for (size_t k = 0; k < m; ++k) y[b + k] = x[b + k] > 0.0f ? s * x[b + k] : s * a * block[k];
        }
      });
    } else {
      return scalar;
    }
  });
}

// hardtanh.out(self, Scalar min_val=-1, Scalar max_val=1, *, out)
et_error* hardtanh_out(Call call, const Tensor& self, Scalar lo, Scalar hi, Tensor& out) {
  return unary_prepared<kF | kI>(call, self, out, compute_dtype(self.dtype), self.dtype, [&](auto tag) {
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
et_error* clamp_out(Call call, const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max,
                    Tensor& out) {
  const char* op = call.op;
  const bool has_lo = min.has_value(), has_hi = max.has_value();
  const Scalar lo = min.value_or(Scalar{}), hi = max.value_or(Scalar{});
  if (!has_lo && !has_hi) return invalid(op, "at least one of 'min' or 'max' must not be None");
  ResultType rt;
  rt.add(self);
  if (has_lo) rt.add(lo);
  if (has_hi) rt.add(hi);
  int32_t common = rt.get();
  int32_t cd = compute_dtype(common);
  if (cd == ET_DTYPE_BOOL) cd = ET_DTYPE_INT64;
  return unary_prepared<kF | kI>(call, self, out, cd, common, [&](auto tag) {
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
et_error* gelu_out(Call call, const Tensor& self, std::optional<std::string_view> approximate, Tensor& out) {
  const char* op = call.op;
  std::string_view mode = approximate.value_or("none");
  if (mode == "none") {
    return activation_with(call, self, out, [](auto tag) {
      using T = typename decltype(tag)::type;
      auto scalar = [](T x) -> T {
        if constexpr (std::is_same_v<T, float>) return 0.5f * x * (1.0f + erf_fast(x * 0.70710678118654752f));
        else return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
      };
      if constexpr (std::is_same_v<T, float>) return with_array(scalar, vm::vgelu_erf);
      else return scalar;
    });
  }
  if (mode == "tanh") {
    // 0.5 x (1 + tanh(u)) == x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
    return activation_with(call, self, out, [](auto tag) {
      using T = typename decltype(tag)::type;
      auto scalar = [](T x) -> T {
        const T u = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
        return x * sigmoid<T>(T(2) * u);
      };
      if constexpr (std::is_same_v<T, float>) return with_array(scalar, vm::vgelu_tanh);
      else return scalar;
    });
  }
  return invalid(op, "approximate must be 'none' or 'tanh', got '" + std::string(mode) + "'");
}

// leaky_relu.out(self, Scalar negative_slope=0.01, *, out)
et_error* leaky_relu_out(Call call, const Tensor& self, Scalar slope, Tensor& out) {
  return activation_with(call, self, out, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T s = static_cast<T>(slope.to_double());
    return [s](T x) -> T { return x > T(0) ? x : x * s; };
  });
}

// The prepare functions of the unary kernels with parameters besides self and out: their plan depends on self and
// out only (the parameters are read on every call).
et_error* prepare_clamp(Prepare& prepare, const Tensor& self, std::optional<Scalar>, std::optional<Scalar>, Tensor& out) {
  return prepare_float_unary(prepare, self, out);
}
et_error* prepare_hardtanh(Prepare& prepare, const Tensor& self, Scalar, Scalar, Tensor& out) {
  return prepare_float_unary(prepare, self, out);
}
et_error* prepare_gelu(Prepare& prepare, const Tensor& self, std::optional<std::string_view>, Tensor& out) {
  return prepare_float_unary(prepare, self, out);
}
et_error* prepare_leaky_relu(Prepare& prepare, const Tensor& self, Scalar, Tensor& out) {
  return prepare_float_unary(prepare, self, out);
}
et_error* prepare_elu(Prepare& prepare, const Tensor& self, Scalar, Scalar, Scalar, Tensor& out) {
  return prepare_float_unary(prepare, self, out);
}

}  // namespace
}  // namespace etrt::kernels::pw

namespace etrt::kernels {

std::span<const KernelDef> unary_elementwise_kernels() {
  using namespace pw;
  static constexpr KernelDef kKernels[] = {
#define KERNELS_UNARY_ELEMENTWISE
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
