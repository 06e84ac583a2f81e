"""A bounded subset of tests/models/zoo/zoo.py for ctest: a few small example models
of ExecuTorch, exported as its scripts do (cached in the build directory), run in
ExecuTorch's runtime (one subprocess) and in etrt; the outputs must agree."""
import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", HERE.parents[2]))
BUILD = Path(os.environ.get("ETRT_BUILD_DIR", SOURCE / "build"))
sys.path.insert(0, str(SOURCE / "tests" / "support"))
import etrt_ctypes  # noqa: E402

# Small, quick to export, and covering each variant: portable kernels, XNNPACK fp32, XNNPACK q8.
SUBSET = ["add_mul/portable", "linear/xnnpack_q8", "softmax/xnnpack", "ds_cnn/portable", "ds_cnn/xnnpack",
          "lstm/portable"]
OUT = BUILD / "zoo_subset"


@pytest.fixture(scope="module")
def exported():
    results = OUT / "results.json"
    if not results.exists():
        proc = subprocess.run([sys.executable, str(HERE / "zoo.py"), "--child", "batch", str(OUT), *SUBSET],
                              capture_output=True, text=True, timeout=900)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("ZOO:")]
        assert proc.returncode == 0 and lines, f"export failed: exit {proc.returncode}\n{proc.stderr[-3000:]}"
        results.write_text(lines[-1][4:])
    return json.loads(results.read_text())


@pytest.fixture(scope="module")
def etrt():
    return etrt_ctypes.Library()


@pytest.mark.parametrize("key", SUBSET)
def test_etrt_matches_executorch(exported, etrt, key):
    entry = exported[key]
    assert entry["export"]["status"] == "exported", entry["export"]
    assert entry["executorch"]["status"] == "ran", entry["executorch"]
    model_dir = OUT / key
    inputs = [np.load(p) for p in sorted(glob.glob(str(model_dir / "input_*.npy")))]
    ours = etrt.load_program(model_dir / "model.pte").load_method("forward").execute(inputs)
    theirs = [np.load(model_dir / f"executorch_{i}.npy") for i in range(len(ours))]
    assert len(glob.glob(str(model_dir / "executorch_*.npy"))) == len(ours)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape, f"{key} output {i}: shape {a.shape}, ExecuTorch {b.shape}"
        diff = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.size else 0.0
        scale = max(1.0, float(np.abs(b).max()))
        assert diff <= 1e-4 * scale, f"{key} output {i}: max |etrt - ExecuTorch| {diff:.3g}"
