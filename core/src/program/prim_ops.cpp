#include "prim_ops.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "../error.h"
#include "checked_size.h"
#include "etrt/plugin.hpp"
#include "tensor_shape.h"

namespace etrt {
namespace {

// Operands reach an op only after check_prim_operands() accepted them at load, and keep their kinds (the method
// verifies every instruction that writes a value): the ops check only what depends on the values themselves.
et_error* fail(std::string_view op, const std::string& message) {
  return make_error(ET_ERR_INVALID_ARGUMENT, std::string(op) + ": " + message);
}

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
et_error* arithmetic(et_value* const* args, size_t) {
  bool integral = args[0]->tag != ET_VALUE_DOUBLE && args[1]->tag != ET_VALUE_DOUBLE;
  int64_t a = args[0]->as_int, b = args[1]->as_int;
  double x = as_double(args[0]), y = as_double(args[1]);
  // Integer overflow is an error (it would be undefined behaviour in C++).
  int64_t r = 0;
  bool overflow = integral && ((kOp == '+' && !checked_add(a, b, &r)) ||
                               (kOp == '-' && __builtin_sub_overflow(a, b, &r)) ||
                               (kOp == '*' && !checked_mul(a, b, &r)) ||
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
et_error* comparison(et_value* const* args, size_t) {
  double x = as_double(args[0]), y = as_double(args[1]);
  bool r = kOp == '=' ? x == y : kOp == '>' ? x > y : kOp == '<' ? x < y : kOp == 'g' ? x >= y : x <= y;
  args[2]->tag = ET_VALUE_BOOL;
  args[2]->as_int = r ? 1 : 0;
  return nullptr;
}

template <char kOp>
et_error* unary(et_value* const* args, size_t) {
  double x = as_double(args[0]);
  bool integral = args[0]->tag != ET_VALUE_DOUBLE;
  switch (kOp) {
    case '-':
      if (integral && args[0]->as_int == INT64_MIN) return fail("executorch_prim::neg.Scalar", "integer overflow");
      store(args[1], integral, -args[0]->as_int, -x);
      break;
    case 'f': store(args[1], false, 0, x); break;  // sym_float
    default: {
      const double rounded = kOp == 'c' ? std::ceil(x) : kOp == 'r' ? std::nearbyint(x) : std::trunc(x);
      // Converting a double outside int64 (or NaN) is undefined behaviour.
      if (!(rounded >= -0x1p63 && rounded < 0x1p63))
        return fail("executorch_prim rounding", std::to_string(x) + " does not fit an int");
      store(args[1], true, static_cast<int64_t>(rounded), 0);
      break;
    }
  }
  return nullptr;
}

// The element count of one of the host's tensors. Its shape passed measure_shape when it was declared, set or
// resized, so the plain product cannot overflow (and fits int64).
size_t numel_of(const et_tensor& t) {
  size_t n = 1;
  for (int32_t i = 0; i < t.rank; ++i) n *= static_cast<size_t>(t.sizes[i]);
  return n;
}

et_error* sym_size(et_value* const* args, size_t) {
  const et_tensor* t = args[0]->tensor;
  int64_t dim = args[1]->as_int < 0 ? args[1]->as_int + t->rank : args[1]->as_int;
  if (dim < 0 || dim >= t->rank)
    return fail("aten::sym_size.int", "dim " + std::to_string(args[1]->as_int) + " out of range for rank " + std::to_string(t->rank));
  args[2]->tag = ET_VALUE_INT;
  args[2]->as_int = t->sizes[dim];
  return nullptr;
}

et_error* sym_numel(et_value* const* args, size_t) {
  args[1]->tag = ET_VALUE_INT;
  args[1]->as_int = static_cast<int64_t>(numel_of(*args[0]->tensor));  // fits: the dense strides fit int64
  return nullptr;
}

// _local_scalar_dense(self, out): the one element of self as a number (Tensor.item();
// ExecuTorch's Llama export reads its start position this way).
et_error* local_scalar_dense(et_value* const* args, size_t) {
  const et_tensor* t = args[0]->tensor;
  size_t n = numel_of(*t);
  if (n != 1) return fail("aten::_local_scalar_dense", "self must have exactly one element, has " + std::to_string(n));
  const void* p = t->data;
  switch (t->dtype) {  // the dtypes local_scalar_result_tag() accepts
    case ET_DTYPE_UINT8: store(args[1], true, *static_cast<const uint8_t*>(p), 0); break;
    case ET_DTYPE_INT8: store(args[1], true, *static_cast<const int8_t*>(p), 0); break;
    case ET_DTYPE_INT16: store(args[1], true, *static_cast<const int16_t*>(p), 0); break;
    case ET_DTYPE_INT32: store(args[1], true, *static_cast<const int32_t*>(p), 0); break;
    case ET_DTYPE_INT64: store(args[1], true, *static_cast<const int64_t*>(p), 0); break;
    case ET_DTYPE_FLOAT32: store(args[1], false, 0, *static_cast<const float*>(p)); break;
    case ET_DTYPE_FLOAT64: store(args[1], false, 0, *static_cast<const double*>(p)); break;
    default:  // ET_DTYPE_BOOL
      args[1]->tag = ET_VALUE_BOOL;
      args[1]->as_int = *static_cast<const uint8_t*>(p) != 0;
      break;
  }
  return nullptr;
}

// et_view(self, size, out): out takes the new shape (one -1 inferred) and
// aliases self's data. The requested sizes are values of the run: checked here.
et_error* et_view(et_value* const* args, size_t) {
  constexpr std::string_view op = "executorch_prim::et_view.default";
  const et_tensor* self = args[0]->tensor;
  et_tensor* out = args[2]->tensor;
  const auto* requested = static_cast<const int64_t*>(args[1]->items);
  const size_t rank = args[1]->count;  // == out's rank (at most ET_MAX_RANK): checked at load
  auto refuse = [&](const std::string& why) {
    return fail(op, "size " + plugin::shape_string(requested, static_cast<int64_t>(rank)) + ": " + why);
  };
  int64_t sizes[ET_MAX_RANK];
  int infer = -1;
  for (size_t i = 0; i < rank; ++i) {
    sizes[i] = requested[i];
    if (sizes[i] == -1) {
      if (infer >= 0) return refuse("more than one -1");
      infer = static_cast<int>(i);
      sizes[i] = 1;  // the product of the others first
    }
  }
  const size_t element = dtype_size(out->dtype);
  const size_t numel = numel_of(*self);
  if (infer >= 0) {
    const ShapeSize known = measure_shape(sizes, rank, element);
    if (!known.ok()) return refuse(known.fault_text());
    sizes[infer] = known.numel == 0 ? 0 : static_cast<int64_t>(numel / known.numel);
  }
  const ShapeSize view = measure_shape(sizes, rank, element);
  if (!view.ok()) return refuse(view.fault_text());
  if (view.numel != numel) return refuse("does not match the " + std::to_string(numel) + " elements of self");
  // The host owns out's sizes and strides (ET_MAX_RANK entries); they are const only to plugins.
  auto* out_sizes = const_cast<int64_t*>(out->sizes);
  auto* out_strides = const_cast<int64_t*>(out->strides);
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    out_sizes[i] = sizes[i];
    out_strides[i] = stride;
    stride *= sizes[i] > 1 ? sizes[i] : 1;  // cannot overflow: the view's strides passed measure_shape
  }
  out->nbytes = view.nbytes;
  out->data = self->data;
  out->capacity_bytes = self->capacity_bytes;
  return nullptr;
}

// ------------------------------------------------------------- load-time operand checks

bool is_number(const et_value* v) { return v->tag == ET_VALUE_INT || v->tag == ET_VALUE_DOUBLE || v->tag == ET_VALUE_BOOL; }

const char* tag_text(int32_t tag) {
  switch (tag) {
    case ET_VALUE_INT: return "an int";
    case ET_VALUE_BOOL: return "a bool";
    case ET_VALUE_DOUBLE: return "a double";
    default: return "a number";
  }
}

// "" or why the operands do not fit `signature` (e.g. "(number, number, out)"); each check names the operand.
class OperandCheck {
 public:
  OperandCheck(const et_value* const* args, size_t nargs, size_t want, const char* signature) : args_(args) {
    if (nargs != want)
      problem_ = "takes " + std::to_string(want) + " operands " + signature + ", the program gives " + std::to_string(nargs);
  }
  OperandCheck& number(size_t i) { return require(i, is_number(args_[i]), "a number (int, double or bool)"); }
  OperandCheck& integer(size_t i) { return require(i, args_[i]->tag == ET_VALUE_INT, "an int"); }
  OperandCheck& tensor(size_t i) { return require(i, args_[i]->tag == ET_VALUE_TENSOR, "a tensor"); }
  OperandCheck& int_list(size_t i) { return require(i, args_[i]->tag == ET_VALUE_INT_LIST, "an int list"); }
  // The out operand of a scalar result: the op writes `tag` there, which must be the kind the program declares.
  OperandCheck& out(size_t i, int32_t tag) {
    if (!problem_.empty() || args_[i]->tag == tag) return *this;
    problem_ = "operand " + std::to_string(i) + " (out) is " + value_kind_text(*args_[i]) + ", but the result is " + tag_text(tag);
    return *this;
  }
  OperandCheck& also(bool ok, const std::string& why) {
    if (problem_.empty() && !ok) problem_ = why;
    return *this;
  }
  bool ok() const { return problem_.empty(); }
  const std::string& problem() const { return problem_; }

 private:
  OperandCheck& require(size_t i, bool ok, const char* expected) {
    if (problem_.empty() && !ok)
      problem_ = "operand " + std::to_string(i) + " is " + value_kind_text(*args_[i]) + ", expected " + expected;
    return *this;
  }
  const et_value* const* args_;
  std::string problem_;
};

int32_t number_tag(bool integral) { return integral ? ET_VALUE_INT : ET_VALUE_DOUBLE; }
bool integral(const et_value* v) { return v->tag != ET_VALUE_DOUBLE; }

template <char kOp>
std::string check_arithmetic(const et_value* const* args, size_t nargs) {
  OperandCheck check(args, nargs, 3, "(number, number, out)");
  if (check.ok()) check.number(0).number(1);
  if (check.ok()) check.out(2, number_tag(kOp != '/' && integral(args[0]) && integral(args[1])));
  return check.problem();
}

std::string check_comparison(const et_value* const* args, size_t nargs) {
  OperandCheck check(args, nargs, 3, "(number, number, out)");
  if (check.ok()) check.number(0).number(1).out(2, ET_VALUE_BOOL);
  return check.problem();
}

template <char kOp>
std::string check_unary(const et_value* const* args, size_t nargs) {
  OperandCheck check(args, nargs, 2, "(number, out)");
  if (check.ok()) check.number(0);
  if (check.ok()) check.out(1, kOp == '-' ? number_tag(integral(args[0])) : number_tag(kOp != 'f'));
  return check.problem();
}

std::string check_sym_size(const et_value* const* args, size_t nargs) {
  OperandCheck check(args, nargs, 3, "(tensor, dim, out)");
  if (check.ok()) check.tensor(0).integer(1).out(2, ET_VALUE_INT);
  return check.problem();
}

std::string check_sym_numel(const et_value* const* args, size_t nargs) {
  OperandCheck check(args, nargs, 2, "(tensor, out)");
  if (check.ok()) check.tensor(0).out(1, ET_VALUE_INT);
  return check.problem();
}

// What _local_scalar_dense writes for a tensor of `dtype`; ET_VALUE_NULL for dtypes it does not read.
int32_t local_scalar_result_tag(int32_t dtype) {
  switch (dtype) {
    case ET_DTYPE_UINT8: case ET_DTYPE_INT8: case ET_DTYPE_INT16: case ET_DTYPE_INT32: case ET_DTYPE_INT64:
      return ET_VALUE_INT;
    case ET_DTYPE_FLOAT32: case ET_DTYPE_FLOAT64: return ET_VALUE_DOUBLE;
    case ET_DTYPE_BOOL: return ET_VALUE_BOOL;
    default: return ET_VALUE_NULL;
  }
}

std::string check_local_scalar_dense(const et_value* const* args, size_t nargs) {
  OperandCheck check(args, nargs, 2, "(tensor, out)");
  if (check.ok()) check.tensor(0);
  if (!check.ok()) return check.problem();
  const int32_t result = local_scalar_result_tag(args[0]->tensor->dtype);
  check.also(result != ET_VALUE_NULL, std::string("operand 0 is ") + value_kind_text(*args[0]) + ", whose dtype it cannot read");
  if (check.ok()) check.out(1, result);
  return check.problem();
}

std::string check_et_view(const et_value* const* args, size_t nargs) {
  OperandCheck check(args, nargs, 3, "(tensor, int list, out tensor)");
  if (check.ok()) check.tensor(0).int_list(1).tensor(2);
  if (!check.ok()) return check.problem();
  const et_tensor& self = *args[0]->tensor;
  const et_tensor& out = *args[2]->tensor;
  check.also(self.dtype == out.dtype, std::string("self (operand 0) is ") + value_kind_text(*args[0]) + ", out (operand 2) " +
                                          value_kind_text(*args[2]) + ": a view keeps the dtype");
  check.also(!out.is_const, "out (operand 2) is a constant: the view would replace the program's data");
  check.also(args[1]->count == static_cast<size_t>(out.rank),
             "the size (operand 1) has " + std::to_string(args[1]->count) + " items for an out tensor of rank " +
                 std::to_string(out.rank));
  return check.problem();
}

struct PrimEntry {
  std::string_view name;
  PrimOpFn fn;
  PrimCheckFn check;
};

constexpr PrimEntry kPrimOps[] = {
    {"aten::sym_size.int", sym_size, check_sym_size},
    {"aten::sym_numel", sym_numel, check_sym_numel},
    {"aten::_local_scalar_dense", local_scalar_dense, check_local_scalar_dense},
    {"executorch_prim::et_view.default", et_view, check_et_view},
    {"executorch_prim::add.Scalar", arithmetic<'+'>, check_arithmetic<'+'>},
    {"executorch_prim::sub.Scalar", arithmetic<'-'>, check_arithmetic<'-'>},
    {"executorch_prim::mul.Scalar", arithmetic<'*'>, check_arithmetic<'*'>},
    {"executorch_prim::truediv.Scalar", arithmetic<'/'>, check_arithmetic<'/'>},
    {"executorch_prim::floordiv.Scalar", arithmetic<'f'>, check_arithmetic<'f'>},
    {"executorch_prim::floordiv.int", arithmetic<'f'>, check_arithmetic<'f'>},
    {"executorch_prim::mod.Scalar", arithmetic<'%'>, check_arithmetic<'%'>},
    {"executorch_prim::mod.int", arithmetic<'%'>, check_arithmetic<'%'>},
    {"executorch_prim::sym_max.Scalar", arithmetic<'M'>, check_arithmetic<'M'>},
    {"executorch_prim::sym_min.Scalar", arithmetic<'m'>, check_arithmetic<'m'>},
    {"executorch_prim::eq.Scalar", comparison<'='>, check_comparison},
    {"executorch_prim::gt.Scalar", comparison<'>'>, check_comparison},
    {"executorch_prim::lt.Scalar", comparison<'<'>, check_comparison},
    {"executorch_prim::ge.Scalar", comparison<'g'>, check_comparison},
    {"executorch_prim::le.Scalar", comparison<'l'>, check_comparison},
    {"executorch_prim::neg.Scalar", unary<'-'>, check_unary<'-'>},
    {"executorch_prim::sym_float.Scalar", unary<'f'>, check_unary<'f'>},
    {"executorch_prim::ceil.Scalar", unary<'c'>, check_unary<'c'>},
    {"executorch_prim::round.Scalar", unary<'r'>, check_unary<'r'>},
    {"executorch_prim::trunc.Scalar", unary<'t'>, check_unary<'t'>},
};

const PrimEntry* find_entry(std::string_view name) {
  for (const PrimEntry& entry : kPrimOps)
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace

PrimOpFn find_prim_op(std::string_view name) {
  const PrimEntry* entry = find_entry(name);
  return entry != nullptr ? entry->fn : nullptr;
}

std::string check_prim_operands(std::string_view name, const et_value* const* args, size_t nargs) {
  const PrimEntry* entry = find_entry(name);
  return entry != nullptr ? entry->check(args, nargs) : "not a built-in operator";
}

std::string value_kind_text(const et_value& value) {
  switch (value.tag) {
    case ET_VALUE_NULL: return "none";
    case ET_VALUE_INT: return "an int";
    case ET_VALUE_BOOL: return "a bool";
    case ET_VALUE_DOUBLE: return "a double";
    case ET_VALUE_STRING: return "a string";
    case ET_VALUE_TENSOR: {
      const std::string dtype = plugin::dtype_name(value.tensor->dtype);  // "an int64", "an unknown", "a float32"
      return (dtype[0] == 'i' || dtype.starts_with("un") ? "an " : "a ") + dtype + " tensor of rank " +
             std::to_string(value.tensor->rank);
    }
    case ET_VALUE_INT_LIST: return "an int list of " + std::to_string(value.count) + " items";
    case ET_VALUE_DOUBLE_LIST: return "a double list of " + std::to_string(value.count) + " items";
    case ET_VALUE_BOOL_LIST: return "a bool list of " + std::to_string(value.count) + " items";
    case ET_VALUE_TENSOR_LIST: return "a tensor list of " + std::to_string(value.count) + " items";
    case ET_VALUE_OPTIONAL_TENSOR_LIST: return "an optional tensor list of " + std::to_string(value.count) + " items";
    default: return "a value of unknown kind " + std::to_string(value.tag);
  }
}

}  // namespace etrt
