#!/usr/bin/env bash
# Cross-builds etrt's wheel for aarch64 Linux (CPython of this machine's minor version) with
# Debian's crossbuild-essential-arm64 and the arm64 sysroot (scripts/aarch64_sysroot.sh, which
# also unpacks Debian's arm64 Python headers), then checks what it made: every ELF file in the
# wheel is an AArch64 one, the extensions carry the aarch64 suffix, and auditwheel agrees on the
# manylinux aarch64 tag (repaired with --patcher none, as scripts/build_wheel.sh does for x86_64:
# everything beyond the policy is inside the wheel already).
#
#   scripts/build_wheel_aarch64.sh [out-dir] [work-dir]   (defaults dist-aarch64/, build-aarch64-wheel/)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/scripts/wheel_common.sh" build_wheel_aarch64 "$ROOT/dist-aarch64" "$ROOT/build-aarch64-wheel" "$@"

SYSROOT=$(bash "$ROOT/scripts/aarch64_sysroot.sh")
PY_MINOR=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
PY_TAG=${PY_MINOR/./}
if [ ! -f "$SYSROOT/usr/include/python$PY_MINOR/Python.h" ]; then
  echo "build_wheel_aarch64: no arm64 headers of Python $PY_MINOR in $SYSROOT (scripts/deps.sh has Debian's" \
       "libpython3.11-dev; this Python is $PY_MINOR)" >&2
  exit 1
fi

rm -rf "$WORK/raw" "$WORK/repaired"
rm -f "$OUT"/etrt-*aarch64*.whl
step "wheel for linux_aarch64, cpython-$PY_TAG (CMake build directory $WORK/cmake-build; log $WORK/wheel.log)"
# The tag and the extensions' suffix come from these (pybind11 asks the interpreter for the suffix
# unless PYTHON_MODULE_EXTENSION is given), not from this (x86_64) interpreter;
# Debian's pyconfig.h picks the arm64 one from <aarch64-linux-gnu/python3.11/pyconfig.h>.
_PYTHON_HOST_PLATFORM=linux-aarch64 SETUPTOOLS_EXT_SUFFIX=".cpython-$PY_TAG-aarch64-linux-gnu.so" \
pip_wheel "$ROOT" \
  -C cmake.define.CMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -C cmake.define.ETRT_AARCH64_SYSROOT="$SYSROOT" \
  -C cmake.define.Python_INCLUDE_DIR="$SYSROOT/usr/include/python$PY_MINOR" \
  -C cmake.define.CMAKE_CXX_FLAGS="-isystem $SYSROOT/usr/include" \
  -C cmake.define.PYTHON_MODULE_EXTENSION=".cpython-$PY_TAG-aarch64-linux-gnu.so" \
  -C cmake.define.pybind11_DIR="$("$PYTHON" -m pybind11 --cmakedir)"

step "every ELF file in $(basename "$RAW") is AArch64"
"$PYTHON" - "$RAW" "$PY_TAG" <<'PY'
import sys, zipfile
wheel, tag = sys.argv[1], sys.argv[2]
elves, wrong = 0, []
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        head = z.open(name).read(20)
        if head[:4] != b"\x7fELF":
            continue
        elves += 1
        machine = int.from_bytes(head[18:20], "little")
        if machine != 183:  # EM_AARCH64
            wrong.append(f"{name}: e_machine {machine}")
    extensions = [n for n in z.namelist() if n.endswith(f".cpython-{tag}-aarch64-linux-gnu.so")]
print(f"    {elves} ELF files, all AArch64" if not wrong else "\n".join(wrong))
print(f"    extensions: {', '.join(extensions)}")
sys.exit(1 if wrong or elves == 0 or len(extensions) < 2 else 0)
PY

repair_wheel
case "$(basename "$WHEEL")" in
  *-cp$PY_TAG-cp$PY_TAG-manylinux_*_aarch64.whl) ;;
  *) echo "build_wheel_aarch64: unexpected tag: $(basename "$WHEEL")" >&2; exit 1 ;;
esac
cp "$WHEEL" "$OUT/"
step "done: $OUT/$(basename "$WHEEL") ($(du -k "$WHEEL" | cut -f1) KiB)"
auditwheel show "$OUT/$(basename "$WHEEL")"
