// Binary (and ternary) elementwise operators with NumPy broadcasting and
// PyTorch type promotion: arithmetic (add/sub/mul/div/pow/rsub, tensor and
// scalar forms), comparisons, logical and bitwise ops, maximum/minimum,
// where and masked_fill.
//
// Every operator reduces to: promote the operands' dtypes, convert operands
// whose dtype differs from the computation's, walk the broadcast iteration
// space (dims coalesced, split across the host's pool) with a functor whose
// contiguous inner loop GCC vectorises, and convert into `out` when its dtype
// differs from the result's.

#include <atomic>

#include "pointwise_common.h"

namespace etrt::kernels {
namespace {

using namespace pw;

enum class Op {
  Add, Sub, Mul, Div, DivTrunc, DivFloor, Pow, Max, Min,
  Eq, Ne, Lt, Le, Gt, Ge,
  LogicalAnd, LogicalOr, LogicalXor,
  BitAnd, BitOr, BitXor,
};

constexpr bool is_comparison(Op op) {
  return op == Op::Eq || op == Op::Ne || op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge;
}
constexpr bool is_logical(Op op) { return op == Op::LogicalAnd || op == Op::LogicalOr || op == Op::LogicalXor; }
constexpr bool returns_bool(Op op) { return is_comparison(op) || is_logical(op); }

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
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }
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
      else return static_cast<T>(a / b);
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
    else if constexpr (kOp == Op::BitAnd) return static_cast<T>(a & b);
    else if constexpr (kOp == Op::BitOr) return static_cast<T>(a | b);
    else return static_cast<T>(a ^ b);
  }
};

// One run of the innermost dim; the contiguous and scalar-broadcast cases
// are plain loops GCC vectorises.
template <typename OT, typename T, typename F>
inline void binary_run(char* const* p, const int64_t* s, int64_t n, const F& f) {
  OT* __restrict z = reinterpret_cast<OT*>(p[0]);
  const T* x = reinterpret_cast<const T*>(p[1]);
  const T* y = reinterpret_cast<const T*>(p[2]);
  constexpr int64_t ot = sizeof(OT), it = sizeof(T);
  if (s[0] == ot) {
    if (s[1] == it && s[2] == it) {
      for (int64_t k = 0; k < n; ++k) z[k] = f(x[k], y[k]);
      return;
    }
    if (s[1] == it && s[2] == 0) {
      const T b = *y;
      for (int64_t k = 0; k < n; ++k) z[k] = f(x[k], b);
      return;
    }
    if (s[1] == 0 && s[2] == it) {
      const T a = *x;
      for (int64_t k = 0; k < n; ++k) z[k] = f(a, y[k]);
      return;
    }
  }
  for (int64_t k = 0; k < n; ++k)
    *reinterpret_cast<OT*>(p[0] + k * s[0]) =
        f(*reinterpret_cast<const T*>(p[1] + k * s[1]), *reinterpret_cast<const T*>(p[2] + k * s[2]));
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
  using OT = std::conditional_t<returns_bool(kOp), bool, T>;
  run_loop(L, [&](char* const* p, const int64_t* s, int64_t n) { binary_run<OT, T>(p, s, n, f); });
}

// Which computation dtype an operator uses given the promoted dtype.
int32_t computation_dtype(Op op, int32_t common) {
  if (is_logical(op)) return ET_DTYPE_BOOL;
  if (op == Op::Div && !is_float(common)) return ET_DTYPE_FLOAT32;
  int32_t cd = compute_dtype(common);
  if (cd == ET_DTYPE_BOOL && !is_comparison(op) && op != Op::Max && op != Op::Min && op != Op::Pow &&
      op != Op::BitAnd && op != Op::BitOr && op != Op::BitXor)
    return ET_DTYPE_INT64;
  return cd;
}

// The dtype of the result before it is cast into `out`.
int32_t result_dtype(Op op, int32_t common) {
  if (returns_bool(op)) return ET_DTYPE_BOOL;
  if (op == Op::Div && !is_float(common)) return ET_DTYPE_FLOAT32;
  return common;
}

template <typename F>
void dispatch_op(Op op, F&& f) {
  switch (op) {
#define PW_CASE(name) case Op::name: f(std::integral_constant<Op, Op::name>{}); break;
    PW_CASE(Add) PW_CASE(Sub) PW_CASE(Mul) PW_CASE(Div) PW_CASE(DivTrunc) PW_CASE(DivFloor) PW_CASE(Pow)
    PW_CASE(Max) PW_CASE(Min) PW_CASE(Eq) PW_CASE(Ne) PW_CASE(Lt) PW_CASE(Le) PW_CASE(Gt) PW_CASE(Ge)
    PW_CASE(LogicalAnd) PW_CASE(LogicalOr) PW_CASE(LogicalXor) PW_CASE(BitAnd) PW_CASE(BitOr) PW_CASE(BitXor)
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
      for (int64_t k = 0; k < n; ++k) any |= *reinterpret_cast<const T*>(p[0] + k * s[0]) == T(0);
      if (any) found.store(true, std::memory_order_relaxed);
    });
  });
  return found.load();
}

// The shared body: a and b are views (a scalar is a rank-0 view), `common`
// the promoted dtype.
et_error* binary(const char* op, Op kind, const View& a, const View& b, int32_t common, et_tensor& out,
                 const BinarySpec& spec) {
  PW_TRY(check_storage(op, out, "out"));
  if (!is_storage_supported(a.dtype) || !is_storage_supported(b.dtype) || !is_storage_supported(common))
    return unsupported(op, std::string("dtype ") + dtype_name(!is_storage_supported(a.dtype) ? a.dtype : b.dtype) +
                               " is not supported (supported: float32, float64, int8-int64, uint8, bool)");
  int64_t shape[ET_MAX_RANK], rank = 0;
  if (!broadcast_shapes(a.sizes, a.rank, b.sizes, b.rank, shape, &rank))
    return invalid(op, "shapes " + shape_str(a.sizes, a.rank) + " and " + shape_str(b.sizes, b.rank) +
                           " are not broadcastable");
  // Semantic checks of PyTorch.
  if (kind == Op::Sub && a.dtype == ET_DTYPE_BOOL && b.dtype == ET_DTYPE_BOOL)
    return invalid(op, "subtraction of two bool operands is not supported; use logical_xor");
  if ((kind == Op::BitAnd || kind == Op::BitOr || kind == Op::BitXor) && is_float(common))
    return invalid(op, std::string("bitwise operations need integral or bool operands, got ") + dtype_name(common));
  if (spec.has_alpha && spec.alpha.kind == Scalar::kDouble && !is_float(common))
    return invalid(op, std::string("alpha must be an integer for ") + dtype_name(common) + " operands, got " +
                           spec.alpha.text());
  int32_t cd = computation_dtype(kind, common);
  int32_t rd = result_dtype(kind, common);
  PW_TRY(check_result_cast(op, rd, out.dtype));
  PW_TRY(resize_out(op, out, shape, rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  PW_TRY(check_data(op, out, "out"));

  Scratch sa, sb;
  View ca, cb;
  if (!as_dtype(a, cd, sa, &ca) || !as_dtype(b, cd, sb, &cb)) return out_of_memory(op);
  if ((kind == Op::DivTrunc || kind == Op::DivFloor) && !is_float(cd) && has_zero(cb))
    return invalid(op, "integer division by zero");
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
        if constexpr (kOp != Op::BitAnd && kOp != Op::BitOr && kOp != Op::BitXor) run_typed<kOp, float>(L, spec);
        break;
      case ET_DTYPE_FLOAT64:
        if constexpr (kOp != Op::BitAnd && kOp != Op::BitOr && kOp != Op::BitXor) run_typed<kOp, double>(L, spec);
        break;
      case ET_DTYPE_BOOL:
        if constexpr (kOp != Op::Add && kOp != Op::Sub && kOp != Op::Mul && kOp != Op::Div && kOp != Op::DivTrunc &&
                      kOp != Op::DivFloor)
          run_typed<kOp, bool>(L, spec);
        break;
      default:
        if constexpr (kOp != Op::LogicalAnd && kOp != Op::LogicalOr && kOp != Op::LogicalXor)
          run_typed<kOp, int64_t>(L, spec);
        break;
    }
  });
  ob.finish();
  return nullptr;
}

int32_t promoted(const et_tensor& a, const et_tensor& b) {
  ResultType rt;
  rt.add(a);
  rt.add(b);
  return rt.get();
}
int32_t promoted(const et_tensor& a, const Scalar& b) {
  ResultType rt;
  rt.add(a);
  rt.add(b);
  return rt.get();
}

// Kernels: argument layouts are the schema's arguments then the return.

// alpha, when the operator has one, sits between the operands and out.
et_error* read_alpha(const ArgReader& r, bool has_alpha, BinarySpec* spec) {
  if (!has_alpha) return nullptr;
  PW_TRY(r.scalar(2, "alpha", &spec->alpha));
  spec->has_alpha = true;
  return nullptr;
}

template <Op kOp>
et_error* tensor_tensor(const char* op, et_value* const* args, size_t nargs, bool has_alpha) {
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(has_alpha ? 5 : 4));
  et_tensor *a = nullptr, *b = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "self", &a));
  PW_TRY(r.tensor(1, "other", &b));
  PW_TRY(r.tensor(has_alpha ? 3 : 2, "out", &out));
  BinarySpec spec;
  PW_TRY(read_alpha(r, has_alpha, &spec));
  PW_TRY(check_data(op, *a, "self"));
  PW_TRY(check_data(op, *b, "other"));
  return binary(op, kOp, view_of(*a), view_of(*b), promoted(*a, *b), *out, spec);
}

template <Op kOp>
et_error* tensor_scalar(const char* op, et_value* const* args, size_t nargs, bool has_alpha, bool reverse = false) {
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(has_alpha ? 5 : 4));
  et_tensor *a = nullptr, *out = nullptr;
  Scalar s;
  PW_TRY(r.tensor(0, "self", &a));
  PW_TRY(r.scalar(1, "other", &s));
  PW_TRY(r.tensor(has_alpha ? 3 : 2, "out", &out));
  BinarySpec spec;
  PW_TRY(read_alpha(r, has_alpha, &spec));
  PW_TRY(check_data(op, *a, "self"));
  PW_TRY(check_storage(op, *a, "self"));
  int32_t common = promoted(*a, s);
  uint64_t storage;
  View sv = scalar_view(s, computation_dtype(kOp, common), &storage);
  if (reverse) return binary(op, kOp, sv, view_of(*a), common, *out, spec);
  return binary(op, kOp, view_of(*a), sv, common, *out, spec);
}

et_error* add_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::Add>("aten::add.out", a, n, true); }
et_error* sub_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::Sub>("aten::sub.out", a, n, true); }
et_error* mul_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::Mul>("aten::mul.out", a, n, false); }
et_error* div_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::Div>("aten::div.out", a, n, false); }
et_error* maximum_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::Max>("aten::maximum.out", a, n, false); }
et_error* minimum_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::Min>("aten::minimum.out", a, n, false); }
et_error* pow_tt_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::Pow>("aten::pow.Tensor_Tensor_out", a, n, false); }
et_error* logical_and_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::LogicalAnd>("aten::logical_and.out", a, n, false); }
et_error* logical_or_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::LogicalOr>("aten::logical_or.out", a, n, false); }
et_error* logical_xor_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::LogicalXor>("aten::logical_xor.out", a, n, false); }
et_error* bitwise_and_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::BitAnd>("aten::bitwise_and.Tensor_out", a, n, false); }
et_error* bitwise_or_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::BitOr>("aten::bitwise_or.Tensor_out", a, n, false); }
et_error* bitwise_xor_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_tensor<Op::BitXor>("aten::bitwise_xor.Tensor_out", a, n, false); }
et_error* add_scalar_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_scalar<Op::Add>("aten::add.Scalar_out", a, n, true); }
et_error* sub_scalar_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_scalar<Op::Sub>("aten::sub.Scalar_out", a, n, true); }
et_error* rsub_scalar_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_scalar<Op::Sub>("aten::rsub.Scalar_out", a, n, true, true); }
et_error* mul_scalar_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_scalar<Op::Mul>("aten::mul.Scalar_out", a, n, false); }
et_error* div_scalar_out(void*, et_exec_context*, et_value* const* a, size_t n) { return tensor_scalar<Op::Div>("aten::div.Scalar_out", a, n, false); }

#define PW_CMP(name, kop)                                                                          \
  et_error* name##_tensor_out(void*, et_exec_context*, et_value* const* a, size_t n) {            \
    return tensor_tensor<Op::kop>("aten::" #name ".Tensor_out", a, n, false);                      \
  }                                                                                                \
  et_error* name##_scalar_out(void*, et_exec_context*, et_value* const* a, size_t n) {            \
    return tensor_scalar<Op::kop>("aten::" #name ".Scalar_out", a, n, false);                      \
  }
PW_CMP(eq, Eq)
PW_CMP(ne, Ne)
PW_CMP(lt, Lt)
PW_CMP(le, Le)
PW_CMP(gt, Gt)
PW_CMP(ge, Ge)
#undef PW_CMP

// rounding_mode: None (true division), "trunc" or "floor".
et_error* rounding_op(const char* op, const ArgReader& r, size_t index, Op* kind) {
  bool present = false;
  std::string mode;
  PW_TRY(r.opt_string(index, "rounding_mode", &present, &mode));
  if (!present) *kind = Op::Div;
  else if (mode == "trunc") *kind = Op::DivTrunc;
  else if (mode == "floor") *kind = Op::DivFloor;
  else return invalid(op, "rounding_mode must be None, 'trunc' or 'floor', got '" + mode + "'");
  return nullptr;
}

et_error* div_out_mode(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::div.out_mode";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *a = nullptr, *b = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "self", &a));
  PW_TRY(r.tensor(1, "other", &b));
  PW_TRY(r.tensor(3, "out", &out));
  Op kind;
  PW_TRY(rounding_op(op, r, 2, &kind));
  PW_TRY(check_data(op, *a, "self"));
  PW_TRY(check_data(op, *b, "other"));
  return binary(op, kind, view_of(*a), view_of(*b), promoted(*a, *b), *out, BinarySpec{});
}

et_error* div_scalar_mode_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::div.Scalar_mode_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *a = nullptr, *out = nullptr;
  Scalar s;
  PW_TRY(r.tensor(0, "self", &a));
  PW_TRY(r.scalar(1, "other", &s));
  PW_TRY(r.tensor(3, "out", &out));
  Op kind;
  PW_TRY(rounding_op(op, r, 2, &kind));
  PW_TRY(check_data(op, *a, "self"));
  PW_TRY(check_storage(op, *a, "self"));
  int32_t common = promoted(*a, s);
  uint64_t storage;
  View sv = scalar_view(s, kind == Op::Div ? computation_dtype(Op::Div, common) : compute_dtype(common), &storage);
  return binary(op, kind, view_of(*a), sv, common, *out, BinarySpec{});
}

// pow.Tensor_Scalar_out(self, Scalar exponent, *, out)
et_error* pow_ts_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::pow.Tensor_Scalar_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *a = nullptr, *out = nullptr;
  Scalar e;
  PW_TRY(r.tensor(0, "self", &a));
  PW_TRY(r.scalar(1, "exponent", &e));
  PW_TRY(r.tensor(2, "out", &out));
  PW_TRY(check_data(op, *a, "self"));
  PW_TRY(check_storage(op, *a, "self"));
  int32_t common = promoted(*a, e);
  BinarySpec spec;
  double x = e.to_double();
  if (is_float(common)) {
    spec.pow_mode = x == 2 ? 1 : x == 0.5 ? 2 : x == 1 ? 3 : x == -1 ? 4 : x == -0.5 ? 5 : x == 3 ? 6 : 0;
  }
  uint64_t storage;
  View sv = scalar_view(e, computation_dtype(Op::Pow, common), &storage);
  return binary(op, Op::Pow, view_of(*a), sv, common, *out, spec);
}

// pow.Scalar_out(Scalar self, Tensor exponent, *, out)
et_error* pow_st_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::pow.Scalar_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(4));
  et_tensor *e = nullptr, *out = nullptr;
  Scalar s;
  PW_TRY(r.scalar(0, "self", &s));
  PW_TRY(r.tensor(1, "exponent", &e));
  PW_TRY(r.tensor(2, "out", &out));
  PW_TRY(check_data(op, *e, "exponent"));
  PW_TRY(check_storage(op, *e, "exponent"));
  int32_t common = promoted(*e, s);
  uint64_t storage;
  View sv = scalar_view(s, computation_dtype(Op::Pow, common), &storage);
  return binary(op, Op::Pow, sv, view_of(*e), common, *out, BinarySpec{});
}

// ------------------------------------------------------------ where & masked_fill

template <typename T>
void where_run(char* const* p, const int64_t* s, int64_t n) {
  constexpr int64_t it = sizeof(T);
  T* __restrict z = reinterpret_cast<T*>(p[0]);
  const bool* c = reinterpret_cast<const bool*>(p[1]);
  const T* x = reinterpret_cast<const T*>(p[2]);
  const T* y = reinterpret_cast<const T*>(p[3]);
  if (s[0] == it && s[1] == 1) {
    if (s[2] == it && s[3] == it) {
      for (int64_t k = 0; k < n; ++k) z[k] = c[k] ? x[k] : y[k];
      return;
    }
    if (s[2] == 0 && s[3] == it) {
      const T a = *x;
      for (int64_t k = 0; k < n; ++k) z[k] = c[k] ? a : y[k];
      return;
    }
    if (s[2] == it && s[3] == 0) {
      const T b = *y;
      for (int64_t k = 0; k < n; ++k) z[k] = c[k] ? x[k] : b;
      return;
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    bool cond = *reinterpret_cast<const bool*>(p[1] + k * s[1]);
    *reinterpret_cast<T*>(p[0] + k * s[0]) = *reinterpret_cast<const T*>(p[cond ? 2 : 3] + k * s[cond ? 2 : 3]);
  }
}

// out = cond ? a : b, all broadcast; `common` the promoted dtype of a and b.
et_error* where(const char* op, const View& cond, const View& a, const View& b, int32_t common, et_tensor& out,
                const int64_t* shape, int64_t rank) {
  PW_TRY(check_storage(op, out, "out"));
  if (cond.dtype != ET_DTYPE_BOOL)
    return unsupported(op, std::string("condition/mask dtype must be bool, got ") + dtype_name(cond.dtype));
  if (!is_storage_supported(common))
    return unsupported(op, std::string("dtype ") + dtype_name(common) + " is not supported");
  PW_TRY(check_result_cast(op, common, out.dtype));
  PW_TRY(resize_out(op, out, shape, rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  PW_TRY(check_data(op, out, "out"));
  // Computed in the promoted storage dtype itself (a select converts nothing).
  Scratch sa, sb;
  View ca, cb;
  if (!as_dtype(a, common, sa, &ca) || !as_dtype(b, common, sb, &cb)) return out_of_memory(op);
  OutputBuffer ob;
  if (!ob.init(out, common, false)) return out_of_memory(op);
  Loop L = make_loop(static_cast<int>(rank), shape, {&ob.view(), &cond, &ca, &cb});
  switch (element_size(common)) {
    case 1: run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { where_run<uint8_t>(p, s, n); }); break;
    case 2: run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { where_run<uint16_t>(p, s, n); }); break;
    case 4: run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { where_run<uint32_t>(p, s, n); }); break;
    default: run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { where_run<uint64_t>(p, s, n); }); break;
  }
  ob.finish();
  return nullptr;
}

// where.self_out(condition, self, other, *, out)
et_error* where_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::where.self_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *c = nullptr, *a = nullptr, *b = nullptr, *out = nullptr;
  PW_TRY(r.tensor(0, "condition", &c));
  PW_TRY(r.tensor(1, "self", &a));
  PW_TRY(r.tensor(2, "other", &b));
  PW_TRY(r.tensor(3, "out", &out));
  const std::pair<et_tensor*, const char*> operands[] = {{c, "condition"}, {a, "self"}, {b, "other"}};
  for (const auto& [t, name] : operands) {
    PW_TRY(check_data(op, *t, name));
    PW_TRY(check_storage(op, *t, name));
  }
  int64_t ab[ET_MAX_RANK], shape[ET_MAX_RANK], rab, rank;
  if (!broadcast_shapes(a->sizes, a->rank, b->sizes, b->rank, ab, &rab) ||
      !broadcast_shapes(c->sizes, c->rank, ab, rab, shape, &rank))
    return invalid(op, "shapes " + shape_str(*c) + " (condition), " + shape_str(*a) + " and " + shape_str(*b) +
                           " are not broadcastable");
  return where(op, view_of(*c), view_of(*a), view_of(*b), promoted(*a, *b), *out, shape, rank);
}

// masked_fill.Scalar_out(self, mask, Scalar value, *, out)
et_error* masked_fill_out(void*, et_exec_context*, et_value* const* args, size_t nargs) {
  constexpr const char* op = "aten::masked_fill.Scalar_out";
  ArgReader r(op, args, nargs);
  PW_TRY(r.count(5));
  et_tensor *a = nullptr, *mask = nullptr, *out = nullptr;
  Scalar value;
  PW_TRY(r.tensor(0, "self", &a));
  PW_TRY(r.tensor(1, "mask", &mask));
  PW_TRY(r.scalar(2, "value", &value));
  PW_TRY(r.tensor(3, "out", &out));
  PW_TRY(check_data(op, *a, "self"));
  PW_TRY(check_data(op, *mask, "mask"));
  PW_TRY(check_storage(op, *a, "self"));
  int64_t shape[ET_MAX_RANK], rank = 0;
  bool ok = broadcast_shapes(a->sizes, a->rank, mask->sizes, mask->rank, shape, &rank) && rank == a->rank;
  for (int64_t d = 0; ok && d < rank; ++d) ok = shape[d] == a->sizes[d];
  if (!ok) return invalid(op, "mask of shape " + shape_str(*mask) + " does not broadcast to self's shape " + shape_str(*a));
  if (a->dtype == ET_DTYPE_BOOL && value.kind != Scalar::kBool && value.to_double() != 0 && value.to_double() != 1)
    return invalid(op, "value " + value.text() + " cannot be converted to bool without overflow");
  uint64_t storage;
  View sv = scalar_view(value, a->dtype, &storage);
  return where(op, view_of(*mask), sv, view_of(*a), a->dtype, *out, shape, rank);
}

constexpr KernelEntry kKernels[] = {
    {"aten::add.out", add_out},
    {"aten::sub.out", sub_out},
    {"aten::mul.out", mul_out},
    {"aten::div.out", div_out},
    {"aten::div.out_mode", div_out_mode},
    {"aten::add.Scalar_out", add_scalar_out},
    {"aten::sub.Scalar_out", sub_scalar_out},
    {"aten::mul.Scalar_out", mul_scalar_out},
    {"aten::div.Scalar_out", div_scalar_out},
    {"aten::div.Scalar_mode_out", div_scalar_mode_out},
    {"aten::rsub.Scalar_out", rsub_scalar_out},
    {"aten::pow.Tensor_Scalar_out", pow_ts_out},
    {"aten::pow.Tensor_Tensor_out", pow_tt_out},
    {"aten::pow.Scalar_out", pow_st_out},
    {"aten::eq.Scalar_out", eq_scalar_out},
    {"aten::eq.Tensor_out", eq_tensor_out},
    {"aten::ne.Scalar_out", ne_scalar_out},
    {"aten::ne.Tensor_out", ne_tensor_out},
    {"aten::lt.Scalar_out", lt_scalar_out},
    {"aten::lt.Tensor_out", lt_tensor_out},
    {"aten::le.Scalar_out", le_scalar_out},
    {"aten::le.Tensor_out", le_tensor_out},
    {"aten::gt.Scalar_out", gt_scalar_out},
    {"aten::gt.Tensor_out", gt_tensor_out},
    {"aten::ge.Scalar_out", ge_scalar_out},
    {"aten::ge.Tensor_out", ge_tensor_out},
    {"aten::logical_and.out", logical_and_out},
    {"aten::logical_or.out", logical_or_out},
    {"aten::logical_xor.out", logical_xor_out},
    {"aten::bitwise_and.Tensor_out", bitwise_and_out},
    {"aten::bitwise_or.Tensor_out", bitwise_or_out},
    {"aten::bitwise_xor.Tensor_out", bitwise_xor_out},
    {"aten::maximum.out", maximum_out},
    {"aten::minimum.out", minimum_out},
    {"aten::where.self_out", where_out},
    {"aten::masked_fill.Scalar_out", masked_fill_out},
};

}  // namespace

std::span<const KernelEntry> binary_elementwise_kernels() { return kKernels; }

}  // namespace etrt::kernels
