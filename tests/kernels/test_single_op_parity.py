"""Single-operator programs exported by ExecuTorch (export_single_ops.py, cached
in the build directory) run in etrt and match eager PyTorch, and ExecuTorch's
own runtime where its Python runtime has the operator."""
import importlib.util
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", HERE.parents[1]))
BUILD = Path(os.environ.get("ETRT_BUILD_DIR", SOURCE / "build"))
sys.path.insert(0, str(SOURCE / "tests" / "support"))
import etrt_ctypes  # noqa: E402

# Cases whose operator ExecuTorch's to_edge decomposes whatever it is told; the
# kernel is covered by the gtests, the program still checks the result.
DECOMPOSED_BY_EXECUTORCH = {"unbind": "to_edge always turns unbind into slice_copy + squeeze_copy"}
# Where ExecuTorch 1.5.1's own kernel disagrees with eager PyTorch (etrt follows eager, checked above).
EXECUTORCH_DIVERGES = {"remainder_int": "ExecuTorch's integer remainder keeps the dividend's sign (C's %), "
                                        "PyTorch's takes the divisor's",
                       "pow_scalar_0.5": "ExecuTorch calls C's pow (pow(-inf, 0.5) = inf), PyTorch takes sqrt (NaN)",
                       "pow_scalar_-0.5": "ExecuTorch calls C's pow (pow(-inf, -0.5) = 0), PyTorch takes rsqrt (NaN)"}
# Looser tolerances where the reference computes in another order or precision.
TOLERANCE = {"group_norm": 1e-4, "batch_norm_batch_stats": 1e-4, "upsample_bilinear": 1e-5,
             "upsample_bilinear_corners": 1e-5, "var_mean": 1e-5, "choose_qparams_per_token": 1e-6}


def _export():
    spec = importlib.util.spec_from_file_location("export_single_ops", HERE / "export_single_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.export_all(BUILD / "single_op_programs")


PROGRAMS = _export()
INDEX = json.loads((PROGRAMS / "index.json").read_text())


@pytest.fixture(scope="module")
def etrt():
    return etrt_ctypes.Library()


def arrays(name, prefix):
    with np.load(PROGRAMS / f"{name}.npz") as data:
        return [data[f"{prefix}_{i}"] for i in range(len(data.files)) if f"{prefix}_{i}" in data.files]


def assert_matches(actual, expected, tol, what):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    if np.issubdtype(expected.dtype, np.floating):
        ok = np.isclose(actual.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol, equal_nan=True)
        assert ok.all(), (f"{what}: {(~ok).sum()} of {ok.size} differ, max |diff| "
                          f"{np.nanmax(np.abs(actual.astype(np.float64) - expected)):.3g}")
    else:
        assert np.array_equal(actual.astype(np.int64), expected.astype(np.int64)), f"{what}: values differ"


@pytest.mark.parametrize("name", sorted(INDEX))
def test_etrt_matches_eager(etrt, name):
    case = INDEX[name]
    assert "export_error" not in case, f"{name}: ExecuTorch could not export it: {case['export_error']}"
    if name not in DECOMPOSED_BY_EXECUTORCH:
        assert case["operator"] in case["operators"], f"{name}: {case['operator']} is not in {case['operators']}"
    outputs = etrt.load_program(PROGRAMS / f"{name}.pte").load_method("forward").execute(arrays(name, "input"))
    expected = arrays(name, "output")
    assert len(outputs) == len(expected)
    for i, (actual, want) in enumerate(zip(outputs, expected)):
        assert actual.dtype == want.dtype, f"{name} output {i}: dtype {actual.dtype}, expected {want.dtype}"
        assert_matches(actual, want, TOLERANCE.get(name, 1e-6 if want.dtype == np.float64 else 2e-6),
                       f"{name} output {i} vs eager")


@pytest.fixture(scope="module")
def executorch_results():
    spec = importlib.util.spec_from_file_location("export_single_ops", HERE / "export_single_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.executorch_results(PROGRAMS)


@pytest.mark.parametrize("name", sorted(INDEX))
def test_etrt_matches_executorch_runtime(etrt, executorch_results, name):
    if name in EXECUTORCH_DIVERGES:
        pytest.skip(f"ExecuTorch diverges from eager here: {EXECUTORCH_DIVERGES[name]}")
    status = executorch_results.get(name, "not run")
    if status != "ran":
        pytest.skip(f"ExecuTorch's Python runtime cannot run it: {status}")
    with np.load(PROGRAMS / f"{name}.executorch.npz") as data:
        theirs = [data[f"output_{i}"] for i in range(len(data.files))]
    ours = etrt.load_program(PROGRAMS / f"{name}.pte").load_method("forward").execute(arrays(name, "input"))
    assert len(ours) == len(theirs)
    for i, (actual, want) in enumerate(zip(ours, theirs)):
        assert_matches(actual, want, TOLERANCE.get(name, 1e-5), f"{name} output {i} vs ExecuTorch")
