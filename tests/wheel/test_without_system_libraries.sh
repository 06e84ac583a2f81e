#!/usr/bin/env bash
# Proof that the repaired wheel needs none of Debian's spdlog, fmt, XNNPACK,
# pthreadpool or cpuinfo: in a private mount namespace, /usr is overlaid and
# every file of those packages (libraries and -dev files) is deleted from the
# overlay, so for this process tree they do not exist. There the wheel is
# installed into a fresh venv (no network: --no-index) and a portable and an
# XNNPACK program of three reference models run with parity
# (check_installed_wheel.py). The machine's own /usr is never touched.
#
#   tests/wheel/test_without_system_libraries.sh <wheel, or a directory holding one> <models dir>
#
# Needs root (CI runs as root) for unshare --mount; exits 77 (ctest: skipped) otherwise.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
WHEEL=$(realpath "$1")
if [ -d "$WHEEL" ]; then WHEEL=$(ls "$WHEEL"/etrt-*.whl 2>/dev/null | head -1); fi
MODELS=$(realpath "$2")
PYTHON=${PYTHON:-python3}
PYTHON=$(command -v "$PYTHON")

if [ "${ETRT_WHEEL_TEST_IN_NAMESPACE:-}" != 1 ]; then
  if [ "$(id -u)" != 0 ] || ! unshare --mount --propagation private true 2>/dev/null; then
    echo "SKIP: needs root and unshare --mount to hide the system libraries"
    exit 77
  fi
  [ -f "$WHEEL" ] || { echo "FAIL: no wheel at $1"; exit 1; }
  SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/etrt-wheel-proof.XXXXXX")
  status=0
  env ETRT_WHEEL_TEST_IN_NAMESPACE=1 ETRT_WHEEL_TEST_SCRATCH="$SCRATCH" \
    unshare --mount --propagation private -- "$0" "$@" || status=$?
  rmdir "$SCRATCH"  # its contents lived on a tmpfs that went away with the namespace
  exit $status
fi

# ---- inside the private mount namespace ----
SCRATCH=$ETRT_WHEEL_TEST_SCRATCH
mount -t tmpfs etrt-proof "$SCRATCH"
mkdir -p "$SCRATCH/upper" "$SCRATCH/work" "$SCRATCH/run"
mount -t overlay etrt-usr -o "lowerdir=/usr,upperdir=$SCRATCH/upper,workdir=$SCRATCH/work" /usr

# Every installed package of those five libraries, runtime and -dev (and cpuinfo's clog).
mapfile -t PACKAGES < <(dpkg-query -W -f='${binary:Package}\n' |
  grep -E '^lib(spdlog|fmt|xnnpack|pthreadpool|cpuinfo|clog)[0-9.]*(-dev)?(:[a-z0-9]+)?$')
[ ${#PACKAGES[@]} -gt 0 ] || { echo "FAIL: found none of the packages to hide"; exit 1; }
hidden=0
directories=()
for package in "${PACKAGES[@]}"; do
  while read -r file; do
    if [ -f "$file" ] || [ -L "$file" ]; then
      rm -f "$file"
      hidden=$((hidden + 1))
    elif [ -d "$file" ]; then
      directories+=("$file")
    fi
  done < <(dpkg-query -L "$package")
done
# Their directories too (/usr/include/spdlog, ...), deepest first, where nothing else is left in them.
printf '%s\n' "${directories[@]}" | sort -ru | while read -r directory; do
  rmdir "$directory" 2>/dev/null || true
done
echo "==> hid $hidden files of: ${PACKAGES[*]}"

# Precondition: nothing can load or find them any more (else this test proves nothing).
env -u LD_LIBRARY_PATH -u LD_PRELOAD "$PYTHON" - <<'PY'
import ctypes, glob, sys
for soname in ("libspdlog.so.1.10", "libfmt.so.9", "libXNNPACK.so.0", "libpthreadpool.so.0", "libcpuinfo.so.0"):
    try:
        ctypes.CDLL(soname)
    except OSError:
        continue
    sys.exit(f"FAIL: {soname} still loads inside the namespace")
left = [p for pattern in ("/usr/lib/*/libspdlog*", "/usr/lib/*/libfmt*", "/usr/lib/*/libXNNPACK*",
                          "/usr/lib/*/libpthreadpool*", "/usr/lib/*/libcpuinfo*", "/usr/include/spdlog",
                          "/usr/include/fmt", "/usr/include/xnnpack.h", "/usr/include/cpuinfo.h")
        for p in glob.glob(pattern)]
if left:
    sys.exit(f"FAIL: still present inside the namespace: {left}")
print("==> none of the five libraries can be loaded or found here")
PY

cd "$SCRATCH/run"
echo "==> fresh venv, installing $(basename "$WHEEL") with --no-index (NumPy from the system site-packages)"
"$PYTHON" -m venv --system-site-packages venv
env -u LD_LIBRARY_PATH venv/bin/python -m pip install --quiet --no-index "$WHEEL"
echo "==> running the reference programs from the installed wheel"
env -u LD_LIBRARY_PATH -u LD_PRELOAD -u ETRT_PLUGIN_PATH -u ETRT_NUM_THREADS PYTHONNOUSERSITE=1 \
  ETRT_XNNPACK_STATS="$SCRATCH/run/xnnpack_stats.jsonl" \
  venv/bin/python "$HERE/check_installed_wheel.py" "$MODELS" "$SCRATCH/run/xnnpack_stats.jsonl" 2> stderr.txt ||
  { cat stderr.txt; exit 1; }
cat stderr.txt
# libetrt warns when it cannot open a library it needs (e.g. its cpuinfo, to size the pool).
if grep -E "cannot (open|count|locate)" stderr.txt; then
  echo "FAIL: libetrt could not open one of its own libraries"
  exit 1
fi
echo "PASS: the wheel runs portable and XNNPACK programs without Debian's spdlog, fmt, XNNPACK, pthreadpool, cpuinfo"
