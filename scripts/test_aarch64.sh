#!/usr/bin/env bash
# The aarch64 stage of the tests: cross-builds etrt with Debian's crossbuild-essential-arm64 against
# the arm64 sysroot (scripts/aarch64_sysroot.sh) and runs a subset of the GoogleTest suites under
# qemu-aarch64 (ctest's CMAKE_CROSSCOMPILING_EMULATOR, cmake/toolchains/aarch64-linux-gnu.cmake).
# Run by scripts/test.sh after the host suites; on its own: bash scripts/test_aarch64.sh.
#
# Which suites, and why (CI has 2 cores; this stage must stay under ~12 minutes, build included):
#   loader    loader_units (ELF, JSON, schema, SHA-256), loader_errors + loader_foreign_plugin (the
#             x86_64 build's kernels_optimized is refused, aarch64 plugins load), manifest_errors,
#             lazy_loading, priority, priority_order, discovery, discovery_rules, plugin_trust, pinned_load
#   ABI       abi_matrix, abi_1_2, abi_1_4 (the C ABI from an aarch64 host to aarch64 plugins)
#   kernels   linalg_matmul and linalg_conv (the NEON SGEMM, and the portable one with
#             ETRT_GEMM_ISA=generic, plus 3 threads; linalg_matmul_isa* check which one a process
#             picks), linalg_norm, linalg_pool, binary_elementwise, pointwise_unary, reduction_ops
#   programs  reference_programs: every reference program (portable and XNNPACK) against eager
#             PyTorch's outputs, from C++
# Left out: every pytest suite (they need an aarch64 CPython with numpy/torch, which Debian's
# cross toolchain does not give); program_errors (it runs pte_probe as a child process, and an
# aarch64 child cannot be exec'ed without binfmt_misc, which containers and CI do not have);
# vector_math (its vector code is x86-only: on aarch64 the kernels call libm, nothing of etrt's to
# test); the remaining kernel families and the stress, xnnpack decoy and dispatch-budget suites, to
# keep the cross build (the longest part of this stage) inside its time.
set -euo pipefail
cd "$(dirname "$0")/.."
HOST_BUILD_DIR=${BUILD_DIR:-build}  # scripts/test.sh's build directory
BUILD_DIR=${AARCH64_BUILD_DIR:-build-aarch64}
started=$SECONDS

bash scripts/ensure_deps.sh
echo "==> aarch64: the arm64 sysroot (Debian's arm64 packages, unpacked)"
SYSROOT=$(bash scripts/aarch64_sysroot.sh)

# The x86_64 plugin the aarch64 loader must refuse: the host build's kernels_optimized
# (ETRT_FOREIGN_PLUGIN names another).
FOREIGN_PLUGIN=${ETRT_FOREIGN_PLUGIN:-$PWD/$HOST_BUILD_DIR/lib/etrt/plugins/libetrt_kernels_optimized.so.1}
if [ ! -f "$FOREIGN_PLUGIN" ]; then
  echo "==> aarch64: building the host's kernels_optimized plugin in $HOST_BUILD_DIR (the x86_64 plugin the aarch64 loader must refuse)"
  [ -f "$HOST_BUILD_DIR/CMakeCache.txt" ] || cmake -S . -B "$HOST_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$HOST_BUILD_DIR" -j"$(nproc)" --target etrt_plugin_kernels_optimized >/dev/null
fi

TESTS=(loader_units_test loader_errors_test manifest_errors_test lazy_loading_test priority_test
       priority_order_test discovery_test discovery_rules_test plugin_trust_test pinned_load_test
       abi_matrix_test abi_1_2_test abi_1_4_test
       linalg_matmul_test linalg_conv_test linalg_norm_test linalg_pool_test binary_elementwise_test
       pointwise_unary_test reduction_ops_test
       reference_programs_test)
# ctest names: the executables' own entries and their variants (_generic_isa, _3_threads, ...).
REGEX="^(loader_units|loader_units_portable_sha256|loader_foreign_plugin|linalg_matmul_isa|linalg_matmul_isa_generic|$(IFS='|'; echo "${TESTS[*]}"))(_generic_isa|_3_threads)?\$"

echo "==> aarch64: configuring the cross build in $BUILD_DIR (aarch64-linux-gnu-g++, sysroot $SYSROOT)"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake -DETRT_AARCH64_SYSROOT="$SYSROOT" \
  -DETRT_BUILD_BENCH=OFF -DETRT_FOREIGN_PLUGIN="$FOREIGN_PLUGIN" >/dev/null
# The loader and ABI tests load the test plugins of tests/plugins by path: build every one of them.
mapfile -t TEST_PLUGINS < <(ninja -C "$BUILD_DIR" -t targets all |
  sed -n 's/^\(etrt_plugin_test_[a-z0-9_]*\|etrt_probe_[a-z0-9_]*\): .*/\1/p' | sort -u)
echo "==> aarch64: building libetrt, the plugins, ${#TEST_PLUGINS[@]} test plugins and ${#TESTS[@]} test programs (first time: several minutes)"
cmake --build "$BUILD_DIR" -j"$(nproc)" --target etrt etrt_cli etrt_plugin_kernels_optimized etrt_plugin_xnnpack \
  "${TEST_PLUGINS[@]}" "${TESTS[@]}"
echo "==> aarch64: kernels_optimized is built for $(readelf -h "$BUILD_DIR/lib/etrt/plugins/libetrt_kernels_optimized.so.1" | sed -n 's/^ *Machine: *//p')"
echo "==> aarch64: running the suites under $(qemu-aarch64 --version | head -1)"
# PluginTrustDeathTest.LibraryPathTheProcessStartedWithIsSearchedAndChecked re-executes the test
# binary (the LD_LIBRARY_PATH a process starts with): an aarch64 child cannot be exec'ed without
# binfmt_misc, as for program_errors above. It runs in the host's suite.
GTEST_FILTER="-PluginTrustDeathTest.LibraryPathTheProcessStartedWithIsSearchedAndChecked" \
  ctest --test-dir "$BUILD_DIR" -R "$REGEX" -j"$(nproc)" --output-on-failure --timeout 600
echo "==> aarch64 stage: $((SECONDS - started)) s"
