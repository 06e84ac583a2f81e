#!/usr/bin/env bash
# Builds the etrt wheel, installs it into a new virtual environment and runs
# tests/python_package from a temporary directory holding no checkout, so the
# tests can only see the installed package.
#
#   scripts/test_python_package.sh [wheel-build-dir]
#
# The venv uses --system-site-packages for NumPy, pytest, torch and executorch
# (installed by scripts/install_deps.sh); the tests check that `etrt` itself
# comes from the venv.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHEEL_BUILD_DIR=${1:-$ROOT/build/python-wheel}
PYTHON=${PYTHON:-python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/etrt-package-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

"$PYTHON" -m pip wheel --quiet --no-build-isolation --no-deps -w "$WORK/wheel" "$ROOT" \
  -C build-dir="$WHEEL_BUILD_DIR"
"$PYTHON" -m venv --system-site-packages "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet --no-deps --no-index "$WORK"/wheel/etrt-*.whl

# Tests and the reference programs are copied; nothing under $ROOT is read after this.
cp -r "$ROOT/tests/python_package" "$WORK/tests"
cp -r "$ROOT/tests/models/generated" "$WORK/models"
cd "$WORK/tests"
ETRT_MODELS="$WORK/models" "$WORK/venv/bin/python" -m pytest -p no:cacheprovider --import-mode=importlib -q .
