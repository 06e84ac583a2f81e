// Strided views of tensor memory and the N-operand loop of the pointwise
// family: dimensions coalesced, walked in the output's memory order, split
// across the host's thread pool.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>

#include "pointwise_checks.h"

namespace etrt::kernels::pw {

// -------------------------------------------------------------------- views

// A strided window onto tensor memory (strides in elements). Only the first `rank` sizes and strides are
// meaningful; the rest stay uninitialised: zeroing 256 bytes on every construction was a measurable part of a
// tiny operator's cost (issue 16).
struct View {
  int32_t dtype = ET_DTYPE_FLOAT32;
  int32_t rank = 0;
  int64_t sizes[ET_MAX_RANK];
  int64_t strides[ET_MAX_RANK];
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
  // This view broadcast to `shape` (rank >= this rank): dims align from the right; a dim of size 1, or
  // missing, repeats with stride 0.
  View broadcast_to(int32_t to_rank, const int64_t* shape) const {
    View v;
    v.dtype = dtype;
    v.rank = to_rank;
    v.data = data;
    for (int32_t i = 0; i < to_rank; ++i) {
      const int32_t own = i - (to_rank - rank);
      v.sizes[i] = shape[i];
      v.strides[i] = own >= 0 && sizes[own] != 1 ? strides[own] : 0;
    }
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
// Temporary memory from the host, released on scope exit.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (ptr_ != nullptr) host.api()->free(ptr_);  // most calls never allocate: no call into the host then
  }
  // Frees what an earlier get returned. Small buffers (a reduction's few results, a broadcast scalar) live in
  // the object itself: an allocation and a free cost ~450 instructions, more than a small operator's work.
  void* get(size_t bytes) {
    if (ptr_ != nullptr) host.api()->free(ptr_);
    ptr_ = nullptr;
    if (bytes <= sizeof(inline_)) return inline_;
    ptr_ = host.api()->alloc(bytes, 64);
    return ptr_;
  }

 private:
  void* ptr_ = nullptr;
  alignas(64) unsigned char inline_[256];
};

// ------------------------------------------------------------ strided loops

constexpr int kMaxOperands = 4;

// The iteration space of an elementwise operation: operand 0 is the output,
// the others are inputs broadcast to its shape (stride 0 on broadcast dims).
// Strides are in bytes. Dims of size 1 are dropped, dims are ordered by the
// output's strides, and adjacent dims that are contiguous for every operand
// are merged, so a contiguous case becomes one flat run.
// Only the first `rank` sizes and strides of the first `nops` operands are set (672 bytes zeroed per call were
// a large part of a tiny operator's cost).
struct Loop {
  int rank = 0;
  int nops = 0;
  int64_t numel = 0;
  int64_t sizes[ET_MAX_RANK];
  int64_t strides[kMaxOperands][ET_MAX_RANK];
  char* data[kMaxOperands];
};

// The common case of small operators: every operand is either contiguous with the output's shape or a single
// element (broadcast). Then the loop is one flat run, found without sorting or merging dims; false otherwise.
inline bool make_flat_loop(int rank, const int64_t* shape, std::initializer_list<const View*> views, Loop& L) {
  int64_t numel = 1;
  for (int d = 0; d < rank; ++d) numel *= shape[d];
  int k = 0;
  if (numel == 1) {  // one element: every operand (broadcast to it) holds one too
    for (const View* v : views) L.strides[k][0] = 0, L.data[k++] = v->data;
    L.nops = k;
    L.numel = L.rank = 1;
    L.sizes[0] = 1;
    return true;
  }
  for (const View* v : views) {
    bool same_shape = v->rank == rank;
    for (int d = 0; d < rank && same_shape; ++d) same_shape = v->sizes[d] == shape[d];
    if (same_shape && v->contiguous()) {
      L.strides[k][0] = static_cast<int64_t>(v->esize());
    } else if (v->numel() == 1) {
      L.strides[k][0] = 0;
    } else {
      return false;
    }
    L.data[k] = v->data;
    ++k;
  }
  L.nops = k;
  L.numel = numel;
  L.rank = 1;
  L.sizes[0] = numel;
  return true;
}

// `shape` is the output's logical shape; views[k] are right-aligned to it.
inline Loop make_loop(int rank, const int64_t* shape, std::initializer_list<const View*> views) {
  Loop L;
  if (make_flat_loop(rank, shape, views, L)) return L;
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
  // row[op]: operand op at the start of the current innermost run's row (idx[r-1] = 0). Moving to the next
  // row adds one stride per carried dim instead of recomputing every operand from all indices: on short rows
  // (a [2, 8, 4, 8] permute copies rows of 8) the full recomputation cost more than the copy.
  char* row[kMaxOperands];
  char* p[kMaxOperands];
  int64_t inner[kMaxOperands];
  const int64_t row_len = L.sizes[r - 1];
  for (int op = 0; op < L.nops; ++op) {
    char* q = L.data[op];
    for (int d = 0; d < r - 1; ++d) q += idx[d] * L.strides[op][d];
    row[op] = q;
    inner[op] = L.strides[op][r - 1];
    p[op] = q + idx[r - 1] * inner[op];
  }
  int64_t i = begin;
  int64_t col = idx[r - 1];
  while (true) {
    const int64_t n = std::min(end - i, row_len - col);
    run(p, inner, n);
    i += n;
    if (i >= end) break;
    // The row is done (a range ends only at `end`): carry into the outer dims.
    col = 0;
    for (int d = r - 2; d >= 0; --d) {
      for (int op = 0; op < L.nops; ++op) row[op] += L.strides[op][d];
      if (++idx[d] < L.sizes[d]) break;
      for (int op = 0; op < L.nops; ++op) row[op] -= L.sizes[d] * L.strides[op][d];
      idx[d] = 0;
    }
    for (int op = 0; op < L.nops; ++op) p[op] = row[op];
  }
}

// One flat run on the calling thread: the whole loop is a single call of `run` (noinline for the reason above).
template <typename Run>
[[gnu::noinline]] void loop_flat(const Loop& L, Run& run) {
  char* p[kMaxOperands];
  int64_t inner[kMaxOperands];
  for (int op = 0; op < L.nops; ++op) p[op] = L.data[op], inner[op] = L.strides[op][0];
  run(p, inner, L.numel);
}

template <typename Run>
inline void run_loop(const Loop& L, Run&& run, size_t grain = kGrain) {
  if (L.numel <= 0) return;
  if (static_cast<size_t>(L.numel) <= grain) {
    if (L.rank == 1) loop_flat(L, run);
    else loop_range(L, 0, L.numel, run);
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


}  // namespace etrt::kernels::pw
