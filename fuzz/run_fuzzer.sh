#!/usr/bin/env bash
# Builds the fuzzers with clang (libFuzzer + AddressSanitizer + UBSan, the whole
# project instrumented) in their own build directory and runs each for a bounded
# time: pte (the program loader and executor), pte_struct (the same, with a
# structure-aware mutator: fields of the program and of its XNNPACK blobs, run with
# the XNNPACK plugin), manifest (plugin manifest reader and schema validation),
# xnnpack_blob (the XNNPACK delegate blob parser), npy
# (the command line tool's .npy reader), etdump (the etdump tracer's sessions and
# its ETDump / debug buffer / Chrome trace writers). Exits non-zero when a fuzzer finds a
# crash, a leak, a timeout or an out-of-memory; the reproducer is left in
# $FUZZ_ARTIFACTS/NAME (replay it with
# `LD_PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so) build-fuzz/bin/NAME_fuzzer FILE`
# or, in any build, `bin/NAME_fuzz_replay FILE`), and belongs in fuzz/corpus/NAME
# once fixed (pte: the program-level findings; tests/program/corrupt holds the
# hand-made corrupt programs). pte_struct's findings replay with pte_fuzz_replay.
#
# CI needs: apt-get install -y clang libclang-rt-14-dev   (Debian 12: clang 14)
#
# Environment:
#   FUZZ_TARGETS    which fuzzers run, in order (default "pte pte_struct manifest xnnpack_blob npy etdump")
#   FUZZ_SECONDS    fuzzing time per target (default 60)
#   FUZZ_BUILD_DIR  build directory (default <repo>/build-fuzz)
#   FUZZ_CORPUS     working corpora, NAME/ per target, grow across runs (default $FUZZ_BUILD_DIR/fuzz/corpus)
#   FUZZ_ARTIFACTS  where findings go, NAME/ per target (default $FUZZ_BUILD_DIR/fuzz/artifacts)
#   FUZZ_EXTRA_ARGS extra libFuzzer arguments (e.g. -jobs=2 -workers=2)
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
TARGETS=${FUZZ_TARGETS:-pte pte_struct manifest xnnpack_blob npy etdump}
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
BUILD_TARGETS=(parser_fuzz_seed_corpus)
for name in $TARGETS; do BUILD_TARGETS+=("${name}_fuzzer"); done
# The program fuzzers run the programs they load: they need their seeds, the kernels and (pte_struct) XNNPACK.
if [[ " $TARGETS " == *" pte "* ]]; then BUILD_TARGETS+=(pte_fuzz_seed_corpus etrt_plugin_kernels_optimized); fi
if [[ " $TARGETS " == *" pte_struct "* ]]; then BUILD_TARGETS+=(etrt_plugin_kernels_optimized etrt_plugin_xnnpack); fi
cmake --build "$BUILD" -j "${FUZZ_JOBS:-2}" --target "${BUILD_TARGETS[@]}"

# Seeds of pte: the reference programs and the corrupt programs of the tests, less
# the ones that reproduce bugs already reported (fuzz/known_crashes.txt) -- the
# fuzzer would stop on them at once. (planned_offset_8gib.pte, 8 GiB of planned
# memory, is refused by the harness's ETRT_MAX_PLANNED_MEMORY=256M.) pte_struct starts
# from the small reference programs and hand-made seeds in fuzz/corpus/pte_struct. The parser
# targets start from the real files fuzz/make_seeds.py extracted and the committed
# regression corpus fuzz/corpus/NAME (manifest: also the test plugins' manifests).
seed_dirs() {
  local name=$1
  if [ "$name" = pte ]; then
    local seeds=$BUILD/fuzz/seeds
    rm -rf "$seeds" && mkdir -p "$seeds"
    cp "$BUILD"/fuzz/seed_corpus/*.pte "$seeds"/
    local known
    known=$(sed -e 's/#.*//' "$ROOT/fuzz/known_crashes.txt" | tr -s ' \t' '\n' | grep -v '^$' || true)
    for f in "$ROOT"/tests/program/corrupt/*.pte; do
      local base
      base=$(basename "$f")
      if grep -qx "$base" <<<"$known"; then continue; fi
      cp "$f" "$seeds/corrupt_$base"
    done
    echo "$seeds $ROOT/fuzz/corpus/pte"
  elif [ "$name" = pte_struct ]; then
    echo "$ROOT/fuzz/corpus/pte_struct"
  else
    echo "$BUILD/fuzz/parser_seeds/$name $ROOT/fuzz/corpus/$name"
    if [ "$name" = manifest ] && [ -d "$BUILD/tests/plugins/manifests" ]; then echo "$BUILD/tests/plugins/manifests"; fi
  fi
}

# Per-target libFuzzer options: a crossover of two pte_struct programs may outgrow its largest
# seed, the length libFuzzer would allow by default.
target_args() {
  if [ "$1" = pte_struct ]; then echo "-max_len=32768"; fi
}

export ETRT_PLUGIN_PATH= ETRT_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=$UB_HALT}
status=0
for name in $TARGETS; do
  corpus=$CORPUS/$name
  artifacts=$ARTIFACTS/$name
  mkdir -p "$corpus" "$artifacts"
  # shellcheck disable=SC2046
  set -- $(seed_dirs "$name")
  echo "run_fuzzer.sh: fuzzing $name for ${SECONDS_TO_RUN}s; corpus $corpus, findings in $artifacts" >&2
  log=$BUILD/fuzz/last_run_$name.log
  target_status=0
  # In a process group of its own (setsid), with its output in a file: a sanitizer
  # sometimes leaves a forked llvm-symbolizer behind, deadlocked before its exec
  # and holding the output; killing the group after the run removes it, and no pipe
  # waits for it. The shared ASan runtime must be the first library loaded.
  setsid --wait env LD_PRELOAD="$ASAN_RUNTIME" "$BUILD/bin/${name}_fuzzer" "$corpus" "$@" \
    -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 $(target_args "$name") ${FUZZ_EXTRA_ARGS:-} > "$log" 2>&1 &
  fuzzer_pid=$!
  wait "$fuzzer_pid" || target_status=$?
  kill -KILL -- "-$fuzzer_pid" 2>/dev/null || true
  cat "$log"
  if grep -q "runtime error:" "$log"; then
    echo "run_fuzzer.sh: $name: undefined behaviour reported (distinct locations):" >&2
    grep -o "^[^ ]*: runtime error: .*" "$log" | sed -E 's/0x[0-9a-f]+/ADDR/g; s/-?[0-9]{6,}/N/g' | sort | uniq -c | sort -rn >&2
  fi
  if [ "$target_status" -ne 0 ]; then
    echo "run_fuzzer.sh: $name: the fuzzer found a problem (exit $target_status); reproducers:" >&2
    ls -l "$artifacts" >&2 || true
    status=$target_status
  fi
done
exit "$status"
