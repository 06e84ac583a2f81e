#!/usr/bin/env bash
# The concurrency stress under sanitizers (issue: hold up under load): builds etrt
# twice -- AddressSanitizer + UndefinedBehaviorSanitizer with clang, then
# ThreadSanitizer with gcc -- and runs in each the thread pool's own tests
# (worker_pool_test, threadpool_test, threadpool_lease_test) and
# tests/stress/concurrent_methods_test (8 threads loading plugins lazily,
# ETRT_STRESS_ITERATIONS runs each, default 1000).
# Slow (two full builds, ~4 min of TSan stress): run by hand, not in CI.
#
#   bash scripts/stress_sanitizers.sh [asan|tsan]...   (default: both)
#
# Why gcc for TSan: clang 14's TSan runtime here is shipped only as a static
# archive, and libetrt and the plugins are shared objects linked with -z defs, so
# each would need the runtime's symbols at link time; gcc's libtsan is a shared
# library every object links against.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ETRT_STRESS_ITERATIONS=${ETRT_STRESS_ITERATIONS:-1000}
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(asan tsan)

for kind in "${kinds[@]}"; do
  case "$kind" in
    asan)
      cc=${ASAN_CC:-clang} cxx=${ASAN_CXX:-clang++}
      flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -shared-libsan"
      runtime=$("$cxx" -print-file-name=libclang_rt.asan-x86_64.so)
      link="$flags -Wl,-rpath,$(dirname "$runtime")" ;;
    tsan)
      cc=${TSAN_CC:-gcc} cxx=${TSAN_CXX:-g++}
      flags="-fsanitize=thread"
      link="$flags" ;;
    *) echo "unknown sanitizer '$kind' (asan or tsan)" >&2; exit 2 ;;
  esac
  build="$ROOT/build-$kind"
  echo "==> building with $kind ($cxx) in $build"
  CC=$cc CXX=$cxx cmake -S "$ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="$flags -fno-omit-frame-pointer" \
    -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" -DCMAKE_MODULE_LINKER_FLAGS="$link" >/dev/null
  cmake --build "$build" -j "$(nproc)"  # everything: threadpool_test loads every test plugin
  export ASAN_OPTIONS=detect_leaks=1
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$ROOT/tests/stress/tsan.supp"
  for pool_test in worker_pool_test threadpool_test threadpool_lease_test; do
    echo "==> $pool_test under $kind"
    ETRT_PLUGIN_PATH= "$build/bin/$pool_test"
  done
  echo "==> 8 threads x $ETRT_STRESS_ITERATIONS runs under $kind"
  ETRT_PLUGIN_PATH= "$build/bin/concurrent_methods_test"
done
