#!/usr/bin/env bash
# The concurrency stress under sanitizers (issue: hold up under load): builds etrt
# with clang twice -- AddressSanitizer + UndefinedBehaviorSanitizer, then
# ThreadSanitizer -- and runs tests/stress/concurrent_methods_test (8 threads
# loading plugins lazily, ETRT_STRESS_ITERATIONS runs each, default 1000) in each.
# Slow (two full builds): run by hand, not in CI.
#
#   bash scripts/stress_sanitizers.sh [asan|tsan]...   (default: both)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CC=${CC:-clang} CXX=${CXX:-clang++}
export ETRT_STRESS_ITERATIONS=${ETRT_STRESS_ITERATIONS:-1000}
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(asan tsan)

for kind in "${kinds[@]}"; do
  case "$kind" in
    asan) flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined" ;;
    tsan) flags="-fsanitize=thread" ;;
    *) echo "unknown sanitizer '$kind' (asan or tsan)" >&2; exit 2 ;;
  esac
  # The runtime is shared: libetrt and the plugins are shared objects linked with -z defs.
  runtime=$("$CXX" -print-file-name=libclang_rt.${kind}-x86_64.so)
  link="$flags -shared-libsan -Wl,-rpath,$(dirname "$runtime")"
  build="$ROOT/build-$kind"
  echo "==> building with $kind in $build"
  cmake -S "$ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS="$flags -shared-libsan -fno-omit-frame-pointer" \
    -DCMAKE_CXX_FLAGS="$flags -shared-libsan -fno-omit-frame-pointer" \
    -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" -DCMAKE_MODULE_LINKER_FLAGS="$link" >/dev/null
  cmake --build "$build" -j "$(nproc)" --target concurrent_methods_test etrt_plugin_kernels_optimized etrt_plugin_xnnpack
  echo "==> 8 threads x $ETRT_STRESS_ITERATIONS runs under $kind"
  ASAN_OPTIONS=detect_leaks=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ETRT_PLUGIN_PATH= "$build/bin/concurrent_methods_test"
done
