"""NaN made inside an XNNPACK graph from finite inputs (an overflow to +inf and -inf that a later node adds, 0 / 0)
stays NaN on etrt's xnnpack plugin, as in eager PyTorch, ExecuTorch's portable runtime and etrt's portable path.
Debian's 2022 XNNPACK bounds every result with max(x, low) and min(x, high), which turn NaN into the lower bound
whatever the bounds are; the run that raised a floating-point invalid operation is run again by the plugin's
reference code (delegate.cpp). Programs: tests/xnnpack/generated_nan (export_nan_programs.py)."""
import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import npz_arrays

SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
PROGRAMS = SOURCE / "tests" / "xnnpack" / "generated_nan"
NAMES = sorted(json.loads((PROGRAMS / "index.json").read_text()))
MODELS = SOURCE / "tests" / "models" / "generated"
REFERENCE_MODELS = [m for m in json.loads((MODELS / "index.json").read_text())["models"]
                    if (MODELS / m["dir"] / "xnnpack.pte").exists()]

# `etrt`, `stats`: conftest.py.


def run(etrt, path, inputs):
    method = etrt.load_program(path).load_method("forward")
    outputs = method.execute(inputs)
    del method
    return outputs


def assert_same_nan_and_inf(actual, expected, what):
    assert actual.shape == expected.shape, what
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=what + ": NaN positions")
    np.testing.assert_array_equal(np.isposinf(actual), np.isposinf(expected), err_msg=what + ": +Inf positions")
    np.testing.assert_array_equal(np.isneginf(actual), np.isneginf(expected), err_msg=what + ": -Inf positions")
    finite = np.isfinite(expected)
    np.testing.assert_allclose(actual[finite], expected[finite], rtol=1e-4, atol=1e-5, err_msg=what)


@pytest.mark.parametrize("name", NAMES)
def test_nan_made_inside_the_graph_stays_nan(etrt, stats, name):
    d = PROGRAMS / name
    inputs = npz_arrays(d / "inputs.npz", "input")
    assert all(np.isfinite(x).all() for x in inputs)
    ours = run(etrt, d / "xnnpack.pte", inputs)
    portable = run(etrt, d / "portable.pte", inputs)
    eager = npz_arrays(d / "expected.npz", "output")
    executorch_portable = npz_arrays(d / "executorch_portable.npz", "output")
    for i, got in enumerate(ours):
        assert np.isnan(eager[i]).any()
        assert_same_nan_and_inf(got, eager[i], f"{name} output {i} vs eager")
        assert_same_nan_and_inf(got, executorch_portable[i], f"{name} output {i} vs ExecuTorch portable")
        assert_same_nan_and_inf(got, portable[i], f"{name} output {i} vs etrt portable")
    [report] = [r for r in stats() if r["executes"] > 0]
    # XNNPACK ran first, found the invalid operation, and the run went to the reference code.
    assert report["xnnpack_invocations"] >= 1 and report["nan_reruns"] == 1, report


def test_finite_runs_stay_on_xnnpack(etrt, stats):
    """The check costs no rerun where nothing became NaN: the same programs on small inputs."""
    for name in NAMES:
        d = PROGRAMS / name
        inputs = [np.linspace(-1.0, 1.0, x.size, dtype=np.float32).reshape(x.shape) + 0.5 for x in
                  npz_arrays(d / "inputs.npz", "input")]
        for got, want in zip(run(etrt, d / "xnnpack.pte", inputs), run(etrt, d / "portable.pte", inputs)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)
    reports = [r for r in stats() if r["executes"] > 0]
    assert len(reports) == len(NAMES) and all(r["nan_reruns"] == 0 and r["reference_runs"] == 0 for r in reports), \
        reports


@pytest.mark.parametrize("model", REFERENCE_MODELS, ids=[m["name"] for m in REFERENCE_MODELS])
def test_reference_programs_never_run_twice(etrt, stats, model):
    """What the check costs on the reference programs' own inputs: no run is done again (the flag is read once
    per run, no intermediate is scanned)."""
    meta = json.loads((MODELS / model["dir"] / "meta.json").read_text())
    for method_name, spec in meta["methods"].items():
        method = etrt.load_program(MODELS / model["dir"] / "xnnpack.pte").load_method(method_name)
        for case in spec["cases"]:
            method.execute(npz_arrays(MODELS / model["dir"] / case["inputs_file"], "input"))
        del method
    reports = stats()
    assert sum(r["executes"] for r in reports) > 0
    assert all(r["nan_reruns"] == 0 for r in reports), reports


def huge_inputs(inputs, sign):
    out = []
    for x in inputs:
        if x.dtype != np.float32:
            out.append(x)
            continue
        big = np.full(x.shape, 3e38, np.float32)
        if sign == "alternating":
            big.reshape(-1)[1::2] = -3e38
        out.append(-big if sign == "-" else big)
    return out


@pytest.mark.parametrize("model", REFERENCE_MODELS, ids=[m["name"] for m in REFERENCE_MODELS])
def test_huge_finite_inputs_give_nan_where_executorch_portable_does(etrt, model):
    """+-3e38 inputs overflow inside the reference programs: the xnnpack plugin gives NaN exactly where
    ExecuTorch's portable runtime does, on the same program exported without delegates."""
    from executorch.runtime import Runtime

    meta = json.loads((MODELS / model["dir"] / "meta.json").read_text())
    checked = 0
    for method_name, spec in meta["methods"].items():
        inputs = npz_arrays(MODELS / model["dir"] / spec["cases"][0]["inputs_file"], "input")
        if not any(x.dtype == np.float32 for x in inputs):
            continue
        for sign in ("+", "-", "alternating"):
            values = huge_inputs(inputs, sign)
            method = etrt.load_program(MODELS / model["dir"] / "xnnpack.pte").load_method(method_name)
            ours = method.execute(values)
            del method
            theirs = Runtime.get().load_program(str(MODELS / model["dir"] / "portable.pte")).load_method(
                method_name).execute([torch.from_numpy(x.copy()) for x in values])
            for i, (got, want) in enumerate(zip(ours, theirs)):
                what = f"{model['name']}.{method_name} {sign}3e38 output {i}"
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want.numpy()), err_msg=what + ": NaN positions")
                checked += 1
    if model["name"] in ("small_cnn", "resnet_basic", "dynamic_mlp"):  # the three that lost their NaN
        assert checked > 0
