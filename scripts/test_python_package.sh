#!/usr/bin/env bash
# Installs the repaired etrt wheel (scripts/build_wheel.sh) into a new virtual
# environment and runs tests/python_package from a temporary directory holding
# no checkout, so the tests can only see the installed package.
#
#   scripts/test_python_package.sh [dist-dir]
#
# dist-dir holds the wheel built by scripts/build_wheel.sh (ctest's wheel_build
# test fills it); without one, the wheel is built first into build/wheel/dist.
# The venv uses --system-site-packages for NumPy, pytest, torch and executorch
# (installed by scripts/install_deps.sh); the tests check that `etrt` itself
# comes from the venv.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
DIST=${1:-}
if [ -z "$DIST" ]; then
  DIST=$ROOT/build/wheel/dist
  PYTHON=$PYTHON bash "$ROOT/scripts/build_wheel.sh" "$DIST" "$ROOT/build/wheel/work"
fi
WHEELS=("$DIST"/etrt-*.whl)
[ -f "${WHEELS[0]}" ] || { echo "no etrt wheel in $DIST (run scripts/build_wheel.sh)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/etrt-package-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

"$PYTHON" -m venv --system-site-packages "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet --no-deps --no-index "${WHEELS[0]}"

# Tests and the reference programs are copied; nothing under $ROOT is read after this.
cp -r "$ROOT/tests/python_package" "$WORK/tests"
cp -r "$ROOT/tests/models/generated" "$WORK/models"
cp -r "$ROOT/tests/data_file/generated" "$WORK/models/data_file"  # programs with weights in .ptd files
cp -r "$ROOT/tests/etdump/models" "$WORK/models/traced"  # programs with their ETRecords, for the Inspector
cd "$WORK/tests"
ETRT_MODELS="$WORK/models" "$WORK/venv/bin/python" -m pytest -p no:cacheprovider --import-mode=importlib -q .
