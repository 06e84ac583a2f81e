"""The reference programs under each CPU level of kernels_optimized: a process
forced to the x86-64 baseline (ETRT_CPU_LEVEL=x86-64) and one left to pick the
best level this CPU runs each map the file the loader says it chose, and both
give the eager PyTorch outputs within each model's tolerance and each other's
outputs within float32 rounding (x86-64-v3 contracts a*b+c into FMA)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "tests" / "models" / "generated"
INDEX = json.loads((MODELS / "index.json").read_text())
WHOLE_MODELS = [m for m in INDEX["models"] if m["kind"] == "model"]
KERNELS = "libetrt_kernels_optimized.so.1"

# Runs every whole reference program in this process and saves the outputs.
CHILD = r"""
import ctypes, json, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, sys.argv[1])
import etrt_ctypes
from test_models import MODELS, cases_of, load_arrays
lib = etrt_ctypes.Library()
out, models = Path(sys.argv[2]), json.loads(sys.argv[3])
for model in models:
    program = lib.load_program(MODELS / model["dir"] / "portable.pte")
    for meta, method_name, spec in cases_of(model):
        method = program.load_method(method_name)
        for case in spec["cases"]:
            outputs = method.execute(load_arrays(MODELS / model["dir"] / case["inputs_file"]))
            np.savez(out / f"{model['name']}.{method_name}.{case['name']}.npz", *outputs)
lib.lib.et_report_json.restype = ctypes.c_void_p
lib.lib.et_string_free.argtypes = [ctypes.c_void_p]
raw = lib.lib.et_report_json()
report = json.loads(ctypes.string_at(raw).decode())
lib.lib.et_string_free(raw)
mapped = sorted({line.split(None, 5)[5].strip() for line in open("/proc/self/maps")
                 if line.rstrip().endswith(sys.argv[4])})
print(json.dumps({"plugins": report["plugins"], "mapped": mapped}))
"""


def run_level(tmp_path, level):
    out = tmp_path / (level or "best")
    out.mkdir()
    env = dict(os.environ, ETRT_PLUGIN_PATH="")
    env.pop("ETRT_CPU_LEVEL", None)
    if level:
        env["ETRT_CPU_LEVEL"] = level
    support = SOURCE / "tests" / "support"
    env["PYTHONPATH"] = os.pathsep.join([str(support), str(SOURCE / "tests" / "python")])
    done = subprocess.run([sys.executable, "-c", CHILD, str(support), str(out), json.dumps(WHOLE_MODELS), KERNELS],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    (kernels,) = [p for p in facts["plugins"] if p["name"] == "kernels_optimized"]
    return out, kernels, facts["mapped"]


def outputs(directory, name):
    with np.load(directory / name) as data:
        return [data[f"arr_{i}"] for i in range(len(data.files))]


def test_reference_programs_agree_under_both_levels(tmp_path):
    base_dir, base, base_mapped = run_level(tmp_path, "x86-64")
    best_dir, best, best_mapped = run_level(tmp_path, None)
    assert base["cpu_level"] == "x86-64"
    assert "ETRT_CPU_LEVEL=x86-64" in base["cpu_level_reason"]
    assert base_mapped == [base["library"]] and "/x86-64-v3/" not in base["library"]
    assert best_mapped == [best["library"]]
    flags = Path("/proc/cpuinfo").read_text().split("\nflags")[1].split("\n")[0].split()
    runs_v3 = {"avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "abm"} <= set(flags)
    assert best["cpu_level"] == ("x86-64-v3" if runs_v3 else "x86-64")
    assert ("/x86-64-v3/" in best["library"]) == runs_v3

    compared = 0
    for model in WHOLE_MODELS:
        meta = json.loads((MODELS / model["dir"] / "meta.json").read_text())
        tolerance = meta["tolerance"]
        for method_name, spec in meta["methods"].items():
            for case in spec["cases"]:
                name = f"{model['name']}.{method_name}.{case['name']}.npz"
                with np.load(MODELS / model["dir"] / case["expected_file"]) as data:
                    expected = [data[f"output_{i}"] for i in range(len(data.files))]
                for a, b, want in zip(outputs(base_dir, name), outputs(best_dir, name), expected):
                    assert a.dtype == b.dtype == want.dtype and a.shape == b.shape == want.shape, name
                    if not np.issubdtype(a.dtype, np.floating):
                        assert np.array_equal(a, b), name
                        continue
                    for actual in (a, b):
                        assert np.allclose(actual, want, rtol=tolerance["rtol"], atol=tolerance["atol"],
                                           equal_nan=True), name
                    # The two builds differ only by rounding: a few float32 ulps of the values' scale.
                    scale = max(float(np.nanmax(np.abs(a))) if a.size else 0.0, 1.0)
                    assert np.allclose(a, b, rtol=1e-4, atol=1e-5 * scale, equal_nan=True), (
                        f"{name}: max |diff| {np.nanmax(np.abs(a.astype(np.float64) - b)):.3g}")
                    compared += 1
    assert compared >= len(WHOLE_MODELS)
