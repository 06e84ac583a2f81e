#!/usr/bin/env bash
# Builds pte_fuzzer with clang (libFuzzer + AddressSanitizer + UBSan, the whole
# project instrumented) in its own build directory and fuzzes the program
# loader for a bounded time. Exits non-zero when the fuzzer finds a crash, a
# leak, a timeout or an out-of-memory; the reproducer is left in
# $FUZZ_ARTIFACTS (replay it with
# `LD_PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so) build-fuzz/bin/pte_fuzzer FILE`
# or, in any build, `bin/pte_fuzz_replay FILE`).
#
# CI needs: apt-get install -y clang libclang-rt-14-dev   (Debian 12: clang 14)
#
# Environment:
#   FUZZ_SECONDS    total fuzzing time (default 60)
#   FUZZ_BUILD_DIR  build directory (default <repo>/build-fuzz)
#   FUZZ_CORPUS     working corpus, grows across runs (default $FUZZ_BUILD_DIR/fuzz/corpus)
#   FUZZ_ARTIFACTS  where findings go (default $FUZZ_BUILD_DIR/fuzz/artifacts)
#   FUZZ_JOBS       build parallelism (default 2)
#   FUZZ_CMAKE_ARGS extra arguments for the cmake configure step
#   FUZZ_UB_FATAL   1: the first undefined-behaviour report stops the run and fails it, like a
#                   crash (default 0: UBSan reports are printed, summarised at the end, and
#                   fuzzing goes on; crashes, ASan reports, leaks, timeouts and OOMs always fail)
#   CC, CXX         default clang, clang++
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
SECONDS_TO_RUN=${FUZZ_SECONDS:-60}
CORPUS=${FUZZ_CORPUS:-$BUILD/fuzz/corpus}
ARTIFACTS=${FUZZ_ARTIFACTS:-$BUILD/fuzz/artifacts}
export CC=${CC:-clang} CXX=${CXX:-clang++}

if ! command -v "$CXX" >/dev/null; then
  echo "run_fuzzer.sh: $CXX not found (apt-get install -y clang libclang-rt-14-dev)" >&2
  exit 2
fi

# Everything instrumented for coverage and checked by ASan/UBSan. The sanitizer
# runtime is shared (-shared-libsan): libetrt and the plugins are shared
# objects linked with -z defs, which a static runtime in the executable cannot
# satisfy. The runtime's directory goes into the rpath.
ASAN_RUNTIME=$("$CXX" -print-file-name=libclang_rt.asan-x86_64.so)
RUNTIME_DIR=$(dirname "$ASAN_RUNTIME")
if [ "${FUZZ_UB_FATAL:-0}" = 1 ]; then UB_RECOVER="-fno-sanitize-recover=undefined"; UB_HALT=1; else UB_RECOVER=""; UB_HALT=0; fi
SAN="-fsanitize=address,undefined $UB_RECOVER -shared-libsan -fno-omit-frame-pointer"
LINK="$SAN -Wl,-rpath,$RUNTIME_DIR"

cmake -S "$ROOT" -B "$BUILD" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DETRT_BUILD_FUZZERS=ON \
  -DCMAKE_C_FLAGS="$SAN -fsanitize=fuzzer-no-link" \
  -DCMAKE_CXX_FLAGS="$SAN -fsanitize=fuzzer-no-link" \
  -DCMAKE_EXE_LINKER_FLAGS="$LINK" \
  -DCMAKE_SHARED_LINKER_FLAGS="$LINK" \
  -DCMAKE_MODULE_LINKER_FLAGS="$LINK" ${FUZZ_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD" -j "${FUZZ_JOBS:-2}" --target pte_fuzzer pte_fuzz_seed_corpus etrt_plugin_kernels_optimized

# Seeds: the reference programs and the corrupt programs of the tests, less the
# ones that reproduce bugs already reported (fuzz/known_crashes.txt, and
# planned_offset_8gib.pte: a 3 KB file that makes the runtime allocate 8 GiB,
# beyond -malloc_limit_mb) -- the fuzzer would stop on them at once.
mkdir -p "$CORPUS" "$ARTIFACTS"
SEEDS=$BUILD/fuzz/seeds
rm -rf "$SEEDS" && mkdir -p "$SEEDS"
cp "$BUILD"/fuzz/seed_corpus/*.pte "$SEEDS"/
KNOWN=$(sed -e 's/#.*//' "$ROOT/fuzz/known_crashes.txt" | tr -s ' \t' '\n' | grep -v '^$' || true)
for f in "$ROOT"/tests/program/corrupt/*.pte; do
  name=$(basename "$f")
  if [ "$name" = planned_offset_8gib.pte ] || grep -qx "$name" <<<"$KNOWN"; then continue; fi
  cp "$f" "$SEEDS/corrupt_$name"
done

export ETRT_PLUGIN_PATH= ETRT_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=$UB_HALT}
echo "run_fuzzer.sh: fuzzing for ${SECONDS_TO_RUN}s; corpus $CORPUS, findings in $ARTIFACTS" >&2
status=0
LOG=$BUILD/fuzz/last_run.log
# The shared ASan runtime must be the first library loaded.
LD_PRELOAD="$ASAN_RUNTIME" "$BUILD/bin/pte_fuzzer" "$CORPUS" "$SEEDS" \
  -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$ARTIFACTS/" -print_final_stats=1 2>&1 | tee "$LOG" || status=${PIPESTATUS[0]}
if grep -q "runtime error:" "$LOG"; then
  echo "run_fuzzer.sh: undefined behaviour reported (distinct locations):" >&2
  grep -o "^[^ ]*: runtime error: .*" "$LOG" | sed -E 's/0x[0-9a-f]+/ADDR/g; s/-?[0-9]{6,}/N/g' | sort | uniq -c | sort -rn >&2
fi
if [ "$status" -ne 0 ]; then
  echo "run_fuzzer.sh: the fuzzer found a problem (exit $status); reproducers:" >&2
  ls -l "$ARTIFACTS" >&2 || true
fi
exit "$status"
