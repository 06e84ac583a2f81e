#!/usr/bin/env bash
# Instruction counts of the aarch64 SGEMM where qemu's wall time says nothing about an ARM core:
#   bench/aarch64_instruction_count.sh                 the loops of the NEON and the portable
#                                                      micro-kernel, read from the cross-built plugin
#   bench/aarch64_instruction_count.sh MODEL [N]       also the guest instructions a whole `etrt run`
#                                                      of tests/models/generated/MODEL executes under
#                                                      qemu-aarch64, NEON vs ETRT_GEMM_ISA=generic
# The run count is exact and stable: with one instruction per translation block (-singlestep) and
# chaining off, `-d exec` logs one line per executed instruction, and the lines are counted. It is
# slow (about 10^5 instructions a second): use a small model (mlp).
# Needs the cross build (scripts/test_aarch64.sh) and, for a run, the host's numpy (to turn the
# model's inputs.npz into the .npy files `etrt run` reads).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${AARCH64_BUILD_DIR:-build-aarch64}
# Each loop of the two micro-kernels (from a
# backward branch to its target) with its instruction and multiply-add counts.
echo "micro-kernel loops in $BUILD_DIR/lib/etrt/plugins/libetrt_kernels_optimized.so.1 (aarch64-linux-gnu-objdump)"
aarch64-linux-gnu-objdump -d --no-show-raw-insn -C "$BUILD_DIR/lib/etrt/plugins/libetrt_kernels_optimized.so.1" |
python3 -c '
import re, sys
functions, name = {}, None
for line in sys.stdin:
    head = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if head:
        name = head.group(1) if re.search(r"gemm::.*::kernel_(neon|generic)\(", head.group(1)) else None
        if name: functions[name] = []
    elif name and (m := re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)):
        functions[name].append((int(m.group(1), 16), m.group(2), m.group(3)))
for name, code in functions.items():
    print("  " + name.split("::")[-1].split("(")[0])
    for i, (addr, op, args) in enumerate(code):
        t = re.match(r"([0-9a-f]+) <", args)
        if (op.startswith("b.") or op in ("b", "cbnz", "cbz")) and t and int(t.group(1), 16) < addr:
            body = [c for c in code if int(t.group(1), 16) <= c[0] <= addr]
            macs = sum(4 if c[2].split(",")[0].endswith(".4s") else 1 for c in body if c[1] in ("fmla", "fmadd"))
            print(f"    loop {int(t.group(1), 16):#x}-{addr:#x}: {len(body)} instructions, {macs} multiply-adds")
'

[ $# -ge 1 ] || exit 0
MODEL=$1
ITERATIONS=${2:-5}
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
    -E LD_LIBRARY_PATH="$SYSROOT/usr/lib/aarch64-linux-gnu" -singlestep -d exec,nochain -D /dev/stderr \
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
