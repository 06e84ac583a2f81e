#!/usr/bin/env bash
# Builds an importable `etrt` Python package from a build directory, for development: no sdist,
# no wheel, incremental. The package goes to DEST/etrt, laid out as the wheel lays it out
# (extensions, lib/, lib/etrt/plugins/, bin/, the pure-Python sources of python/etrt).
#
#   scripts/dev_python.sh BUILD_DIR DEST      then: PYTHONPATH=DEST python3 -c "import etrt"
#
# The wheel (scripts/build_wheel.sh) stays the only thing the package tests trust.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: dev_python.sh BUILD_DIR DEST}
DEST=${2:?usage: dev_python.sh BUILD_DIR DEST}
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DETRT_BUILD_PYTHON=ON -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" > /dev/null
cmake --build "$BUILD" -j"${JOBS:-2}"
rm -rf "$DEST/etrt"
cmake --install "$BUILD" --prefix "$DEST/etrt" --component Unspecified > /dev/null
cp -r "$ROOT/python/etrt/." "$DEST/etrt/"
find "$DEST/etrt" -name __pycache__ -prune -exec rm -rf {} +
echo "dev_python.sh: etrt importable with PYTHONPATH=$DEST"
