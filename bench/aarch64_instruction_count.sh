#!/usr/bin/env bash
# Guest instructions an aarch64 etrt run executes under qemu-aarch64, with the NEON SGEMM and with
# the portable one (ETRT_GEMM_ISA=generic). qemu's wall time says nothing about an ARM core, but
# its instruction count is exact and stable: with one instruction per translation block and
# chaining off, `-d exec` logs one line per executed instruction, and the lines are counted.
#
#   bench/aarch64_instruction_count.sh <model dir under tests/models/generated> [iterations]
# Needs the cross build (scripts/test_aarch64.sh, build-aarch64/bin/etrt) and the host's numpy
# (to turn the model's inputs.npz into the .npy files `etrt run` reads).
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:?give a model directory, e.g. resnet_basic}
ITERATIONS=${2:-10}
BUILD_DIR=${AARCH64_BUILD_DIR:-build-aarch64}
SYSROOT=$(bash scripts/aarch64_sysroot.sh 2>/dev/null)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

inputs=()
while read -r npy; do inputs+=(--input "$npy"); done < <(python3 - "tests/models/generated/$MODEL/inputs.npz" "$TMP" <<'PY'
import sys, numpy as np
with np.load(sys.argv[1]) as data:
    for i in range(len(data.files)):
        path = f"{sys.argv[2]}/input_{i}.npy"
        np.save(path, data[f"input_{i}"])
        print(path)
PY
)

count() {  # $1: ETRT_GEMM_ISA value ("" for the default choice); prints the executed instructions
  ETRT_GEMM_ISA=$1 ETRT_NUM_THREADS=1 qemu-aarch64 -L /usr/aarch64-linux-gnu \
    -E LD_LIBRARY_PATH="$SYSROOT/usr/lib/aarch64-linux-gnu" -one-insn-per-tb -d exec,nochain -D /dev/stderr \
    "$BUILD_DIR/bin/etrt" run "tests/models/generated/$MODEL/portable.pte" "${inputs[@]}" \
    --iterations "$2" 2>&1 >/dev/null | grep -c '^Trace'
}
echo "model $MODEL (portable.pte), 1 thread, guest instructions executed by the whole process"
for isa in "" generic; do
  one=$(count "$isa" 1)
  many=$(count "$isa" $((ITERATIONS + 1)))
  printf '  %-8s  1 run: %12d   %d more runs: %12d   per run: %10d\n' "${isa:-neon}" "$one" "$ITERATIONS" \
    "$((many - one))" "$(((many - one) / ITERATIONS))"
done
