#include "prim_ops.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "../error.h"
#include "tensor_shape.h"

namespace etrt {
namespace {

et_error* fail(std::string_view op, const std::string& message) {
  return make_error(ET_ERR_INVALID_ARGUMENT, std::string(op) + ": " + message);
}

bool is_number(const et_value* v) { return v->tag == ET_VALUE_INT || v->tag == ET_VALUE_DOUBLE || v->tag == ET_VALUE_BOOL; }
double as_double(const et_value* v) { return v->tag == ET_VALUE_DOUBLE ? v->as_double : static_cast<double>(v->as_int); }

// Writes a result of Python number semantics: int op int stays int.
void store(et_value* out, bool integral, int64_t i, double d) {
  if (integral) {
    out->tag = ET_VALUE_INT;
    out->as_int = i;
  } else {
    out->tag = ET_VALUE_DOUBLE;
    out->as_double = d;
  }
}

template <char kOp>
et_error* arithmetic(et_value* const* args, size_t nargs) {
  constexpr std::string_view names[] = {"executorch_prim arithmetic"};
  if (nargs != 3 || !is_number(args[0]) || !is_number(args[1])) return fail(names[0], "expected (number, number, out)");
  bool integral = args[0]->tag != ET_VALUE_DOUBLE && args[1]->tag != ET_VALUE_DOUBLE;
  int64_t a = args[0]->as_int, b = args[1]->as_int;
  double x = as_double(args[0]), y = as_double(args[1]);
  // Integer overflow is an error (it would be undefined behaviour in C++).
  int64_t r = 0;
  bool overflow = integral && ((kOp == '+' && __builtin_add_overflow(a, b, &r)) ||
                               (kOp == '-' && __builtin_sub_overflow(a, b, &r)) ||
                               (kOp == '*' && __builtin_mul_overflow(a, b, &r)) ||
                               ((kOp == 'f' || kOp == '%') && a == INT64_MIN && b == -1));
  if (overflow) return fail("executorch_prim arithmetic", "integer overflow");
  switch (kOp) {
    case '+': store(args[2], integral, r, x + y); break;
    case '-': store(args[2], integral, r, x - y); break;
    case '*': store(args[2], integral, r, x * y); break;
    case '/': store(args[2], false, 0, x / y); break;
    case 'f':  // floordiv
      if (integral) {
        if (b == 0) return fail("executorch_prim::floordiv", "division by zero");
        int64_t q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
        store(args[2], true, q, 0);
      } else {
        store(args[2], false, 0, std::floor(x / y));
      }
      break;
    case '%':
      if (integral) {
        if (b == 0) return fail("executorch_prim::mod", "division by zero");
        int64_t r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        store(args[2], true, r, 0);
      } else {
        store(args[2], false, 0, x - std::floor(x / y) * y);
      }
      break;
    case 'M': store(args[2], integral, a > b ? a : b, x > y ? x : y); break;
    case 'm': store(args[2], integral, a < b ? a : b, x < y ? x : y); break;
  }
  return nullptr;
}

template <char kOp>
et_error* comparison(et_value* const* args, size_t nargs) {
  if (nargs != 3 || !is_number(args[0]) || !is_number(args[1]))
    return fail("executorch_prim comparison", "expected (number, number, out)");
  double x = as_double(args[0]), y = as_double(args[1]);
  bool r = kOp == '=' ? x == y : kOp == '>' ? x > y : kOp == '<' ? x < y : kOp == 'g' ? x >= y : x <= y;
  args[2]->tag = ET_VALUE_BOOL;
  args[2]->as_int = r ? 1 : 0;
  return nullptr;
}

template <char kOp>
et_error* unary(et_value* const* args, size_t nargs) {
  if (nargs != 2 || !is_number(args[0])) return fail("executorch_prim unary", "expected (number, out)");
  double x = as_double(args[0]);
  bool integral = args[0]->tag != ET_VALUE_DOUBLE;
  switch (kOp) {
    case '-':
      if (integral && args[0]->as_int == INT64_MIN) return fail("executorch_prim::neg.Scalar", "integer overflow");
      store(args[1], integral, -args[0]->as_int, -x);
      break;
    case 'f': store(args[1], false, 0, x); break;  // sym_float
    case 'c': store(args[1], true, static_cast<int64_t>(std::ceil(x)), 0); break;
    case 'r': store(args[1], true, static_cast<int64_t>(std::nearbyint(x)), 0); break;
    case 't': store(args[1], true, static_cast<int64_t>(std::trunc(x)), 0); break;
  }
  return nullptr;
}

et_error* sym_size(et_value* const* args, size_t nargs) {
  if (nargs != 3 || args[0]->tag != ET_VALUE_TENSOR || args[1]->tag != ET_VALUE_INT)
    return fail("aten::sym_size.int", "expected (tensor, dim, out)");
  const et_tensor* t = args[0]->tensor;
  int64_t dim = args[1]->as_int < 0 ? args[1]->as_int + t->rank : args[1]->as_int;
  if (dim < 0 || dim >= t->rank)
    return fail("aten::sym_size.int", "dim " + std::to_string(args[1]->as_int) + " out of range for rank " + std::to_string(t->rank));
  args[2]->tag = ET_VALUE_INT;
  args[2]->as_int = t->sizes[dim];
  return nullptr;
}

et_error* sym_numel(et_value* const* args, size_t nargs) {
  if (nargs != 2 || args[0]->tag != ET_VALUE_TENSOR) return fail("aten::sym_numel", "expected (tensor, out)");
  int64_t n = 1;
  for (int32_t i = 0; i < args[0]->tensor->rank; ++i) n *= args[0]->tensor->sizes[i];
  args[1]->tag = ET_VALUE_INT;
  args[1]->as_int = n;
  return nullptr;
}

// _local_scalar_dense(self, out): the one element of self as a number (Tensor.item();
// ExecuTorch's Llama export reads its start position this way).
et_error* local_scalar_dense(et_value* const* args, size_t nargs) {
  constexpr std::string_view op = "aten::_local_scalar_dense";
  if (nargs != 2 || args[0]->tag != ET_VALUE_TENSOR) return fail(op, "expected (tensor, out)");
  const et_tensor* t = args[0]->tensor;
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; ++i) n *= t->sizes[i];
  if (n != 1) return fail(op, "self must have exactly one element, has " + std::to_string(n));
  const void* p = t->data;
  switch (t->dtype) {
    case ET_DTYPE_UINT8: store(args[1], true, *static_cast<const uint8_t*>(p), 0); break;
    case ET_DTYPE_INT8: store(args[1], true, *static_cast<const int8_t*>(p), 0); break;
    case ET_DTYPE_INT16: store(args[1], true, *static_cast<const int16_t*>(p), 0); break;
    case ET_DTYPE_INT32: store(args[1], true, *static_cast<const int32_t*>(p), 0); break;
    case ET_DTYPE_INT64: store(args[1], true, *static_cast<const int64_t*>(p), 0); break;
    case ET_DTYPE_FLOAT32: store(args[1], false, 0, *static_cast<const float*>(p)); break;
    case ET_DTYPE_FLOAT64: store(args[1], false, 0, *static_cast<const double*>(p)); break;
    case ET_DTYPE_BOOL:
      args[1]->tag = ET_VALUE_BOOL;
      args[1]->as_int = *static_cast<const uint8_t*>(p) != 0;
      break;
    default: return fail(op, "dtype " + std::to_string(t->dtype) + " is not supported");
  }
  return nullptr;
}

// et_view(self, size, out): out takes the new shape (one -1 inferred) and
// aliases self's data.
et_error* et_view(et_value* const* args, size_t nargs) {
  constexpr std::string_view op = "executorch_prim::et_view.default";
  if (nargs != 3 || args[0]->tag != ET_VALUE_TENSOR || args[1]->tag != ET_VALUE_INT_LIST || args[2]->tag != ET_VALUE_TENSOR)
    return fail(op, "expected (tensor, int list, out tensor)");
  const et_tensor* self = args[0]->tensor;
  et_tensor* out = args[2]->tensor;
  if (self->dtype != out->dtype) return fail(op, "dtype of self and out differ");
  const auto* requested = static_cast<const int64_t*>(args[1]->items);
  size_t rank = args[1]->count;
  if (rank > ET_MAX_RANK) return fail(op, "rank too large");
  int64_t numel = 1;
  for (int32_t i = 0; i < self->rank; ++i) numel *= self->sizes[i];
  int64_t sizes[ET_MAX_RANK];
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < rank; ++i) {
    sizes[i] = requested[i];
    if (sizes[i] == -1) {
      if (infer >= 0) return fail(op, "more than one -1 in the size");
      infer = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      return fail(op, "negative size");
    } else {
      known *= sizes[i];
    }
  }
  if (infer >= 0) sizes[infer] = known == 0 ? 0 : numel / known;
  int64_t total = 1;
  for (size_t i = 0; i < rank; ++i) total *= sizes[i];
  if (total != numel) return fail(op, "size does not match the " + std::to_string(numel) + " elements of self");
  // The out tensor's bound covers any view of an input within its bound.
  auto* out_sizes = const_cast<int64_t*>(out->sizes);
  auto* out_strides = const_cast<int64_t*>(out->strides);
  if (static_cast<size_t>(out->rank) != rank) return fail(op, "rank of out differs from the size");
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    out_sizes[i] = sizes[i];
    out_strides[i] = stride;
    stride *= sizes[i] > 0 ? sizes[i] : 1;
  }
  out->nbytes = static_cast<size_t>(numel) * dtype_size(out->dtype);
  out->data = self->data;
  out->capacity_bytes = self->capacity_bytes;
  return nullptr;
}

struct PrimEntry {
  std::string_view name;
  PrimOpFn fn;
};

constexpr PrimEntry kPrimOps[] = {
    {"aten::sym_size.int", sym_size},
    {"aten::sym_numel", sym_numel},
    {"aten::_local_scalar_dense", local_scalar_dense},
    {"executorch_prim::et_view.default", et_view},
    {"executorch_prim::add.Scalar", arithmetic<'+'>},
    {"executorch_prim::sub.Scalar", arithmetic<'-'>},
    {"executorch_prim::mul.Scalar", arithmetic<'*'>},
    {"executorch_prim::truediv.Scalar", arithmetic<'/'>},
    {"executorch_prim::floordiv.Scalar", arithmetic<'f'>},
    {"executorch_prim::floordiv.int", arithmetic<'f'>},
    {"executorch_prim::mod.Scalar", arithmetic<'%'>},
    {"executorch_prim::mod.int", arithmetic<'%'>},
    {"executorch_prim::sym_max.Scalar", arithmetic<'M'>},
    {"executorch_prim::sym_min.Scalar", arithmetic<'m'>},
    {"executorch_prim::eq.Scalar", comparison<'='>},
    {"executorch_prim::gt.Scalar", comparison<'>'>},
    {"executorch_prim::lt.Scalar", comparison<'<'>},
    {"executorch_prim::ge.Scalar", comparison<'g'>},
    {"executorch_prim::le.Scalar", comparison<'l'>},
    {"executorch_prim::neg.Scalar", unary<'-'>},
    {"executorch_prim::sym_float.Scalar", unary<'f'>},
    {"executorch_prim::ceil.Scalar", unary<'c'>},
    {"executorch_prim::round.Scalar", unary<'r'>},
    {"executorch_prim::trunc.Scalar", unary<'t'>},
};

}  // namespace

PrimOpFn find_prim_op(std::string_view name) {
  for (const PrimEntry& entry : kPrimOps)
    if (entry.name == name) return entry.fn;
  return nullptr;
}

}  // namespace etrt
