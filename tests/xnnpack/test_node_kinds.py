"""The XNNPACK node kinds added last (ConvTranspose2d, PReLU, StaticResizeBilinear2D) on programs ExecuTorch 1.5.1's
XnnpackPartitioner lowered (tests/models/export_node_kinds.py): outputs against ExecuTorch's runtime on the same
.pte and against eager PyTorch, who ran each node kind (Debian's XNNPACK or plugin code, from the stats line),
and the NaN/infinity reference path against eager PyTorch.

Tolerance: 1e-5 of the output's largest magnitude plus 1e-4 relative. Both runtimes sum the same products, but
Debian's 2022 XNNPACK and the one inside ExecuTorch 1.5.1 order and fuse them differently (and differently again
from PyTorch's own kernels), so results agree to float rounding, not bit for bit.
"""
import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import npz_arrays

SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "tests" / "models" / "generated_nodes"

INDEX = json.loads((MODELS / "index.json").read_text())["models"]
NODE_KINDS = sorted(n for n in INDEX if not n.startswith("fp16"))
FP16 = sorted(n for n in INDEX if n.startswith("fp16"))
# Transposed convolutions XNNPACK cannot express (output adjustment not below the stride) run in plugin code.
PLUGIN_RUN = {"deconv_adjust_over_stride"}


# `etrt`, `stats`: conftest.py.
arrays = npz_arrays


def close(ours, ref, what, rtol=1e-4, atol=1e-5):
    assert ours.shape == ref.shape and ours.dtype == ref.dtype, f"{what}: {ours.shape} {ours.dtype} vs {ref.shape}"
    ours, ref = ours.astype(np.float32), ref.astype(np.float32)
    scale = float(np.nanmax(np.abs(ref[np.isfinite(ref)]))) if np.isfinite(ref).any() else 1.0
    bad = ~np.isclose(ours, ref, rtol=rtol, atol=atol * scale, equal_nan=True)
    assert not bad.any(), f"{what}: {bad.sum()} of {bad.size} differ, max |diff| {np.nanmax(np.abs(ours - ref)):.3g}"


def run(etrt, name, inputs_file):
    d = MODELS / INDEX[name]["dir"]
    program = etrt.load_program(d / "xnnpack.pte")
    method = program.load_method("forward")
    outputs = method.execute(arrays(d / inputs_file, "input"))
    del method, program
    return outputs


@pytest.mark.parametrize("name", NODE_KINDS)
def test_node_kind_matches_executorch_and_eager(etrt, stats, name):
    d = MODELS / INDEX[name]["dir"]
    outputs = run(etrt, name, "inputs.npz")
    eager = arrays(d / "expected.npz", "output")
    assert len(outputs) == len(eager) == 1
    close(outputs[0], eager[0], f"{name} vs eager")
    if name in PLUGIN_RUN:
        # ExecuTorch's own XNNPACK refuses this program at execute (invalid parameter); eager is the reference.
        assert "executorch_error" in INDEX[name], INDEX[name]
    else:
        theirs = arrays(d / "executorch_xnnpack.npz", "output")
        assert len(theirs) == 1
        close(outputs[0], theirs[0], f"{name} vs ExecuTorch's XNNPACK")
    [report] = stats()
    assert report["plugin"] == "xnnpack" and report["executes"] == 1, report
    # Who ran the node kind, counted: Debian's XNNPACK, or plugin code where XNNPACK cannot express it.
    kind = INDEX[name]["kind"]
    runner, other = ("plugin", "xnnpack") if name in PLUGIN_RUN else ("xnnpack", "plugin")
    expected = INDEX[name]["node_kinds"].count(kind)
    assert expected == 1 and report["nodes"][runner].get(kind) == expected, report
    assert kind not in report["nodes"][other], report
    # The layout transposes around it are the plugin's (this XNNPACK has no transpose node).
    assert report["nodes"]["plugin"].get("StaticTranspose") == INDEX[name]["node_kinds"].count("StaticTranspose")
    if runner == "xnnpack":
        assert report["xnnpack_invocations"] == 1, report


@pytest.mark.parametrize("name", NODE_KINDS)
def test_node_kind_propagates_nan_and_infinity_as_pytorch(etrt, stats, name):
    d = MODELS / INDEX[name]["dir"]
    outputs = run(etrt, name, "inputs_nan.npz")
    eager = arrays(d / "expected_nan.npz", "output")
    assert not np.isfinite(eager[0]).all(), f"{name}: neither the planted NaN nor the infinity reaches an output"
    close(outputs[0], eager[0], f"{name} with NaN and inf vs eager")
    [report] = stats()
    assert report["xnnpack_invocations"] == 0, report  # the reference path, not XNNPACK (which clamps NaN)


@pytest.mark.parametrize("name", FP16)
def test_fp16_program_matches_executorch_and_eager(etrt, stats, name):
    """fp16 inputs and outputs: etrt computes in fp32 between the conversions (Debian's XNNPACK takes fp32 at its
    boundary), ExecuTorch's XNNPACK and PyTorch compute in fp16 (fp16 accumulators, rounded per operator), so
    the results agree within fp16 rounding: 1e-2 relative plus 2e-3 of the largest magnitude (an fp16 ulp is
    ~1e-3 relative; the fp16 references round at every step)."""
    d = MODELS / INDEX[name]["dir"]
    outputs = run(etrt, name, "inputs.npz")
    theirs = arrays(d / "executorch_xnnpack.npz", "output")
    eager = arrays(d / "expected.npz", "output")
    assert len(outputs) == len(theirs) == len(eager) == 2
    for i, (ours, ref, want) in enumerate(zip(outputs, theirs, eager)):
        assert ours.dtype == np.float16, f"{name} output {i} is {ours.dtype}"
        close(ours, ref, f"{name} output {i} vs ExecuTorch's XNNPACK", rtol=1e-2, atol=2e-3)
        close(ours, want, f"{name} output {i} vs eager", rtol=1e-2, atol=2e-3)
    [report] = stats()
    assert report["executes"] == 1 and report["xnnpack_invocations"] >= 1, report
    assert report["nodes"]["xnnpack"].get("FullyConnected") == 1 and report["nodes"]["xnnpack"].get("Conv2d") == 1
