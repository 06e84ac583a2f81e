#!/usr/bin/env bash
# The demo: build etrt, show what the default manifests provide, then run a
# bundled MobileNetV2-style program through them and check its output.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
bash scripts/ensure_deps.sh
echo "==> configuring and building etrt in $BUILD_DIR (first time: a few minutes)"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# Ninja prints a failing compile on standard output: keep it in a log and show its end on failure.
cmake --build "$BUILD_DIR" -j"$(nproc)" > "$BUILD_DIR/demo-build.log" 2>&1 ||
  { tail -40 "$BUILD_DIR/demo-build.log"; echo "demo: building etrt failed (log: $BUILD_DIR/demo-build.log)" >&2; exit 1; }
echo "==> the default manifests and the plugins they declare"
ETRT="$BUILD_DIR/bin/etrt"
DEMO=examples/demo
OUT=$(mktemp -d)

"$ETRT" plugins
echo
echo "==> what the demo program needs, and which plugin would serve each operator"
"$ETRT" inspect "$DEMO/mobilenet_v2_block.pte"
echo
echo "==> running it 50 times (plugins load on first need)"
"$ETRT" run "$DEMO/mobilenet_v2_block.pte" --input "$DEMO/input_0.npy" --iterations 50 --output-dir "$OUT"
python3 - "$OUT/output_0.npy" "$DEMO/expected_0.npy" <<'PY'
import sys
import numpy as np
actual, expected = np.load(sys.argv[1]), np.load(sys.argv[2])
diff = float(np.abs(actual - expected).max())
ok = np.allclose(actual, expected, rtol=1e-4, atol=1e-5)
print(f"output vs eager PyTorch: max |diff| {diff:.3g} -> {'match' if ok else 'MISMATCH'}")
sys.exit(0 if ok else 1)
PY
