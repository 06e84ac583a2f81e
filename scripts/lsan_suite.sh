#!/usr/bin/env bash
# LeakSanitizer over the test suite: builds etrt with clang AddressSanitizer +
# UndefinedBehaviorSanitizer (the flags of scripts/stress_sanitizers.sh asan) and
# runs every ctest whose program is one of ours (the GoogleTest suites, the fuzz
# replays, the example hosts) with leak detection on. A leak fails its test.
# Suppressions (third-party libraries only, each justified): tests/lsan.supp.
#
#   bash scripts/lsan_suite.sh [CTEST_REGEX]
#
# The pytest suites are left out unless LSAN_PYTHON=1: the interpreter is not
# built with ASan, so libetrt loaded by ctypes needs the runtime preloaded
# (LD_PRELOAD, inherited by every tool the tests spawn) and CPython's own
# allocations still alive at exit are reported as leaks by the thousand; with
# LSAN_PYTHON=1 they run preloaded with detect_leaks=0 (ASan errors only).
#
# Environment:
#   LSAN_BUILD_DIR  build directory (default <repo>/build-asan; an existing ASan
#                   tree, e.g. build-fuzz of fuzz/run_fuzzer.sh, works too)
#   LSAN_JOBS       build and ctest parallelism (default 2)
#   LSAN_NO_BUILD   1: run the tests of the tree as it is
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LSAN_BUILD_DIR:-$ROOT/build-asan}
JOBS=${LSAN_JOBS:-2}
REGEX=${1:-.}
export CC=${CC:-clang} CXX=${CXX:-clang++}
RUNTIME=$("$CXX" -print-file-name=libclang_rt.asan-x86_64.so)

if [ "${LSAN_NO_BUILD:-0}" != 1 ]; then
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -shared-libsan -fno-omit-frame-pointer"
    link="$flags -Wl,-rpath,$(dirname "$RUNTIME")"
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" -DCMAKE_MODULE_LINKER_FLAGS="$link" >/dev/null
  fi
  cmake --build "$BUILD" -j "$JOBS"
fi

# Our tests vs the pytest ones, by the program each ctest runs. The rest (the wheel
# scripts and the tests of their wheel: built and tested outside this ASan tree; the
# release-tree checks of binaries) are skipped. ctest drops the command of a test
# whose program is not built: those are listed as not built and fail the run (they
# once went to the skipped list unnoticed, so a partly built tree looked clean).
mapfile -t split < <(ctest --test-dir "$BUILD" --show-only=json-v1 | python3 -c '
import json, os, re, sys
build = os.path.realpath(sys.argv[1])
native, python, other, missing = [], [], [], []
everything = json.load(sys.stdin)["tests"]
tests = [t for t in everything if re.search(sys.argv[2], t["name"])]
fixtures = lambda t, kind: [f for p in t.get("properties", []) if p["name"] == kind
                            for f in (p["value"] if isinstance(p["value"], list) else [p["value"]])]
program = lambda t: (t.get("command") or [""])[0]
ours = lambda t: os.path.realpath(program(t)).startswith(build + os.sep)
is_python = lambda t: os.path.basename(program(t)).startswith("python")
# A test needing a fixture that a skipped test sets up (the wheel) is skipped too.
built = lambda t: bool(t.get("command"))
foreign = {f for t in everything if built(t) and not ours(t) and not is_python(t) for f in fixtures(t, "FIXTURES_SETUP")}
# binaries checks properties of a release tree that an ASan tree lacks by construction
# (RUNPATH naming the sanitizer runtime, asan.module_ctor in the .init_array of every object).
release_only = {"binaries"}
for t in tests:
    if t["name"] in release_only or set(fixtures(t, "FIXTURES_REQUIRED")) & foreign: other.append(t["name"])
    elif not built(t): missing.append(t["name"])
    elif is_python(t): python.append(t["name"])
    elif ours(t): native.append(t["name"])
    else: other.append(t["name"])
as_regex = lambda names: "^(" + "|".join(names) + ")$" if names else "^$"
print(as_regex(native)); print(as_regex(python)); print(" ".join(other)); print(" ".join(missing))' "$BUILD" "$REGEX")
[ -z "${split[2]}" ] || echo "==> skipped (not programs of this tree, or release-tree checks): ${split[2]}" >&2

status=0
if [ -n "${split[3]}" ]; then
  echo "==> NOT BUILT in $BUILD, not run (build their targets, or run without LSAN_NO_BUILD): ${split[3]}" >&2
  status=1
fi
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"
echo "==> native tests with detect_leaks=1" >&2
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$BUILD" -R "${split[0]}" -j "$JOBS" --output-on-failure || status=1
if [ "${LSAN_PYTHON:-0}" = 1 ]; then
  echo "==> pytest suites, ASan runtime preloaded, detect_leaks=0" >&2
  LD_PRELOAD=$RUNTIME ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 \
    ctest --test-dir "$BUILD" -R "${split[1]}" -j "$JOBS" --output-on-failure || status=1
fi
exit "$status"
