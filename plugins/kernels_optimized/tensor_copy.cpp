// Strided copies with dtype conversion, fills, and contiguous staging: the
// engine behind the shape/copy kernels and the dtype handling of the others.

#include "pointwise_common.h"

namespace etrt::kernels::pw {
namespace {

// Same-dtype copy of one run, by element width.
template <typename T>
void copy_run(char* const* p, const int64_t* s, int64_t n) {
  constexpr int64_t es = sizeof(T);
  if (s[0] == es && s[1] == es) {
    // memmove: a program's memory plan may place an output over its input
    // (an in-place copy, or a malformed plan); memcpy would be undefined then.
    std::memmove(p[0], p[1], static_cast<size_t>(n) * es);
    return;
  }
  if (s[0] == es && s[1] == 0) {
    T v;
    std::memcpy(&v, p[1], es);
    T* z = reinterpret_cast<T*>(p[0]);
    for (int64_t k = 0; k < n; ++k) z[k] = v;
    return;
  }
  if (s[0] == es) {
    T* z = reinterpret_cast<T*>(p[0]);
    const char* x = p[1];
    const int64_t sx = s[1];
    for (int64_t k = 0; k < n; ++k) std::memcpy(&z[k], x + k * sx, es);
    return;
  }
  for (int64_t k = 0; k < n; ++k) std::memcpy(p[0] + k * s[0], p[1] + k * s[1], es);
}

template <typename To, typename From>
void convert_run(char* const* p, const int64_t* s, int64_t n) {
  if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
    To* z = reinterpret_cast<To*>(p[0]);
    const Stored<From>* x = reinterpret_cast<const Stored<From>*>(p[1]);
    for (int64_t k = 0; k < n; ++k) z[k] = convert<To>(load<From>(x[k]));
    return;
  }
  for (int64_t k = 0; k < n; ++k) {
    Stored<From> x;
    std::memcpy(&x, p[1] + k * s[1], sizeof(From));
    To z = convert<To>(load<From>(x));
    std::memcpy(p[0] + k * s[0], &z, sizeof(To));
  }
}

// Blocked transpose: the loop's last two dims are [A, B] with the output
// contiguous along B and the input contiguous along A.
template <typename T>
void transpose_copy(const Loop& L) {
  constexpr int64_t kTile = 32;
  const int r = L.rank;
  const int64_t A = L.sizes[r - 2], B = L.sizes[r - 1];
  const int64_t oa = L.strides[0][r - 2] / static_cast<int64_t>(sizeof(T));
  const int64_t ib = L.strides[1][r - 1] / static_cast<int64_t>(sizeof(T));
  int64_t outer = 1;
  for (int d = 0; d < r - 2; ++d) outer *= L.sizes[d];
  const int64_t a_tiles = (A + kTile - 1) / kTile;
  const size_t units = static_cast<size_t>(outer * a_tiles);
  auto body = [&](size_t begin, size_t end) {
    for (size_t u = begin; u < end; ++u) {
      int64_t o = static_cast<int64_t>(u) / a_tiles, at = static_cast<int64_t>(u) % a_tiles;
      char* po = L.data[0];
      const char* pi = L.data[1];
      int64_t rest = o;
      for (int d = r - 3; d >= 0; --d) {
        int64_t i = rest % L.sizes[d];
        rest /= L.sizes[d];
        po += i * L.strides[0][d];
        pi += i * L.strides[1][d];
      }
      T* z = reinterpret_cast<T*>(po);
      const T* x = reinterpret_cast<const T*>(pi);
      const int64_t a0 = at * kTile, a1 = std::min(A, a0 + kTile);
      for (int64_t b0 = 0; b0 < B; b0 += kTile) {
        const int64_t b1 = std::min(B, b0 + kTile);
        for (int64_t a = a0; a < a1; ++a) {
          T* zr = z + a * oa;
          const T* xr = x + a;
          for (int64_t b = b0; b < b1; ++b) zr[b] = xr[b * ib];
        }
      }
    }
  };
  // One unit copies kTile * B elements.
  size_t grain = std::max<size_t>(1, kGrain / static_cast<size_t>(std::max<int64_t>(1, kTile * B)));
  parallel(units, grain, body);
}

template <typename T>
bool is_transpose(const Loop& L) {
  const int r = L.rank;
  if (r < 2) return false;
  const int64_t es = sizeof(T);
  return L.strides[0][r - 1] == es && L.strides[1][r - 2] == es && L.strides[1][r - 1] != es &&
         L.strides[1][r - 1] != 0 && L.strides[0][r - 2] != 0 && L.sizes[r - 1] >= 8 && L.sizes[r - 2] >= 8;
}

// Rows of kBytes contiguous bytes at a stride, two loop levels at a time: a multi-head split or merge
// ([2, 8, 4, 8] -> [2, 4, 8, 8]) copies 64 rows of 32 bytes, where a memmove call and the general loop's
// carry per row cost ~80 instructions for an 8-instruction copy. A fixed-size move is inlined (loads, then
// stores: safe for overlapping rows, like memmove).
template <size_t kBytes>
void copy_short_rows(const Loop& L) {
  const int r = L.rank;
  const int64_t rows = L.sizes[r - 2], out_step = L.strides[0][r - 2], in_step = L.strides[1][r - 2];
  const int64_t blocks = L.numel / (rows * L.sizes[r - 1]);
  for (int64_t b = 0; b < blocks; ++b) {
    char* z = L.data[0];
    const char* x = L.data[1];
    int64_t rest = b;
    for (int d = r - 3; d >= 0; --d) {
      const int64_t i = rest % L.sizes[d];
      rest /= L.sizes[d];
      z += i * L.strides[0][d];
      x += i * L.strides[1][d];
    }
    for (int64_t i = 0; i < rows; ++i) __builtin_memmove(z + i * out_step, x + i * in_step, kBytes);
  }
}

// copy_short_rows's case: serial work (the pool is not worth it), rank >= 2, both innermost strides one
// element, rows of 16, 32 or 64 bytes.
template <typename T>
size_t short_row_bytes(const Loop& L) {
  const int r = L.rank;
  if (r < 2 || L.numel > static_cast<int64_t>(kGrain) || L.strides[0][r - 1] != sizeof(T) ||
      L.strides[1][r - 1] != sizeof(T))
    return 0;
  const size_t bytes = static_cast<size_t>(L.sizes[r - 1]) * sizeof(T);
  return bytes == 16 || bytes == 32 || bytes == 64 ? bytes : 0;
}

template <typename T>
void same_dtype_copy(const Loop& L) {
  if (is_transpose<T>(L)) {
    transpose_copy<T>(L);
    return;
  }
  switch (short_row_bytes<T>(L)) {
    case 16: copy_short_rows<16>(L); return;
    case 32: copy_short_rows<32>(L); return;
    case 64: copy_short_rows<64>(L); return;
    default: break;
  }
  run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { copy_run<T>(p, s, n); });
}

}  // namespace

void copy_loop(const Loop& L, size_t element_bytes) {
  switch (element_bytes) {
    case 1: same_dtype_copy<uint8_t>(L); return;
    case 2: same_dtype_copy<uint16_t>(L); return;
    case 4: same_dtype_copy<uint32_t>(L); return;
    default: same_dtype_copy<uint64_t>(L); return;
  }
}

void copy_view(const View& out, const View& in) {
  Loop L = make_loop(out.rank, out.sizes, {&out, &in});
  if (L.numel <= 0) return;
  if (out.dtype == ET_DTYPE_BOOL && in.dtype == ET_DTYPE_BOOL) {  // normalised, not copied byte for byte
    run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { convert_run<bool, bool>(p, s, n); });
    return;
  }
  if (out.dtype == in.dtype) {
    copy_loop(L, out.esize());
    return;
  }
  dispatch_any(out.dtype, [&](auto to) {
    using To = typename decltype(to)::type;
    dispatch_any(in.dtype, [&](auto from) {
      using From = typename decltype(from)::type;
      run_loop(L, [](char* const* p, const int64_t* s, int64_t n) { convert_run<To, From>(p, s, n); });
    });
  });
}

void fill_view(const View& out, const Scalar& value) {
  Loop L = make_loop(out.rank, out.sizes, {&out});
  dispatch_any(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if constexpr (is_half_v<T>) v = convert<T>(static_cast<float>(value.to_double()));
    else if constexpr (std::is_same_v<T, bool>) v = value.to_bool();
    else if constexpr (std::is_floating_point_v<T>) v = static_cast<T>(value.to_double());
    else v = value.kind == Scalar::kDouble ? convert<T>(value.d) : static_cast<T>(value.i);
    run_loop(L, [v](char* const* p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(T)) {
        T* z = reinterpret_cast<T*>(p[0]);
        for (int64_t k = 0; k < n; ++k) z[k] = v;
      } else {
        for (int64_t k = 0; k < n; ++k) std::memcpy(p[0] + k * s[0], &v, sizeof(T));
      }
    });
  });
}

bool contiguous_as(const View& in, int32_t dtype, Scratch& scratch, View* result) {
  if (in.dtype == dtype && in.contiguous()) {
    *result = in;
    return true;
  }
  void* p = scratch.get(static_cast<size_t>(in.numel()) * element_size(dtype));
  if (p == nullptr) return false;
  *result = contiguous_view(dtype, in.rank, in.sizes, p);
  copy_view(*result, in);
  return true;
}

// out <- src (a strided view of self of out's logical shape).
et_error* view_copy_into(const char* op, const et_tensor& self, const View& src, et_tensor& out) {
  ETRT_TRY(check_storage(op, self, "self"));
  if (self.dtype != out.dtype)
    return invalid(op, std::string("output dtype ") + dtype_name(out.dtype) + " must match the input dtype " +
                           dtype_name(self.dtype));
  ETRT_TRY(resize_out(op, out, src.sizes, src.rank));
  if (etrt::plugin::numel(out) == 0) return nullptr;
  ETRT_TRY(check_data(op, out, "out"));
  ETRT_TRY(check_data(op, self, "self"));
  copy_view(view_of(out), src);
  return nullptr;
}

const et_tensor* normalized_bools(const et_tensor& t, Scratch& scratch, et_tensor* storage, int64_t* strides) {
  if (t.dtype != ET_DTYPE_BOOL) return &t;
  const size_t n = etrt::plugin::numel(t);
  void* bytes = scratch.get(n);
  if (bytes == nullptr) return nullptr;
  if (n > 0) copy_view(contiguous_view(ET_DTYPE_BOOL, t.rank, t.sizes, bytes), view_of(t));
  *storage = t;
  etrt::plugin::dense_strides(t.sizes, nullptr, t.rank, strides);
  storage->strides = strides;
  storage->dim_order = nullptr;
  storage->data = bytes;
  return storage;
}

}  // namespace etrt::kernels::pw
