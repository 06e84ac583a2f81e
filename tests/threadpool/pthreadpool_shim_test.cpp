// etrt's pthreadpool shim (plugins/xnnpack/pthreadpool_shim.c): every entry point
// Debian's libXNNPACK imports visits each index of its space exactly once, with
// the right tile extents, on the host's parallel_for; NULL or a foreign pool runs
// inline; the denormals flag holds while the tasks run.
#include <gtest/gtest.h>

#include <pthreadpool.h>
#include <xmmintrin.h>

#include <array>
#include <atomic>
#include <cstring>
#include <vector>

#include "threadpool/pthreadpool_handle.h"

namespace {

std::atomic<int> g_parallel_for_calls{0};

// A host whose parallel_for hands out its range in uneven pieces, as a pool would.
void fake_parallel_for(size_t range, size_t grain, et_parallel_body body, void* context) {
  ++g_parallel_for_calls;
  for (size_t begin = 0, step = 1; begin < range; begin += step, step = step % 3 + 1)
    body(context, begin, std::min(range, begin + step));
}
size_t fake_threads() { return 3; }

struct Host {
  et_host_api api;
  pthreadpool handle;
  Host() {
    std::memset(&api, 0, sizeof api);
    api.struct_size = sizeof api;
    api.parallel_for = fake_parallel_for;
    api.num_threads = fake_threads;
    handle.magic = ETRT_PTHREADPOOL_HANDLE_MAGIC;
    handle.host = &api;
  }
};

constexpr size_t kDims = 6;
using Index = std::array<size_t, kDims>;

// Hits over a 6-d space (unused trailing dimensions have range 1).
struct Grid {
  Index range;
  std::vector<std::atomic<int>> hits;
  explicit Grid(Index r) : range(r), hits(r[0] * r[1] * r[2] * r[3] * r[4] * r[5]) {}
  void mark_box(Index start, Index extent) {
    Index i{};
    for (i[0] = start[0]; i[0] < start[0] + extent[0]; ++i[0])
      for (i[1] = start[1]; i[1] < start[1] + extent[1]; ++i[1])
        for (i[2] = start[2]; i[2] < start[2] + extent[2]; ++i[2])
          for (i[3] = start[3]; i[3] < start[3] + extent[3]; ++i[3])
            for (i[4] = start[4]; i[4] < start[4] + extent[4]; ++i[4])
              for (i[5] = start[5]; i[5] < start[5] + extent[5]; ++i[5]) {
                bool inside = true;
                for (size_t d = 0; d < kDims; ++d) inside &= i[d] < range[d];
                ASSERT_TRUE(inside) << "task outside its range";
                size_t flat = 0;
                for (size_t d = 0; d < kDims; ++d) flat = flat * range[d] + i[d];
                hits[flat].fetch_add(1);
              }
  }
  size_t wrong() const {
    size_t bad = 0;
    for (const auto& h : hits) bad += h.load() != 1;
    return bad;
  }
};

Index ones() { return {1, 1, 1, 1, 1, 1}; }

TEST(PthreadpoolShim, ThreadsCountComesFromTheHost) {
  Host host;
  EXPECT_EQ(pthreadpool_get_threads_count(&host.handle), 3u);
  EXPECT_EQ(pthreadpool_get_threads_count(nullptr), 1u);
}

TEST(PthreadpoolShim, EveryEntryPointCoversItsSpaceExactlyOnce) {
  Host host;
  pthreadpool_t pool = &host.handle;
  const Index r{5, 4, 3, 7, 6, 5};
  int before = g_parallel_for_calls.load();
  {
    Grid g({r[0], 1, 1, 1, 1, 1});
    pthreadpool_parallelize_1d(pool, +[](void* c, size_t i) {
      static_cast<Grid*>(c)->mark_box({i, 0, 0, 0, 0, 0}, ones());
    }, &g, r[0], 0);
    EXPECT_EQ(g.wrong(), 0u) << "1d";
  }
  {
    Grid g({r[3], 1, 1, 1, 1, 1});
    pthreadpool_parallelize_1d_tile_1d(pool, +[](void* c, size_t i, size_t ti) {
      static_cast<Grid*>(c)->mark_box({i, 0, 0, 0, 0, 0}, {ti, 1, 1, 1, 1, 1});
    }, &g, r[3], 3, 0);
    EXPECT_EQ(g.wrong(), 0u) << "1d_tile_1d";
  }
  {
    Grid g({r[0], r[1], 1, 1, 1, 1});
    pthreadpool_parallelize_2d(pool, +[](void* c, size_t i, size_t j) {
      static_cast<Grid*>(c)->mark_box({i, j, 0, 0, 0, 0}, ones());
    }, &g, r[0], r[1], 0);
    EXPECT_EQ(g.wrong(), 0u) << "2d";
  }
  {
    Grid g({r[0], r[3], 1, 1, 1, 1});
    pthreadpool_parallelize_2d_tile_1d(pool, +[](void* c, size_t i, size_t j, size_t tj) {
      static_cast<Grid*>(c)->mark_box({i, j, 0, 0, 0, 0}, {1, tj, 1, 1, 1, 1});
    }, &g, r[0], r[3], 2, 0);
    EXPECT_EQ(g.wrong(), 0u) << "2d_tile_1d";
  }
  {
    Grid g({r[3], r[4], 1, 1, 1, 1});
    pthreadpool_parallelize_2d_tile_2d(pool, +[](void* c, size_t i, size_t j, size_t ti, size_t tj) {
      static_cast<Grid*>(c)->mark_box({i, j, 0, 0, 0, 0}, {ti, tj, 1, 1, 1, 1});
    }, &g, r[3], r[4], 3, 4, 0);
    EXPECT_EQ(g.wrong(), 0u) << "2d_tile_2d";
  }
  {
    Grid g({r[0], r[1], r[2], 1, 1, 1});
    pthreadpool_parallelize_3d(pool, +[](void* c, size_t i, size_t j, size_t k) {
      static_cast<Grid*>(c)->mark_box({i, j, k, 0, 0, 0}, ones());
    }, &g, r[0], r[1], r[2], 0);
    EXPECT_EQ(g.wrong(), 0u) << "3d";
  }
  {
    Grid g({r[0], r[3], r[4], 1, 1, 1});
    pthreadpool_parallelize_3d_tile_2d(pool, +[](void* c, size_t i, size_t j, size_t k, size_t tj, size_t tk) {
      static_cast<Grid*>(c)->mark_box({i, j, k, 0, 0, 0}, {1, tj, tk, 1, 1, 1});
    }, &g, r[0], r[3], r[4], 2, 4, 0);
    EXPECT_EQ(g.wrong(), 0u) << "3d_tile_2d";
  }
  {
    Grid g({r[0], r[1], r[2], r[3], 1, 1});
    pthreadpool_parallelize_4d(pool, +[](void* c, size_t i, size_t j, size_t k, size_t l) {
      static_cast<Grid*>(c)->mark_box({i, j, k, l, 0, 0}, ones());
    }, &g, r[0], r[1], r[2], r[3], 0);
    EXPECT_EQ(g.wrong(), 0u) << "4d";
  }
  {
    Grid g({r[0], r[1], r[3], r[4], 1, 1});
    pthreadpool_parallelize_4d_tile_2d(pool, +[](void* c, size_t i, size_t j, size_t k, size_t l, size_t tk, size_t tl) {
      static_cast<Grid*>(c)->mark_box({i, j, k, l, 0, 0}, {1, 1, tk, tl, 1, 1});
    }, &g, r[0], r[1], r[3], r[4], 3, 5, 0);
    EXPECT_EQ(g.wrong(), 0u) << "4d_tile_2d";
  }
  {
    Grid g({r[0], r[1], r[2], r[3], r[4], 1});
    pthreadpool_parallelize_5d(pool, +[](void* c, size_t i, size_t j, size_t k, size_t l, size_t m) {
      static_cast<Grid*>(c)->mark_box({i, j, k, l, m, 0}, ones());
    }, &g, r[0], r[1], r[2], r[3], r[4], 0);
    EXPECT_EQ(g.wrong(), 0u) << "5d";
  }
  {
    Grid g({r[0], r[1], r[2], r[3], r[4], 1});
    pthreadpool_parallelize_5d_tile_2d(pool, +[](void* c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t tl,
                                                size_t tm) {
      static_cast<Grid*>(c)->mark_box({i, j, k, l, m, 0}, {1, 1, 1, tl, tm, 1});
    }, &g, r[0], r[1], r[2], r[3], r[4], 2, 4, 0);
    EXPECT_EQ(g.wrong(), 0u) << "5d_tile_2d";
  }
  {
    Grid g(r);
    pthreadpool_parallelize_6d_tile_2d(pool, +[](void* c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n,
                                                size_t tm, size_t tn) {
      static_cast<Grid*>(c)->mark_box({i, j, k, l, m, n}, {1, 1, 1, 1, tm, tn});
    }, &g, r[0], r[1], r[2], r[3], r[4], r[5], 4, 2, 0);
    EXPECT_EQ(g.wrong(), 0u) << "6d_tile_2d";
  }
  EXPECT_EQ(g_parallel_for_calls.load() - before, 12) << "every call goes through the host's parallel_for";
}

// The _with_uarch forms (Debian's arm64 libXNNPACK calls them): the same spaces, every task given
// the caller's default uarch index (the shim cannot tell core types apart).
struct UarchGrid {
  Grid grid;
  std::atomic<int> other_uarch{0};
  void mark(uint32_t uarch, Index start, Index extent) {
    other_uarch += uarch != 7;
    grid.mark_box(start, extent);
  }
};

TEST(PthreadpoolShim, WithUarchFormsCoverTheirSpaceWithTheDefaultUarch) {
  Host host;
  pthreadpool_t pool = &host.handle;
  const Index r{5, 4, 3, 7, 1, 1};
  {
    UarchGrid g{Grid({r[0], r[1], 1, 1, 1, 1})};
    pthreadpool_parallelize_2d_tile_2d_with_uarch(pool, +[](void* c, uint32_t u, size_t i, size_t j, size_t ti, size_t tj) {
      static_cast<UarchGrid*>(c)->mark(u, {i, j, 0, 0, 0, 0}, {ti, tj, 1, 1, 1, 1});
    }, &g, 7, 9, r[0], r[1], 2, 3, 0);
    EXPECT_EQ(g.grid.wrong(), 0u) << "2d_tile_2d_with_uarch";
    EXPECT_EQ(g.other_uarch.load(), 0);
  }
  {
    UarchGrid g{Grid({r[0], r[1], r[2], 1, 1, 1})};
    pthreadpool_parallelize_3d_tile_2d_with_uarch(pool, +[](void* c, uint32_t u, size_t i, size_t j, size_t k, size_t tj,
                                                           size_t tk) {
      static_cast<UarchGrid*>(c)->mark(u, {i, j, k, 0, 0, 0}, {1, tj, tk, 1, 1, 1});
    }, &g, 7, 9, r[0], r[1], r[2], 3, 2, 0);
    EXPECT_EQ(g.grid.wrong(), 0u) << "3d_tile_2d_with_uarch";
    EXPECT_EQ(g.other_uarch.load(), 0);
  }
  {
    UarchGrid g{Grid({r[0], r[1], r[2], r[3], 1, 1})};
    pthreadpool_parallelize_4d_tile_2d_with_uarch(pool, +[](void* c, uint32_t u, size_t i, size_t j, size_t k, size_t l,
                                                           size_t tk, size_t tl) {
      static_cast<UarchGrid*>(c)->mark(u, {i, j, k, l, 0, 0}, {1, 1, tk, tl, 1, 1});
    }, &g, 7, 9, r[0], r[1], r[2], r[3], 2, 5, 0);
    EXPECT_EQ(g.grid.wrong(), 0u) << "4d_tile_2d_with_uarch";
    EXPECT_EQ(g.other_uarch.load(), 0);
  }
}

TEST(PthreadpoolShim, NullOrForeignPoolRunsInlineAndEmptyRangesRunNothing) {
  Host host;
  pthreadpool foreign{0x1234, &host.api};
  int before = g_parallel_for_calls.load();
  for (pthreadpool_t pool : {static_cast<pthreadpool_t>(nullptr), &foreign}) {
    Grid g({4, 5, 1, 1, 1, 1});
    pthreadpool_parallelize_2d_tile_2d(pool, +[](void* c, size_t i, size_t j, size_t ti, size_t tj) {
      static_cast<Grid*>(c)->mark_box({i, j, 0, 0, 0, 0}, {ti, tj, 1, 1, 1, 1});
    }, &g, 4, 5, 3, 2, 0);
    EXPECT_EQ(g.wrong(), 0u);
  }
  int calls = 0;
  pthreadpool_parallelize_2d(&host.handle, +[](void* c, size_t, size_t) { ++*static_cast<int*>(c); }, &calls, 0, 5, 0);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(g_parallel_for_calls.load(), before) << "no pool, a foreign pool and empty work never reach the host";
}

TEST(PthreadpoolShim, DisableDenormalsFlagHoldsDuringTasksOnly) {
  Host host;
  unsigned before = _mm_getcsr();
  struct Seen {
    std::atomic<int> with_ftz{0}, total{0};
  } seen;
  pthreadpool_parallelize_1d(&host.handle, +[](void* c, size_t) {
    auto* s = static_cast<Seen*>(c);
    s->total++;
    if ((_mm_getcsr() & 0x8040u) == 0x8040u) s->with_ftz++;
  }, &seen, 10, PTHREADPOOL_FLAG_DISABLE_DENORMALS);
  EXPECT_EQ(seen.with_ftz.load(), 10);
  EXPECT_EQ(seen.total.load(), 10);
  EXPECT_EQ(_mm_getcsr(), before);
}

}  // namespace
