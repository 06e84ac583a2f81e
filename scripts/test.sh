#!/usr/bin/env bash
# Builds etrt and runs every test suite (GoogleTest and pytest, through ctest), then the
# aarch64 cross build's suites under qemu (scripts/test_aarch64.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
bash scripts/ensure_deps.sh
echo "==> configuring and building etrt in $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD_DIR" -j"$(nproc)"
echo "==> running every suite (GoogleTest and pytest, through ctest)"
ctest --test-dir "$BUILD_DIR" --output-on-failure
echo "==> the aarch64 stage: cross build, a subset of the suites under qemu-aarch64 (scripts/test_aarch64.sh)"
bash scripts/test_aarch64.sh
