// Shared machinery of the pointwise kernel family: argument readers that
// produce clear errors, dtype promotion (PyTorch rules), tensor views, and a
// strided N-operand loop that coalesces dimensions and splits work across the
// host's thread pool.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels.h"

namespace etrt::kernels::pw {

using etrt::plugin::dtype_name;
using etrt::plugin::element_size;

// Elements per parallel chunk: large enough that dispatch costs nothing.
constexpr size_t kGrain = 1 << 14;

#define PW_TRY(expr)                      \
  do {                                    \
    if (et_error* pw_e_ = (expr)) return pw_e_; \
  } while (0)

// ------------------------------------------------------------------ messages

inline std::string str(int64_t v) { return std::to_string(v); }
inline std::string shape_str(const int64_t* sizes, int64_t rank) {
  std::string s = "[";
  for (int64_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}
inline std::string shape_str(const et_tensor& t) { return shape_str(t.sizes, t.rank); }

inline et_error* fail(int32_t code, const char* op, const std::string& what) {
  return host.error(code, std::string(op) + ": " + what);
}
inline et_error* invalid(const char* op, const std::string& what) { return fail(ET_ERR_INVALID_ARGUMENT, op, what); }
inline et_error* unsupported(const char* op, const std::string& what) { return fail(ET_ERR_NOT_SUPPORTED, op, what); }

// ------------------------------------------------------------------- dtypes

inline bool is_float(int32_t d) {
  return d == ET_DTYPE_FLOAT32 || d == ET_DTYPE_FLOAT64 || d == ET_DTYPE_FLOAT16 || d == ET_DTYPE_BFLOAT16;
}
inline bool is_integral(int32_t d) {  // bool excluded
  return d == ET_DTYPE_UINT8 || d == ET_DTYPE_INT8 || d == ET_DTYPE_INT16 || d == ET_DTYPE_INT32 || d == ET_DTYPE_INT64;
}
// The storage dtypes this family reads and writes.
inline bool is_storage_supported(int32_t d) { return is_integral(d) || d == ET_DTYPE_FLOAT32 || d == ET_DTYPE_FLOAT64 || d == ET_DTYPE_BOOL; }

// PyTorch's promote_types for the real dtypes.
inline int32_t promote_types(int32_t a, int32_t b) {
  if (a == b) return a;
  if (a == ET_DTYPE_BOOL) return b;
  if (b == ET_DTYPE_BOOL) return a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    if (a == ET_DTYPE_FLOAT64 || b == ET_DTYPE_FLOAT64) return ET_DTYPE_FLOAT64;
    return ET_DTYPE_FLOAT32;  // f32 with a half type, or f16 with bf16
  }
  if (a == ET_DTYPE_UINT8 || b == ET_DTYPE_UINT8) {
    int32_t other = a == ET_DTYPE_UINT8 ? b : a;
    return other == ET_DTYPE_INT8 ? ET_DTYPE_INT16 : other;
  }
  return element_size(a) >= element_size(b) ? a : b;
}

// 0 bool, 1 integral, 2 floating.
inline int category(int32_t d) { return d == ET_DTYPE_BOOL ? 0 : is_float(d) ? 2 : 1; }

// torch.can_cast: no float -> integral, no non-bool -> bool.
inline bool can_cast(int32_t from, int32_t to) {
  if (is_float(from) && !is_float(to)) return false;
  if (from != ET_DTYPE_BOOL && to == ET_DTYPE_BOOL) return false;
  return true;
}

// The op's result type must cast to the output's dtype (PyTorch's out= rule).
inline et_error* check_result_cast(const char* op, int32_t result, int32_t out_dtype) {
  if (can_cast(result, out_dtype)) return nullptr;
  return invalid(op, std::string("result type ") + dtype_name(result) + " can't be cast to the output dtype " +
                         dtype_name(out_dtype));
}

// A Scalar argument (Int, Double or Bool value).
struct Scalar {
  enum Kind { kInt, kDouble, kBool } kind = kInt;
  int64_t i = 0;
  double d = 0;
  static Scalar of_int(int64_t v) { Scalar s; s.kind = kInt; s.i = v; s.d = static_cast<double>(v); return s; }
  static Scalar of_double(double v) { Scalar s; s.kind = kDouble; s.d = v; s.i = saturate_to_int64(v); return s; }
  // NaN -> 0 and out-of-range values -> the nearest bound (a plain cast would be UB).
  static int64_t saturate_to_int64(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
    if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(v);
  }
  static Scalar of_bool(bool v) { Scalar s; s.kind = kBool; s.i = v; s.d = v; return s; }
  double to_double() const { return kind == kDouble ? d : static_cast<double>(i); }
  int64_t to_int() const { return kind == kDouble ? static_cast<int64_t>(d) : i; }
  bool to_bool() const { return kind == kDouble ? d != 0 : i != 0; }
  // The dtype PyTorch gives a wrapped Python number.
  int32_t dtype() const { return kind == kDouble ? ET_DTYPE_FLOAT32 : kind == kInt ? ET_DTYPE_INT64 : ET_DTYPE_BOOL; }
  std::string text() const {
    if (kind == kBool) return i ? "True" : "False";
    if (kind == kInt) return std::to_string(i);
    return std::to_string(d);
  }
};

// PyTorch's result_type over tensors (dimensioned tensors outrank rank-0
// ones, which outrank wrapped scalars, unless a lower-priority operand is of
// a higher category).
struct ResultType {
  int32_t dim = -1, zero = -1, wrapped = -1;
  void add(const et_tensor& t) {
    int32_t& slot = t.rank > 0 ? dim : zero;
    slot = slot < 0 ? t.dtype : promote_types(slot, t.dtype);
  }
  void add(const Scalar& s) { wrapped = wrapped < 0 ? s.dtype() : promote_types(wrapped, s.dtype()); }
  static int32_t combine(int32_t higher, int32_t lower) {
    if (higher < 0) return lower;
    if (lower < 0) return higher;
    if (is_float(higher)) return higher;
    if (higher == ET_DTYPE_BOOL || is_float(lower)) return promote_types(higher, lower);
    return higher;
  }
  int32_t get() const { return combine(dim, combine(zero, wrapped)); }
};

// --------------------------------------------------------------- arguments

inline const char* tag_name(int32_t tag) {
  switch (tag) {
    case ET_VALUE_NULL: return "None";
    case ET_VALUE_INT: return "an int";
    case ET_VALUE_BOOL: return "a bool";
    case ET_VALUE_DOUBLE: return "a double";
    case ET_VALUE_STRING: return "a string";
    case ET_VALUE_TENSOR: return "a tensor";
    case ET_VALUE_INT_LIST: return "an int list";
    case ET_VALUE_DOUBLE_LIST: return "a double list";
    case ET_VALUE_BOOL_LIST: return "a bool list";
    case ET_VALUE_TENSOR_LIST: return "a tensor list";
    case ET_VALUE_OPTIONAL_TENSOR_LIST: return "an optional tensor list";
    default: return "an unknown value";
  }
}

struct IntList {
  const int64_t* items = nullptr;
  size_t count = 0;
};

// Reads the arguments of one kernel call; every failure names the operator,
// the argument and what was found.
class ArgReader {
 public:
  ArgReader(const char* op, et_value* const* args, size_t nargs) : op_(op), args_(args), nargs_(nargs) {}
  const char* op() const { return op_; }
  size_t size() const { return nargs_; }

  et_error* count(size_t expected) const {
    if (nargs_ == expected && args_ != nullptr) {
      for (size_t i = 0; i < nargs_; ++i)
        if (args_[i] == nullptr) return invalid(op_, "argument " + str(int64_t(i)) + " is missing (null)");
      return nullptr;
    }
    return invalid(op_, "expected " + str(int64_t(expected)) + " arguments, got " + str(int64_t(nargs_)));
  }
  bool is_null(size_t i) const { return args_[i]->tag == ET_VALUE_NULL; }

  et_error* tensor(size_t i, const char* name, et_tensor** out) const {
    const et_value* v = args_[i];
    if (v->tag != ET_VALUE_TENSOR || v->tensor == nullptr) return wrong(i, name, "a tensor");
    *out = v->tensor;
    return nullptr;
  }
  et_error* opt_tensor(size_t i, const char* name, et_tensor** out) const {
    if (is_null(i)) { *out = nullptr; return nullptr; }
    return tensor(i, name, out);
  }
  et_error* integer(size_t i, const char* name, int64_t* out) const {
    const et_value* v = args_[i];
    if (v->tag != ET_VALUE_INT && v->tag != ET_VALUE_BOOL) return wrong(i, name, "an int");
    *out = v->as_int;
    return nullptr;
  }
  et_error* opt_integer(size_t i, const char* name, bool* present, int64_t* out) const {
    *present = !is_null(i);
    return *present ? integer(i, name, out) : nullptr;
  }
  et_error* boolean(size_t i, const char* name, bool* out) const {
    const et_value* v = args_[i];
    if (v->tag != ET_VALUE_BOOL && v->tag != ET_VALUE_INT) return wrong(i, name, "a bool");
    *out = v->as_int != 0;
    return nullptr;
  }
  et_error* opt_boolean(size_t i, const char* name, bool* present, bool* out) const {
    *present = !is_null(i);
    return *present ? boolean(i, name, out) : nullptr;
  }
  et_error* scalar(size_t i, const char* name, Scalar* out) const {
    const et_value* v = args_[i];
    if (v->tag == ET_VALUE_INT) *out = Scalar::of_int(v->as_int);
    else if (v->tag == ET_VALUE_DOUBLE) *out = Scalar::of_double(v->as_double);
    else if (v->tag == ET_VALUE_BOOL) *out = Scalar::of_bool(v->as_int != 0);
    else return wrong(i, name, "a scalar (int, double or bool)");
    return nullptr;
  }
  et_error* opt_scalar(size_t i, const char* name, bool* present, Scalar* out) const {
    *present = !is_null(i);
    return *present ? scalar(i, name, out) : nullptr;
  }
  et_error* int_list(size_t i, const char* name, IntList* out) const {
    const et_value* v = args_[i];
    if (v->tag == ET_VALUE_INT) {  // a single int where int[1] is expected
      out->items = &v->as_int;
      out->count = 1;
      return nullptr;
    }
    if (v->tag != ET_VALUE_INT_LIST || (v->items == nullptr && v->count > 0)) return wrong(i, name, "an int list");
    out->items = static_cast<const int64_t*>(v->items);
    out->count = v->count;
    return nullptr;
  }
  et_error* opt_int_list(size_t i, const char* name, bool* present, IntList* out) const {
    *present = !is_null(i);
    return *present ? int_list(i, name, out) : nullptr;
  }
  et_error* opt_string(size_t i, const char* name, bool* present, std::string* out) const {
    const et_value* v = args_[i];
    *present = v->tag != ET_VALUE_NULL;
    if (!*present) return nullptr;
    if (v->tag != ET_VALUE_STRING || (v->items == nullptr && v->count > 0)) return wrong(i, name, "a string");
    out->assign(static_cast<const char*>(v->items), v->count);
    return nullptr;
  }
  // Tensor[] (TENSOR_LIST) or Tensor?[] (OPTIONAL_TENSOR_LIST, entries may be NULL).
  et_error* tensor_list(size_t i, const char* name, bool allow_optional, et_tensor* const** items, size_t* n) const {
    const et_value* v = args_[i];
    bool ok = v->tag == ET_VALUE_TENSOR_LIST || (allow_optional && v->tag == ET_VALUE_OPTIONAL_TENSOR_LIST);
    if (!ok || (v->items == nullptr && v->count > 0))
      return wrong(i, name, allow_optional ? "an optional tensor list" : "a tensor list");
    *items = static_cast<et_tensor* const*>(v->items);
    *n = v->count;
    if (v->tag == ET_VALUE_TENSOR_LIST)
      for (size_t k = 0; k < *n; ++k)
        if ((*items)[k] == nullptr) return invalid(op_, std::string(name) + "[" + str(int64_t(k)) + "] is null");
    return nullptr;
  }

 private:
  et_error* wrong(size_t i, const char* name, const char* expected) const {
    return invalid(op_, "argument " + str(int64_t(i)) + " (" + name + ") must be " + expected + ", got " +
                            tag_name(args_[i]->tag));
  }
  const char* op_;
  et_value* const* args_;
  size_t nargs_;
};

// Dtype checks.
inline et_error* check_storage(const char* op, const et_tensor& t, const char* name) {
  if (is_storage_supported(t.dtype)) return nullptr;
  return unsupported(op, std::string(name) + " dtype " + dtype_name(t.dtype) +
                             " is not supported (supported: float32, float64, int8-int64, uint8, bool)");
}
inline et_error* check_float(const char* op, const et_tensor& t, const char* name) {
  if (t.dtype == ET_DTYPE_FLOAT32 || t.dtype == ET_DTYPE_FLOAT64) return nullptr;
  return unsupported(op, std::string(name) + " dtype " + dtype_name(t.dtype) + " is not supported (float32, float64)");
}
inline et_error* check_data(const char* op, const et_tensor& t, const char* name) {
  size_t n = etrt::plugin::numel(t);
  if (n > 0 && t.data == nullptr) return invalid(op, std::string(name) + " has no data");
  if (t.rank < 0 || t.rank > ET_MAX_RANK) return invalid(op, std::string(name) + " has rank " + str(t.rank));
  return nullptr;
}

// Normalises a possibly negative dim against `rank` (rank 0 accepts -1 and 0).
inline et_error* normalize_dim(const char* op, int64_t dim, int64_t rank, int64_t* out, const char* what = "dim") {
  int64_t r = rank == 0 ? 1 : rank;
  if (dim < -r || dim >= r)
    return invalid(op, std::string(what) + " " + str(dim) + " is out of range for a tensor of rank " + str(rank) +
                           " (expected [" + str(-r) + ", " + str(r - 1) + "])");
  *out = dim < 0 ? dim + r : dim;
  return nullptr;
}

// Resizes `out` to the result shape, with messages naming the operator.
inline et_error* resize_out(const char* op, et_tensor& out, const int64_t* sizes, int64_t rank) {
  if (rank != out.rank)
    return invalid(op, "output has rank " + str(out.rank) + " " + shape_str(out) + " but the result has shape " +
                           shape_str(sizes, rank));
  bool same = true;
  size_t n = 1;
  for (int64_t i = 0; i < rank; ++i) {
    same &= sizes[i] == out.sizes[i];
    n *= static_cast<size_t>(sizes[i]);
  }
  if (same) return nullptr;
  if (out.dynamism == ET_SHAPE_STATIC)
    return invalid(op, "output shape " + shape_str(out) + " does not match the result shape " +
                           shape_str(sizes, rank) + " and the output has a static shape");
  if (n * element_size(out.dtype) > out.capacity_bytes)
    return invalid(op, "result shape " + shape_str(sizes, rank) + " needs " + str(int64_t(n * element_size(out.dtype))) +
                           " bytes but the output holds only " + str(int64_t(out.capacity_bytes)));
  return host.api()->tensor_resize(&out, sizes, static_cast<size_t>(rank));
}

// Broadcast shape of two shapes (right-aligned).
inline bool broadcast_shapes(const int64_t* a, int64_t ra, const int64_t* b, int64_t rb, int64_t* out, int64_t* rank) {
  int64_t r = std::max(ra, rb);
  for (int64_t i = 0; i < r; ++i) {
    int64_t ai = i - (r - ra), bi = i - (r - rb);
    int64_t as = ai >= 0 ? a[ai] : 1, bs = bi >= 0 ? b[bi] : 1;
    if (as != bs && as != 1 && bs != 1) return false;
    out[i] = as == 1 ? bs : as;
  }
  *rank = r;
  return true;
}

// -------------------------------------------------------------------- views

// A strided window onto tensor memory (strides in elements).
struct View {
  int32_t dtype = ET_DTYPE_FLOAT32;
  int32_t rank = 0;
  int64_t sizes[ET_MAX_RANK]{};
  int64_t strides[ET_MAX_RANK]{};
  char* data = nullptr;

  size_t esize() const { return element_size(dtype); }
  int64_t numel() const {
    int64_t n = 1;
    for (int32_t i = 0; i < rank; ++i) n *= sizes[i];
    return n;
  }
  bool contiguous() const {
    int64_t expected = 1;
    for (int32_t i = rank - 1; i >= 0; --i) {
      if (sizes[i] != 1 && strides[i] != expected) return false;
      expected *= sizes[i];
    }
    return true;
  }
  // Removes dim d, moving to index i.
  View select(int32_t d, int64_t i) const {
    View v = *this;
    v.data += i * strides[d] * static_cast<int64_t>(esize());
    for (int32_t k = d; k + 1 < rank; ++k) v.sizes[k] = sizes[k + 1], v.strides[k] = strides[k + 1];
    --v.rank;
    return v;
  }
  View narrow(int32_t d, int64_t start, int64_t length, int64_t step = 1) const {
    View v = *this;
    v.data += start * strides[d] * static_cast<int64_t>(esize());
    v.sizes[d] = length;
    v.strides[d] = strides[d] * step;
    return v;
  }
};

inline View view_of(const et_tensor& t) {
  View v;
  v.dtype = t.dtype;
  v.rank = t.rank;
  for (int32_t i = 0; i < t.rank; ++i) v.sizes[i] = t.sizes[i], v.strides[i] = t.strides[i];
  v.data = static_cast<char*>(t.data);
  return v;
}
inline View contiguous_view(int32_t dtype, int32_t rank, const int64_t* sizes, void* data) {
  View v;
  v.dtype = dtype;
  v.rank = rank;
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    v.sizes[i] = sizes[i];
    v.strides[i] = s;
    s *= sizes[i];
  }
  v.data = static_cast<char*>(data);
  return v;
}
inline bool default_dim_order(const et_tensor& t) {
  if (t.dim_order == nullptr) return true;
  for (int32_t i = 0; i < t.rank; ++i)
    if (t.dim_order[i] != i) return false;
  return true;
}
inline std::string dim_order_str(const et_tensor& t) {
  std::string s = "(";
  for (int32_t i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::to_string(t.dim_order ? t.dim_order[i] : i);
  return s + ")";
}

// Temporary memory from the host, released on scope exit.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { host.api()->free(ptr_); }
  void* get(size_t bytes) {
    host.api()->free(ptr_);
    ptr_ = host.api()->alloc(bytes == 0 ? 1 : bytes, 64);
    return ptr_;
  }

 private:
  void* ptr_ = nullptr;
};

// ------------------------------------------------------------ strided loops

constexpr int kMaxOperands = 4;

// The iteration space of an elementwise operation: operand 0 is the output,
// the others are inputs broadcast to its shape (stride 0 on broadcast dims).
// Strides are in bytes. Dims of size 1 are dropped, dims are ordered by the
// output's strides, and adjacent dims that are contiguous for every operand
// are merged, so a contiguous case becomes one flat run.
struct Loop {
  int rank = 0;
  int nops = 0;
  int64_t numel = 0;
  int64_t sizes[ET_MAX_RANK]{};
  int64_t strides[kMaxOperands][ET_MAX_RANK]{};
  char* data[kMaxOperands]{};
};

// `shape` is the output's logical shape; views[k] are right-aligned to it.
inline Loop make_loop(int rank, const int64_t* shape, std::initializer_list<const View*> views) {
  Loop L;
  L.nops = static_cast<int>(views.size());
  int64_t sizes[ET_MAX_RANK];
  int64_t strides[kMaxOperands][ET_MAX_RANK];
  L.numel = 1;
  for (int d = 0; d < rank; ++d) L.numel *= shape[d];
  int k = 0;
  for (const View* v : views) {
    L.data[k] = v->data;
    int64_t es = static_cast<int64_t>(v->esize());
    for (int d = 0; d < rank; ++d) {
      int vd = d - (rank - v->rank);
      strides[k][d] = (vd >= 0 && v->sizes[vd] != 1) ? v->strides[vd] * es : 0;
    }
    ++k;
  }
  // Drop size-1 dims.
  int r = 0;
  int order[ET_MAX_RANK];
  for (int d = 0; d < rank; ++d)
    if (shape[d] != 1) order[r++] = d;
  // Order by the output's |stride|, largest first (stable), so the output is
  // walked in memory order whatever its dim order.
  for (int i = 1; i < r; ++i) {
    int cur = order[i], j = i;
    int64_t key = std::abs(strides[0][cur]);
    while (j > 0 && std::abs(strides[0][order[j - 1]]) < key) {
      order[j] = order[j - 1];
      --j;
    }
    order[j] = cur;
  }
  for (int i = 0; i < r; ++i) {
    sizes[i] = shape[order[i]];
    for (int op = 0; op < L.nops; ++op) L.strides[op][i] = strides[op][order[i]];
  }
  // Merge dims i (outer) and i+1 (inner) where every operand allows it.
  int out = 0;
  for (int i = 0; i < r; ++i) {
    if (out > 0) {
      bool merge = true;
      for (int op = 0; op < L.nops && merge; ++op)
        merge = L.strides[op][out - 1] == L.strides[op][i] * sizes[i];
      if (merge) {
        L.sizes[out - 1] *= sizes[i];
        for (int op = 0; op < L.nops; ++op) L.strides[op][out - 1] = L.strides[op][i];
        continue;
      }
    }
    L.sizes[out] = sizes[i];
    for (int op = 0; op < L.nops; ++op) L.strides[op][out] = L.strides[op][i];
    ++out;
  }
  if (out == 0) {  // rank 0 or all ones: one element
    L.sizes[0] = 1;
    for (int op = 0; op < L.nops; ++op) L.strides[op][0] = 0;
    out = 1;
  }
  L.rank = out;
  return L;
}

// Calls run(ptrs, inner_strides, n) for every run of the innermost dim
// inside the flat range [begin, end). Not inlined on purpose: inlined into a
// kernel's body (the single-task path of run_loop), GCC left the inner loops
// scalar; as its own function, as on the pool path, they vectorise
// (mobilenet_v2_block, whose ReLU6s mostly take this path: 80 -> 44 us a run).
template <typename Run>
[[gnu::noinline]] void loop_range(const Loop& L, int64_t begin, int64_t end, Run& run) {
  const int r = L.rank;
  int64_t idx[ET_MAX_RANK];
  int64_t rest = begin;
  for (int d = r - 1; d >= 0; --d) {
    idx[d] = rest % L.sizes[d];
    rest /= L.sizes[d];
  }
  char* p[kMaxOperands];
  int64_t inner[kMaxOperands];
  auto place = [&]() {
    for (int op = 0; op < L.nops; ++op) {
      char* q = L.data[op];
      for (int d = 0; d < r; ++d) q += idx[d] * L.strides[op][d];
      p[op] = q;
    }
  };
  for (int op = 0; op < L.nops; ++op) inner[op] = L.strides[op][r - 1];
  place();
  int64_t i = begin;
  while (i < end) {
    int64_t n = std::min(end - i, L.sizes[r - 1] - idx[r - 1]);
    run(p, inner, n);
    i += n;
    if (i >= end) break;
    idx[r - 1] += n;
    if (idx[r - 1] < L.sizes[r - 1]) {
      for (int op = 0; op < L.nops; ++op) p[op] += n * inner[op];
      continue;
    }
    for (int d = r - 1; d >= 0; --d) {
      if (idx[d] < L.sizes[d]) break;
      idx[d] = 0;
      if (d > 0) ++idx[d - 1];
    }
    place();
  }
}

template <typename Run>
inline void run_loop(const Loop& L, Run&& run, size_t grain = kGrain) {
  if (L.numel <= 0) return;
  if (static_cast<size_t>(L.numel) <= grain) {
    loop_range(L, 0, L.numel, run);
    return;
  }
  host.parallel_for(static_cast<size_t>(L.numel), grain, [&](size_t b, size_t e) {
    loop_range(L, static_cast<int64_t>(b), static_cast<int64_t>(e), run);
  });
}

// f(begin, end) over [0, range): inline when it is one grain, else on the pool.
template <typename F>
inline void parallel(size_t range, size_t grain, const F& f) {
  if (range == 0) return;
  if (range <= grain) {
    f(size_t(0), range);
    return;
  }
  host.parallel_for(range, grain, [&f](size_t b, size_t e) { f(b, e); });
}

// ------------------------------------------------------ dtype dispatching

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) for the C++ type stored for `dtype` (storage dtypes only).
template <typename F>
inline decltype(auto) dispatch_storage(int32_t dtype, F&& f) {
  switch (dtype) {
    case ET_DTYPE_UINT8: return f(Tag<uint8_t>{});
    case ET_DTYPE_INT8: return f(Tag<int8_t>{});
    case ET_DTYPE_INT16: return f(Tag<int16_t>{});
    case ET_DTYPE_INT32: return f(Tag<int32_t>{});
    case ET_DTYPE_INT64: return f(Tag<int64_t>{});
    case ET_DTYPE_FLOAT64: return f(Tag<double>{});
    case ET_DTYPE_BOOL: return f(Tag<bool>{});
    default: return f(Tag<float>{});
  }
}

template <typename T>
constexpr int32_t dtype_of() {
  if constexpr (std::is_same_v<T, float>) return ET_DTYPE_FLOAT32;
  else if constexpr (std::is_same_v<T, double>) return ET_DTYPE_FLOAT64;
  else if constexpr (std::is_same_v<T, int64_t>) return ET_DTYPE_INT64;
  else if constexpr (std::is_same_v<T, int32_t>) return ET_DTYPE_INT32;
  else if constexpr (std::is_same_v<T, int16_t>) return ET_DTYPE_INT16;
  else if constexpr (std::is_same_v<T, int8_t>) return ET_DTYPE_INT8;
  else if constexpr (std::is_same_v<T, uint8_t>) return ET_DTYPE_UINT8;
  else return ET_DTYPE_BOOL;
}

// The dtype computations run in: float32, float64, int64 (all integral
// types) or bool.
inline int32_t compute_dtype(int32_t dtype) {
  if (dtype == ET_DTYPE_FLOAT64) return ET_DTYPE_FLOAT64;
  if (is_float(dtype)) return ET_DTYPE_FLOAT32;
  if (dtype == ET_DTYPE_BOOL) return ET_DTYPE_BOOL;
  return ET_DTYPE_INT64;
}

template <typename To, typename From>
inline To convert(From x) {
  if constexpr (std::is_same_v<To, bool>) return x != From(0);
  else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // Out-of-range float -> int is undefined in C++; saturate NaN to 0 like most hardware paths would not.
    if (!(x == x)) return To(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    double v = static_cast<double>(x);
    if (v <= lo) return std::numeric_limits<To>::min();
    if (v >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else return static_cast<To>(x);
}

// ------------------------------------------------- copies (tensor_copy.cpp)

// out[i] = convert(in[i]) over out's shape; `in` has out's rank and sizes,
// or size 1 / stride 0 where it is broadcast. Any strides, any dtypes of the
// storage set. Parallel, memcpy for contiguous runs, blocked for transposes.
void copy_view(const View& out, const View& in);
// Every element of `out` = value converted to out's dtype.
void fill_view(const View& out, const Scalar& value);
// A contiguous view of `in` in `dtype`: `in` itself when it already is one,
// else a converted copy in `scratch`. Returns false when memory ran out.
bool contiguous_as(const View& in, int32_t dtype, Scratch& scratch, View* result);

// Output helper: computations write `view()` (contiguous, in compute dtype
// when `dtype` differs from the tensor's, else the tensor itself when it is
// row-major contiguous); finish() converts/copies into the tensor.
class OutputBuffer {
 public:
  // need_contiguous: the computation needs a row-major buffer; otherwise
  // the tensor is written through its strides when its dtype matches.
  bool init(const et_tensor& out, int32_t dtype, bool need_contiguous = true) {
    target_ = view_of(out);
    if (out.dtype == dtype && (!need_contiguous || target_.contiguous())) {
      view_ = target_;
      direct_ = true;
      return true;
    }
    direct_ = false;
    void* p = scratch_.get(static_cast<size_t>(target_.numel()) * element_size(dtype));
    if (p == nullptr) return false;
    view_ = contiguous_view(dtype, target_.rank, target_.sizes, p);
    return true;
  }
  const View& view() const { return view_; }
  void finish() {
    if (!direct_) copy_view(target_, view_);
  }

 private:
  View target_, view_;
  bool direct_ = true;
  Scratch scratch_;
};

// `in` itself when it has `dtype`, else a contiguous converted copy.
inline bool as_dtype(const View& in, int32_t dtype, Scratch& scratch, View* result) {
  if (in.dtype == dtype) {
    *result = in;
    return true;
  }
  return contiguous_as(in, dtype, scratch, result);
}

// A rank-0 view of a scalar converted to `dtype`, stored in `storage`.
inline View scalar_view(const Scalar& s, int32_t dtype, uint64_t* storage) {
  View v;
  v.dtype = dtype;
  v.rank = 0;
  v.data = reinterpret_cast<char*>(storage);
  *storage = 0;
  dispatch_storage(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T x;
    if constexpr (std::is_same_v<T, bool>) x = s.to_bool();
    else if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(s.to_double());
    else x = s.kind == Scalar::kDouble ? convert<T>(s.d) : static_cast<T>(s.i);
    std::memcpy(storage, &x, sizeof(T));
  });
  return v;
}

inline et_error* out_of_memory(const char* op) { return fail(ET_ERR_OUT_OF_MEMORY, op, "out of scratch memory"); }

// -------------------------------------------------------------- math helpers

// exp(x) for float, written so GCC vectorises it: range reduction by ln 2,
// degree-7 polynomial, exponent by bit manipulation. Relative error ~2 ulp;
// 0 below -87.3 (and for -inf), +inf above 88.3, NaN propagates.
inline float exp_fast(float x) {
  const float xc = x != x ? 0.0f : std::min(std::max(x, -87.3f), 88.3f);  // NaN is returned below
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (xc - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float result = p * std::bit_cast<float>(bits);
  result = x > 88.3f ? std::numeric_limits<float>::infinity() : result;
  result = x < -87.3f ? 0.0f : result;
  return x != x ? x : result;
}
inline double exp_fast(double x) { return std::exp(x); }

}  // namespace etrt::kernels::pw
