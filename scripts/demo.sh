#!/usr/bin/env bash
# Builds etrt and shows what the default manifests provide (etrt plugins).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" >/dev/null
"$BUILD_DIR/bin/etrt" plugins "$@"
