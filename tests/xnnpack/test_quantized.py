"""Quantized XNNPACK programs on etrt's xnnpack plugin: ExecuTorch's XNNPACK quantizer (static per-tensor and
per-channel 8-bit: conv, linear, add, mul, pooling, concatenation; ExecuTorch's `linear`, `add`, `add_mul`
examples) and the dynamically quantized linear layers of its LLM export (8-bit per-channel and 4-bit group-wise
weights). Programs and ExecuTorch's outputs on them come from tests/models/export_quantized.py (ExecuTorch ran
in the exporting process, etrt runs here).

Tolerances, against ExecuTorch's runtime on the same .pte:
- static programs: one quantization step of the output. Both runtimes compute the same integer graph, but
  Debian's 2022 XNNPACK and the XNNPACK inside ExecuTorch 1.5.1 requantize with different arithmetic in some
  kernels (fixed-point multipliers vs fp32 scales), so a value at a rounding tie can land one step apart.
- dynamically quantized linear: etrt quantizes each activation row with torch's per-token parameters, which
  are XNNPACK's too, so the integer products are the same; only the order of the float scaling differs:
  1e-5 of the output's largest magnitude. Against the quantized eager model (torchao's reference ops, which
  dequantize before a float matmul) the bound is 2 % of the largest magnitude.
"""
import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import npz_arrays

SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "tests" / "models" / "generated_q"

INDEX = json.loads((MODELS / "index.json").read_text())["models"]
STATIC = [n for n in INDEX if not n.startswith("q_dynamic")]
DYNAMIC = [n for n in INDEX if n.startswith("q_dynamic")]


# `etrt`, `stats`: conftest.py.
arrays = npz_arrays


def run(etrt, name, repeat=1):
    d = MODELS / INDEX[name]["dir"]
    program = etrt.load_program(d / "xnnpack.pte")
    method = program.load_method("forward")
    inputs = arrays(d / "inputs.npz", "input")
    outputs = [method.execute(inputs) for _ in range(repeat)]
    del method, program
    return outputs, arrays(d / "executorch_xnnpack.npz", "output"), arrays(d / "expected.npz", "output")


@pytest.mark.parametrize("name", STATIC)
def test_static_quantized_program_matches_executorch(etrt, stats, name):
    outputs, theirs, _ = run(etrt, name, repeat=2)
    steps = INDEX[name]["output_steps"]
    assert outputs[0] and len(outputs[0]) == len(theirs)
    for i, (ours, ref) in enumerate(zip(outputs[0], theirs)):
        assert ours.shape == ref.shape and ours.dtype == ref.dtype, f"{name} output {i}"
        step = steps[i]
        assert step is not None and step > 0, f"{name} output {i}: no quantization step recorded"
        diff = np.abs(ours.astype(np.float64) - ref)
        assert diff.max() <= step * 1.001, f"{name} output {i}: max |diff| {diff.max():.3g} > one step {step:.3g}"
        # Most values agree exactly: the integer arithmetic is the same.
        assert (diff <= step * 1e-3).mean() >= 0.9, f"{name} output {i}: only {(diff == 0).mean():.0%} exact"
        np.testing.assert_array_equal(outputs[1][i], ours)  # a second run gives the same bits
    reports = stats()
    # One line per delegate (a mean between a conv and a linear splits the graph in two), each ran twice.
    assert reports and all(r["executes"] == 2 for r in reports), reports
    assert all(r["plugin"] == "xnnpack" for r in reports), reports


@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_quantized_linear_matches_executorch(etrt, stats, name):
    outputs, theirs, eager = run(etrt, name)
    for i, (ours, ref, want) in enumerate(zip(outputs[0], theirs, eager)):
        scale = np.abs(ref).max()
        diff = np.abs(ours - ref).max()
        assert diff <= 1e-5 * scale, f"{name} output {i}: vs ExecuTorch {diff:.3g}"
        assert np.abs(ours - want).max() <= 0.02 * scale, f"{name} output {i}: vs eager {np.abs(ours - want).max():.3g}"
    reports = stats()
    assert len(reports) == 1 and reports[0]["executes"] == 1, reports
    # The folded node runs in plugin code and the delegate says so.
    assert "FullyConnected(qd8) x2" in reports[0]["graph"], reports[0]["graph"]
    assert reports[0]["plugin_node_runs"] == 2, reports
