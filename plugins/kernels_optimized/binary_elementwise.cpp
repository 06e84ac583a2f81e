// Binary (and ternary) elementwise operators with NumPy broadcasting and
// PyTorch type promotion: arithmetic (add/sub/mul/div/pow/rsub, tensor and
// scalar forms), comparisons, logical and bitwise ops, maximum/minimum
// (where and masked_fill: where_ops.cpp).
//
// Every operator reduces to: promote the operands' dtypes, convert operands
// whose dtype differs from the computation's, walk the broadcast iteration
// space (dims coalesced, split across the host's pool) with a functor whose
// contiguous inner loop GCC vectorises, and convert into `out` when its dtype
// differs from the result's.

#include <atomic>

#include "pointwise_common.h"
#include "prepared_plan.h"
#include "vector_math.h"

namespace etrt::kernels {
namespace {

using namespace pw;

enum class Op {
  Add, Sub, Mul, Div, DivTrunc, DivFloor, Pow, Max, Min,
  Eq, Ne, Lt, Le, Gt, Ge,
  LogicalAnd, LogicalOr, LogicalXor,
  BitAnd, BitOr, BitXor,
  Fmod, Remainder, Atan2, Shl, Shr, Gate,
};

constexpr bool is_comparison(Op op) {
  return op == Op::Eq || op == Op::Ne || op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge;
}
constexpr bool is_logical(Op op) { return op == Op::LogicalAnd || op == Op::LogicalOr || op == Op::LogicalXor; }
constexpr bool returns_bool(Op op) { return is_comparison(op) || is_logical(op); }
constexpr bool is_bitwise(Op op) {
  return op == Op::BitAnd || op == Op::BitOr || op == Op::BitXor || op == Op::Shl || op == Op::Shr;
}
constexpr bool is_integer_division(Op op) {
  return op == Op::DivTrunc || op == Op::DivFloor || op == Op::Fmod || op == Op::Remainder;
}

// Integer division's one overflow, MIN / -1, traps on x86 (SIGFPE): a divisor of
// -1 is negation (wrapping, like every integer op here) and leaves no remainder.
template <typename T>
constexpr bool is_minus_one(T b) {
  if constexpr (std::is_signed_v<T>) return b == T(-1);
  else return false;
}
template <typename T>
constexpr T wrapping_negate(T a) {
  return static_cast<T>(T(0) - a);  // -fwrapv (CMakeLists.txt): defined for MIN
}

template <typename T>
inline T floor_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    // Python semantics: floor of the true quotient, computed like PyTorch (via fmod).
    if (b == 0) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div != 0) {
      T floordiv = std::floor(div);
      if (div - floordiv > T(0.5)) floordiv += T(1);
      return floordiv;
    }
    return std::copysign(T(0), a / b);
  } else {
    if (is_minus_one(b)) return wrapping_negate(a);
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }
}

// Python's modulo: the result takes the divisor's sign.
template <typename T>
inline T python_mod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    if (is_minus_one(b)) return T(0);
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  }
}

// Shifts by the bit width or more (or by a negative amount) fill like PyTorch's.
template <typename T>
inline T shift(T a, T b, bool left) {
  if (b < 0 || b >= T(64)) return left ? T(0) : (a < 0 ? T(-1) : T(0));
  if (left) return static_cast<T>(static_cast<uint64_t>(a) << b);
  return static_cast<T>(a >> b);
}

template <typename T>
inline T int_pow(T base, T exp) {
  T result = 1;
  while (exp > 0) {
    if (exp & 1) result = static_cast<T>(result * base);
    base = static_cast<T>(base * base);
    exp >>= 1;
  }
  return result;
}

// The per-element operation. T is the computation type.
template <Op kOp, typename T>
struct Fn {
  T alpha = T(1);
  int pow_mode = 0;  // 0 generic, 1 square, 2 sqrt, 3 identity, 4 reciprocal, 5 rsqrt, 6 cube

  auto operator()(T a, T b) const {
    if constexpr (kOp == Op::Add) return static_cast<T>(a + alpha * b);
    else if constexpr (kOp == Op::Sub) return static_cast<T>(a - alpha * b);
    else if constexpr (kOp == Op::Mul) return static_cast<T>(a * b);
    else if constexpr (kOp == Op::Div) return static_cast<T>(a / b);
    else if constexpr (kOp == Op::DivTrunc) {
      if constexpr (std::is_floating_point_v<T>) return std::trunc(a / b);
      else return is_minus_one(b) ? wrapping_negate(a) : static_cast<T>(a / b);
    } else if constexpr (kOp == Op::DivFloor) return floor_div<T>(a, b);
    else if constexpr (kOp == Op::Pow) {
      if constexpr (std::is_floating_point_v<T>) {
        switch (pow_mode) {
          case 1: return a * a;
          case 2: return std::sqrt(a);
          case 3: return a;
          case 4: return T(1) / a;
          case 5: return T(1) / std::sqrt(a);
          case 6: return a * a * a;
          default: return std::pow(a, b);
        }
      } else if constexpr (std::is_same_v<T, bool>) {
        return static_cast<T>(a || !b);
      } else {
        return int_pow<T>(a, b);
      }
    } else if constexpr (kOp == Op::Max) return static_cast<T>((a != a || a > b) ? a : b);
    else if constexpr (kOp == Op::Min) return static_cast<T>((a != a || a < b) ? a : b);
    else if constexpr (kOp == Op::Eq) return a == b;
    else if constexpr (kOp == Op::Ne) return a != b;
    else if constexpr (kOp == Op::Lt) return a < b;
    else if constexpr (kOp == Op::Le) return a <= b;
    else if constexpr (kOp == Op::Gt) return a > b;
    else if constexpr (kOp == Op::Ge) return a >= b;
    else if constexpr (kOp == Op::LogicalAnd) return static_cast<bool>(a && b);
    else if constexpr (kOp == Op::LogicalOr) return static_cast<bool>(a || b);
    else if constexpr (kOp == Op::LogicalXor) return static_cast<bool>(a != b);
    else if constexpr (kOp == Op::Fmod) {
      if constexpr (std::is_floating_point_v<T>) return std::fmod(a, b);
      else return is_minus_one(b) ? T(0) : static_cast<T>(a % b);
    } else if constexpr (kOp == Op::Remainder) return python_mod<T>(a, b);
    else if constexpr (kOp == Op::Gate) {  // glu: a * sigmoid(b)
      if constexpr (std::is_floating_point_v<T>) return static_cast<T>(a / (T(1) + std::exp(-b)));
      else return a;
    } else if constexpr (kOp == Op::Atan2) {
      if constexpr (std::is_floating_point_v<T>) return std::atan2(a, b);
      else return a;
    } else if constexpr (kOp == Op::Shl || kOp == Op::Shr) {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return shift<T>(a, b, kOp == Op::Shl);
      else return a;
    } else if constexpr (kOp == Op::BitAnd) return static_cast<T>(a & b);
    else if constexpr (kOp == Op::BitOr) return static_cast<T>(a | b);
    else return static_cast<T>(a ^ b);
  }
};

// One run of the innermost dim; the contiguous and scalar-broadcast cases
// are plain loops GCC vectorises.
template <typename OT, typename T, typename F>
inline void binary_run(char* const* p, const int64_t* s, int64_t n, const F& f) {
  OT* __restrict z = reinterpret_cast<OT*>(p[0]);
  using S = Stored<T>;  // bool operands are read as bytes
  const S* x = reinterpret_cast<const S*>(p[1]);
  const S* y = reinterpret_cast<const S*>(p[2]);
  constexpr int64_t ot = sizeof(OT), it = sizeof(T);
  if (s[0] == ot) {
    if (s[1] == it && s[2] == it) {
      for (int64_t k = 0; k < n; ++k) z[k] = f(load<T>(x[k]), load<T>(y[k]));
      return;
    }
    if (s[1] == it && s[2] == 0) {
      const T b = load<T>(*y);
      for (int64_t k = 0; k < n; ++k) z[k] = f(load<T>(x[k]), b);
      return;
    }
    if (s[1] == 0 && s[2] == it) {
      const T a = load<T>(*x);
      for (int64_t k = 0; k < n; ++k) z[k] = f(a, load<T>(y[k]));
      return;
    }
  }
  for (int64_t k = 0; k < n; ++k)
    *reinterpret_cast<OT*>(p[0] + k * s[0]) = f(load<T>(*reinterpret_cast<const S*>(p[1] + k * s[1])),
                                                load<T>(*reinterpret_cast<const S*>(p[2] + k * s[2])));
}

// float32 pow (generic exponent) and glu's gate (a * sigmoid(b)) on the AVX2
// vector math (plugins/common/vector_math.h): operands gathered into blocks from
// any strides, so every layout gets the same values.
template <Op kOp>
void vector_math_run(char* const* p, const int64_t* s, int64_t n) {
  constexpr int64_t kBlock = 256;
  float a[kBlock], b[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    for (int64_t k = 0; k < m; ++k) {
      a[k] = *reinterpret_cast<const float*>(p[1] + (i0 + k) * s[1]);
      b[k] = *reinterpret_cast<const float*>(p[2] + (i0 + k) * s[2]);
    }
    if constexpr (kOp == Op::Pow) {
      vm::vpow(a, b, a, static_cast<size_t>(m));
    } else {
      vm::vsigmoid(b, b, static_cast<size_t>(m));
      for (int64_t k = 0; k < m; ++k) a[k] *= b[k];
    }
    for (int64_t k = 0; k < m; ++k) *reinterpret_cast<float*>(p[0] + (i0 + k) * s[0]) = a[k];
  }
}

struct BinarySpec {
  Scalar alpha = Scalar::of_int(1);
  bool has_alpha = false;
  int pow_mode = 0;
};

template <Op kOp, typename T>
void run_typed(const Loop& L, const BinarySpec& spec) {
  Fn<kOp, T> f;
  if constexpr (kOp == Op::Add || kOp == Op::Sub) {
    if constexpr (std::is_floating_point_v<T>) f.alpha = static_cast<T>(spec.alpha.to_double());
    else f.alpha = static_cast<T>(spec.alpha.to_int());
    if (!spec.has_alpha || (spec.alpha.kind != Scalar::kDouble && spec.alpha.i == 1)) {
      // The common case without the multiply (also exact for every type).
      if constexpr (kOp == Op::Add) {
        auto g = [](T a, T b) { return static_cast<T>(a + b); };
        run_loop(L, [&](char* const* p, const int64_t* s, int64_t n) { binary_run<T, T>(p, s, n, g); });
      } else {
        auto g = [](T a, T b) { return static_cast<T>(a - b); };
        run_loop(L, [&](char* const* p, const int64_t* s, int64_t n) { binary_run<T, T>(p, s, n, g); });
      }
      return;
    }
  }
  f.pow_mode = spec.pow_mode;
  if constexpr (kOp == Op::Pow && std::is_floating_point_v<T>) {
    // A special exponent gets its own loop: the mode switch per element kept the loop scalar.
    auto each = [&](auto g) {
      run_loop(L, [&](char* const* p, const int64_t* s, int64_t n) { binary_run<T, T>(p, s, n, g); });
    };
    switch (spec.pow_mode) {
      case 1: return each([](T a, T) { return a * a; });
      case 2: return each([](T a, T) { return std::sqrt(a); });
      case 3: return each([](T a, T) { return a; });
      case 4: return each([](T a, T) { return T(1) / a; });
      case 5: return each([](T a, T) { return T(1) / std::sqrt(a); });
      case 6: return each([](T a, T) { return a * a * a; });
      default: break;
    }
  }
  if constexpr ((kOp == Op::Pow || kOp == Op::Gate) && std::is_same_v<T, float>) {
    if ((kOp == Op::Gate || spec.pow_mode == 0) && vm::has_avx2_fma()) {
      run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { vector_math_run<kOp>(p, s, n); });
      return;
    }
  }
  using OT = std::conditional_t<returns_bool(kOp), bool, T>;
  run_loop(L, [&](char* const* p, const int64_t* s, int64_t n) { binary_run<OT, T>(p, s, n, f); });
}

// Which computation dtype an operator uses given the promoted dtype.
int32_t computation_dtype(Op op, int32_t common) {
  if (is_logical(op)) return ET_DTYPE_BOOL;
  if ((op == Op::Div || op == Op::Atan2) && !is_float(common)) return ET_DTYPE_FLOAT32;
  int32_t cd = compute_dtype(common);
  if (cd == ET_DTYPE_BOOL && !is_comparison(op) && op != Op::Max && op != Op::Min && op != Op::Pow &&
      op != Op::BitAnd && op != Op::BitOr && op != Op::BitXor)
    return ET_DTYPE_INT64;
  return cd;
}

// The dtype of the result before it is cast into `out`.
int32_t result_dtype(Op op, int32_t common) {
  if (returns_bool(op)) return ET_DTYPE_BOOL;
  if ((op == Op::Div || op == Op::Atan2) && !is_float(common)) return ET_DTYPE_FLOAT32;
  return common;
}

template <typename F>
void dispatch_op(Op op, F&& f) {
  switch (op) {
#define PW_CASE(name) case Op::name: f(std::integral_constant<Op, Op::name>{}); break;
    PW_CASE(Add) PW_CASE(Sub) PW_CASE(Mul) PW_CASE(Div) PW_CASE(DivTrunc) PW_CASE(DivFloor) PW_CASE(Pow)
    PW_CASE(Max) PW_CASE(Min) PW_CASE(Eq) PW_CASE(Ne) PW_CASE(Lt) PW_CASE(Le) PW_CASE(Gt) PW_CASE(Ge)
    PW_CASE(LogicalAnd) PW_CASE(LogicalOr) PW_CASE(LogicalXor) PW_CASE(BitAnd) PW_CASE(BitOr) PW_CASE(BitXor)
    PW_CASE(Fmod) PW_CASE(Remainder) PW_CASE(Atan2) PW_CASE(Shl) PW_CASE(Shr) PW_CASE(Gate)
#undef PW_CASE
  }
}

// Any zero in an integral view (for integer division).
bool has_zero(const View& v) {
  std::atomic<bool> found{false};
  Loop L = make_loop(v.rank, v.sizes, {&v});
  dispatch_storage(v.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_loop(L, [&](char* const* p, const int64_t* s, int64_t n) {
      bool any = false;
      for (int64_t k = 0; k < n; ++k) any |= *reinterpret_cast<const Stored<T>*>(p[0] + k * s[0]) == 0;
      if (any) found.store(true, std::memory_order_relaxed);
    });
  });
  return found.load();
}

// The shared body: a and b are views (a scalar is a rank-0 view), `common`
// the promoted dtype.
et_error* binary(const char* op, Op kind, const View& a, const View& b, int32_t common, et_tensor& out,
                 const BinarySpec& spec) {
  ETRT_TRY(check_storage(op, out, "out"));
  if (!is_storage_supported(a.dtype) || !is_storage_supported(b.dtype) || !is_storage_supported(common))
    return unsupported(op, std::string("dtype ") + dtype_name(!is_storage_supported(a.dtype) ? a.dtype : b.dtype) +
                               " is not supported (supported: float32, float64, int8-int64, uint8, bool)");
  int64_t shape[ET_MAX_RANK], rank = 0;
  if (!broadcast_shapes(a.sizes, a.rank, b.sizes, b.rank, shape, &rank))
    return invalid(op, "shapes " + shape_string(a.sizes, a.rank) + " and " + shape_string(b.sizes, b.rank) +
                           " are not broadcastable");
  // Semantic checks of PyTorch.
  if (kind == Op::Sub && a.dtype == ET_DTYPE_BOOL && b.dtype == ET_DTYPE_BOOL)
    return invalid(op, "subtraction of two bool operands is not supported; use logical_xor");
  if (is_bitwise(kind) && is_float(common))
    return invalid(op, std::string("bitwise operations need integral or bool operands, got ") + dtype_name(common));
  if (spec.has_alpha && spec.alpha.kind == Scalar::kDouble && !is_float(common))
    return invalid(op, std::string("alpha must be an integer for ") + dtype_name(common) + " operands, got " +
                           spec.alpha.text());
  int32_t cd = computation_dtype(kind, common);
  int32_t rd = result_dtype(kind, common);
  ETRT_TRY(check_result_cast(op, rd, out.dtype));
  ETRT_TRY(resize_out(op, out, shape, rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));

  Scratch sa, sb;
  View ca, cb;
  if (!as_dtype(a, cd, sa, &ca) || !as_dtype(b, cd, sb, &cb)) return out_of_memory(op);
  if (is_integer_division(kind) && !is_float(cd) && has_zero(cb))
    return invalid(op, kind == Op::Fmod || kind == Op::Remainder ? "integer modulo by zero" : "integer division by zero");
  if (kind == Op::Pow && is_integral(cd)) {
    bool negative = false;
    Loop L = make_loop(cb.rank, cb.sizes, {&cb});
    std::atomic<bool> found{false};
    run_loop(L, [&](char* const* p, const int64_t* s, int64_t n) {
      bool any = false;
      for (int64_t k = 0; k < n; ++k) any |= *reinterpret_cast<const int64_t*>(p[0] + k * s[0]) < 0;
      if (any) found.store(true);
    });
    negative = found.load();
    if (negative) return invalid(op, "integers to negative integer powers are not allowed");
  }
  OutputBuffer ob;
  int32_t natural = returns_bool(kind) ? ET_DTYPE_BOOL : cd;
  if (!ob.init(out, natural, /*need_contiguous=*/false)) return out_of_memory(op);
  Loop L = make_loop(static_cast<int>(rank), shape, {&ob.view(), &ca, &cb});
  dispatch_op(kind, [&](auto op_tag) {
    constexpr Op kOp = decltype(op_tag)::value;
    switch (cd) {
      case ET_DTYPE_FLOAT32:
        if constexpr (!is_bitwise(kOp)) run_typed<kOp, float>(L, spec);
        break;
      case ET_DTYPE_FLOAT64:
        if constexpr (!is_bitwise(kOp)) run_typed<kOp, double>(L, spec);
        break;
      case ET_DTYPE_BOOL:
        if constexpr (kOp != Op::Add && kOp != Op::Sub && kOp != Op::Mul && kOp != Op::Div && kOp != Op::DivTrunc &&
                      kOp != Op::DivFloor && !is_integer_division(kOp) && kOp != Op::Atan2 && kOp != Op::Shl &&
                      kOp != Op::Shr && kOp != Op::Gate)
          run_typed<kOp, bool>(L, spec);
        break;
      default:
        if constexpr (kOp != Op::LogicalAnd && kOp != Op::LogicalOr && kOp != Op::LogicalXor && kOp != Op::Atan2 &&
                      kOp != Op::Gate)
          run_typed<kOp, int64_t>(L, spec);
        break;
    }
  });
  ob.finish();
  return nullptr;
}


// Prepared float32 ops (prepared_plan.h): float32 operands (tensors, or a tensor and a scalar) and a float32
// output (bool for comparisons), the output already of the broadcast shape. Then promotion, conversion and every
// check of binary() are no-ops, and the call is the loop.
constexpr bool has_float_plan(Op op) {
  return (!returns_bool(op) || is_comparison(op)) && !is_bitwise(op) && op != Op::Gate;
}

// Whether the dtypes allow a float32 plan: binary() would compute in float32 and write `out` directly.
template <Op kOp>
bool float_plan_dtypes(const et_tensor& out, std::initializer_list<const et_tensor*> operands) {
  if (!has_float_plan(kOp) || computation_dtype(kOp, ET_DTYPE_FLOAT32) != ET_DTYPE_FLOAT32 ||
      out.dtype != (returns_bool(kOp) ? ET_DTYPE_BOOL : ET_DTYPE_FLOAT32))
    return false;
  for (const et_tensor* t : operands)
    if (t->dtype != ET_DTYPE_FLOAT32) return false;
  return true;
}

// False when the dtypes rule the fast path out for good (prepared_plan.h).
template <Op kOp>
bool plan_float_binary(LoopPlan& plan, const et_tensor& out, const et_tensor& a, const et_tensor& b) {
  plan.clear();
  if (!float_plan_dtypes<kOp>(out, {&a, &b})) return false;
  int64_t shape[ET_MAX_RANK], rank = 0;
  if (static_cast<uint32_t>(a.rank) > ET_MAX_RANK || static_cast<uint32_t>(b.rank) > ET_MAX_RANK ||
      !broadcast_shapes(a.sizes, a.rank, b.sizes, b.rank, shape, &rank) || rank != out.rank ||
      !std::equal(shape, shape + rank, out.sizes))
    return true;
  const View vo = view_of(out), va = view_of(a), vb = view_of(b);
  plan.set({&out, &a, &b}, make_loop(static_cast<int>(rank), shape, {&vo, &va, &vb}));
  return true;
}

// Kernels (listed in operators.def).

template <Op kOp>
et_error* tensor_tensor_spec(Call call, const Tensor& self, const Tensor& other, Tensor& out, const BinarySpec& spec) {
  if constexpr (has_float_plan(kOp)) {
    if (LoopPlan* plan = plan_of(call))
      if (const Loop* L = plan->bind({&out, &self, &other})) {
        run_typed<kOp, float>(*L, spec);
        return nullptr;
      }
  }
  return generic_then_replan(
      call,
      [&] {
        ETRT_TRY(check_data(call.op, self, "self"));
        ETRT_TRY(check_data(call.op, other, "other"));
        return binary(call.op, kOp, view_of(self), view_of(other), promoted(self, other), out, spec);
      },
      [&](LoopPlan& plan) { return plan_float_binary<kOp>(plan, out, self, other); });
}

template <Op kOp>
et_error* tensor_tensor(Call call, const Tensor& self, const Tensor& other, Tensor& out) {
  return tensor_tensor_spec<kOp>(call, self, other, out, BinarySpec{});
}

template <Op kOp>
et_error* tensor_tensor_alpha(Call call, const Tensor& self, const Tensor& other, Scalar alpha, Tensor& out) {
  return tensor_tensor_spec<kOp>(call, self, other, out, BinarySpec{alpha, true, 0});
}

template <Op kOp>
et_error* prepare_tensor_tensor(Prepare& prepare, const Tensor& self, const Tensor& other, Tensor& out) {
  return prepare_plan(prepare, [&](LoopPlan& plan) { return plan_float_binary<kOp>(plan, out, self, other); });
}

template <Op kOp>
et_error* prepare_tensor_tensor_alpha(Prepare& prepare, const Tensor& self, const Tensor& other, Scalar alpha,
                                      Tensor& out) {
  return prepare_tensor_tensor<kOp>(prepare, self, other, out);
}

// A float32 tensor with a scalar (which promotes to float32 whatever its kind): the scalar is the loop's trailing
// one-element operand, converted on every call (its value may be computed during the run).
template <Op kOp>
bool plan_float_scalar(LoopPlan& plan, const et_tensor& out, const et_tensor& self) {
  plan.clear();
  if (!float_plan_dtypes<kOp>(out, {&self})) return false;
  if (!same_plannable_shape(self, out)) return true;
  float placeholder = 0;
  const View vo = view_of(out), va = view_of(self), vs = contiguous_view(ET_DTYPE_FLOAT32, 0, nullptr, &placeholder);
  plan.set({&out, &self}, make_loop(static_cast<int>(self.rank), self.sizes, {&vo, &va, &vs}));
  return true;
}

template <Op kOp, bool kReverse = false>
et_error* tensor_scalar_spec(Call call, const Tensor& self, const Scalar& other, Tensor& out, const BinarySpec& spec) {
  if constexpr (has_float_plan(kOp) && !kReverse) {
    if (LoopPlan* plan = plan_of(call)) {
      uint64_t storage;
      scalar_view(other, ET_DTYPE_FLOAT32, &storage);  // binary()'s conversion of the scalar
      if (const Loop* L = plan->bind({&out, &self}, {}, &storage)) {
        run_typed<kOp, float>(*L, spec);
        return nullptr;
      }
    }
  }
  return generic_then_replan(
      call,
      [&] {
        const char* op = call.op;
        ETRT_TRY(check_data(op, self, "self"));
        ETRT_TRY(check_storage(op, self, "self"));
        int32_t common = promoted(self, other);
        uint64_t storage;
        View sv = scalar_view(other, computation_dtype(kOp, common), &storage);
        if (kReverse) return binary(op, kOp, sv, view_of(self), common, out, spec);
        return binary(op, kOp, view_of(self), sv, common, out, spec);
      },
      [&](LoopPlan& plan) { return !kReverse && plan_float_scalar<kOp>(plan, out, self); });
}

template <Op kOp>
et_error* tensor_scalar(Call call, const Tensor& self, Scalar other, Tensor& out) {
  return tensor_scalar_spec<kOp>(call, self, other, out, BinarySpec{});
}

template <Op kOp>
et_error* tensor_scalar_alpha(Call call, const Tensor& self, Scalar other, Scalar alpha, Tensor& out) {
  return tensor_scalar_spec<kOp>(call, self, other, out, BinarySpec{alpha, true, 0});
}

template <Op kOp>
et_error* prepare_tensor_scalar(Prepare& prepare, const Tensor& self, Scalar, Tensor& out) {
  return prepare_plan(prepare, [&](LoopPlan& plan) { return plan_float_scalar<kOp>(plan, out, self); });
}

template <Op kOp>
et_error* prepare_tensor_scalar_alpha(Prepare& prepare, const Tensor& self, Scalar other, Scalar, Tensor& out) {
  return prepare_tensor_scalar<kOp>(prepare, self, other, out);
}

// rsub: other - alpha * self.
template <Op kOp>
et_error* reverse_tensor_scalar_alpha(Call call, const Tensor& self, Scalar other, Scalar alpha, Tensor& out) {
  return tensor_scalar_spec<kOp, true>(call, self, other, out, BinarySpec{alpha, true, 0});
}

// rounding_mode: None (true division), "trunc" or "floor".
et_error* rounding_op(const char* op, std::optional<std::string_view> mode, Op* kind) {
  if (!mode) *kind = Op::Div;
  else if (*mode == "trunc") *kind = Op::DivTrunc;
  else if (*mode == "floor") *kind = Op::DivFloor;
  else return invalid(op, "rounding_mode must be None, 'trunc' or 'floor', got '" + std::string(*mode) + "'");
  return nullptr;
}

et_error* div_out_mode(Call call, const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode,
                       Tensor& out) {
  Op kind;
  ETRT_TRY(rounding_op(call.op, rounding_mode, &kind));
  ETRT_TRY(check_data(call.op, self, "self"));
  ETRT_TRY(check_data(call.op, other, "other"));
  return binary(call.op, kind, view_of(self), view_of(other), promoted(self, other), out, BinarySpec{});
}

et_error* div_scalar_mode_out(Call call, const Tensor& self, Scalar other,
                              std::optional<std::string_view> rounding_mode, Tensor& out) {
  const char* op = call.op;
  Op kind;
  ETRT_TRY(rounding_op(op, rounding_mode, &kind));
  ETRT_TRY(check_data(op, self, "self"));
  ETRT_TRY(check_storage(op, self, "self"));
  int32_t common = promoted(self, other);
  uint64_t storage;
  View sv = scalar_view(other, kind == Op::Div ? computation_dtype(Op::Div, common) : compute_dtype(common), &storage);
  return binary(op, kind, view_of(self), sv, common, out, BinarySpec{});
}

// pow.Tensor_Scalar_out(self, Scalar exponent, *, out)
et_error* pow_ts_out(Call call, const Tensor& self, Scalar exponent, Tensor& out) {
  BinarySpec spec;
  double x = exponent.to_double();
  if (is_float(promoted(self, exponent)))
    spec.pow_mode = x == 2 ? 1 : x == 0.5 ? 2 : x == 1 ? 3 : x == -1 ? 4 : x == -0.5 ? 5 : x == 3 ? 6 : 0;
  return tensor_scalar_spec<Op::Pow>(call, self, exponent, out, spec);
}

et_error* prepare_pow_ts(Prepare& prepare, const Tensor& self, Scalar exponent, Tensor& out) {
  return prepare_tensor_scalar<Op::Pow>(prepare, self, exponent, out);
}

// pow.Scalar_out(Scalar self, Tensor exponent, *, out)
et_error* pow_st_out(Call call, Scalar self, const Tensor& exponent, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, exponent, "exponent"));
  ETRT_TRY(check_storage(op, exponent, "exponent"));
  int32_t common = promoted(exponent, self);
  uint64_t storage;
  View sv = scalar_view(self, computation_dtype(Op::Pow, common), &storage);
  return binary(op, Op::Pow, sv, view_of(exponent), common, out, BinarySpec{});
}

// clamp.Tensor_out(self, Tensor? min=None, Tensor? max=None, *, out): max(min(...)) with broadcasting,
// computed as maximum(self, min) then minimum(that, max) in the promoted dtype.
et_error* clamp_tensor_out(Call call, const Tensor& self, const Tensor* min, const Tensor* max, Tensor& out) {
  const char* op = call.op;
  if (min == nullptr && max == nullptr) return invalid(op, "at least one of 'min' or 'max' must not be None");
  ETRT_TRY(check_data(op, self, "self"));
  ResultType rt;
  rt.add(self);
  if (min != nullptr) rt.add(*min);
  if (max != nullptr) rt.add(*max);
  const int32_t common = rt.get();
  if (common == ET_DTYPE_BOOL) return unsupported(op, "clamp is not supported for bool tensors");
  View current = view_of(self);
  Scratch scratch;
  if (min != nullptr && max != nullptr) {
    // The intermediate keeps the promoted dtype and the broadcast shape of self and min.
    ETRT_TRY(check_data(op, *min, "min"));
    int64_t shape[ET_MAX_RANK], rank = 0;
    if (!broadcast_shapes(self.sizes, self.rank, min->sizes, min->rank, shape, &rank))
      return invalid(op, "shapes " + shape_string(self) + " and " + shape_string(*min) + " (min) are not broadcastable");
    int64_t n = 1;
    for (int64_t i = 0; i < rank; ++i) n *= shape[i];
    void* p = scratch.get(static_cast<size_t>(n) * element_size(common));
    if (p == nullptr) return out_of_memory(op);
    et_tensor mid{};
    mid.struct_size = sizeof mid;
    mid.dtype = common;
    mid.rank = static_cast<int32_t>(rank);
    int64_t strides[ET_MAX_RANK];
    View cv = contiguous_view(common, mid.rank, shape, p);
    std::copy(cv.strides, cv.strides + rank, strides);
    mid.sizes = shape;
    mid.strides = strides;
    mid.data = p;
    mid.nbytes = mid.capacity_bytes = static_cast<size_t>(n) * element_size(common);
    mid.dynamism = ET_SHAPE_STATIC;
    ETRT_TRY(binary(op, Op::Max, current, view_of(*min), common, mid, BinarySpec{}));
    return binary(op, Op::Min, cv, view_of(*max), common, out, BinarySpec{});
  }
  if (min != nullptr) {
    ETRT_TRY(check_data(op, *min, "min"));
    return binary(op, Op::Max, current, view_of(*min), common, out, BinarySpec{});
  }
  ETRT_TRY(check_data(op, *max, "max"));
  return binary(op, Op::Min, current, view_of(*max), common, out, BinarySpec{});
}

// glu.out(self, int dim=-1, *, out): first half * sigmoid(second half) along dim.
et_error* glu_out(Call call, const Tensor& self, int64_t dim, Tensor& out) {
  const char* op = call.op;
  ETRT_TRY(check_data(op, self, "self"));
  if (!is_float(self.dtype))
    return unsupported(op, std::string("dtype ") + dtype_name(self.dtype) + " is not supported (floating point only)");
  if (self.rank == 0) return invalid(op, "glu does not support rank-0 tensors");
  int64_t d = 0;
  ETRT_TRY(normalize_dim(op, dim, self.rank, &d));
  const int64_t n = self.sizes[d];
  if (n % 2 != 0) return invalid(op, "halving dim " + str(d) + " of size " + str(n) + " must give an even split");
  const View v = view_of(self);
  return binary(op, Op::Gate, v.narrow(static_cast<int32_t>(d), 0, n / 2), v.narrow(static_cast<int32_t>(d), n / 2, n / 2),
                self.dtype, out, BinarySpec{});
}

}  // namespace

std::span<const KernelDef> binary_elementwise_kernels() {
  static constexpr KernelDef kKernels[] = {
#define KERNELS_BINARY_ELEMENTWISE
#include "operators.def"
  };
  return kKernels;
}

}  // namespace etrt::kernels
