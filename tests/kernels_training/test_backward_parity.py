"""The backward operators of kernels_training, one operator per program (export_backward_ops.py, cached in
the build directory), against eager PyTorch's autograd and against ExecuTorch's portable kernels.

Tolerance: a gradient entry is a sum of up to N*OH*OW (grad_weight) or Cout*KH*KW (grad_input) products, and
the three implementations add them in different orders, so entries are compared relative to the largest
magnitude of the expected tensor: |ours - theirs| <= 1e-5 * max|theirs| (float32; 1e-12 for float64).
Max pooling moves values without arithmetic except where windows overlap: exact unless they do.
"""
import importlib.util
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

_spec = importlib.util.spec_from_file_location("export_backward_ops", HERE / "export_backward_ops.py")
_export = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_export)
PROGRAMS = BUILD / "backward_op_programs"
INDEX = _export.export_all(str(PROGRAMS))
# ExecuTorch 1.5.1's portable convolution_backward refuses 1-D convolutions ("Only 2D Convolution Backward
# supported for now"); etrt runs them as 2-D with H = 1 and is checked against eager above.
EXECUTORCH_REFUSES = {"conv1d"}


def case_arrays(name):
    with np.load(PROGRAMS / f"{name}.npz") as data:
        inputs = [data[f"input_{i}"] for i in range(3)]
        outputs = [data[f"output_{i}"] for i in range(len(data.files) - 3)]
    return inputs, outputs


def assert_close(actual, expected, what):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, expected {expected.dtype}"
    scale = max(1.0, float(np.abs(expected).max()))
    tol = (1e-12 if expected.dtype == np.float64 else 1e-5) * scale
    diff = float(np.abs(actual.astype(np.float64) - expected.astype(np.float64)).max())
    assert diff <= tol, f"{what}: max |diff| {diff:.3g} above {tol:.3g}"


@pytest.fixture(scope="module")
def etrt():
    return etrt_ctypes.Library()


@pytest.mark.parametrize("name", sorted(INDEX))
def test_matches_eager_autograd(etrt, name):
    inputs, expected = case_arrays(name)
    program = etrt.load_program(PROGRAMS / f"{name}.pte")
    outputs = program.load_method("forward").execute(inputs)
    assert len(outputs) == len(expected)
    for i, (ours, want) in enumerate(zip(outputs, expected)):
        assert_close(ours, want, f"{name} output {i} vs eager autograd")


@pytest.mark.parametrize("name", sorted(set(INDEX) - EXECUTORCH_REFUSES))
def test_matches_executorch_kernel(etrt, name):
    import torch
    from executorch.extension.pybindings.portable_lib import _load_for_executorch

    inputs, _ = case_arrays(name)
    theirs = [t.numpy() for t in _load_for_executorch(str(PROGRAMS / f"{name}.pte")).forward(
        [torch.from_numpy(a) for a in inputs])]
    ours = etrt.load_program(PROGRAMS / f"{name}.pte").load_method("forward").execute(inputs)
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert_close(a, b, f"{name} output {i} vs ExecuTorch")


def plugin_states(etrt):
    import ctypes
    import json
    etrt.lib.et_report_json.restype = ctypes.c_void_p
    etrt.lib.et_string_free.argtypes = [ctypes.c_void_p]
    text = etrt.lib.et_report_json()
    report = json.loads(ctypes.string_at(text).decode())
    etrt.lib.et_string_free(text)
    return {p["name"]: p["state"] for p in report["plugins"]}


def test_plugin_loaded_only_for_backward_operators():
    """A fresh process: an inference program leaves kernels_training unopened, a backward one opens it."""
    import subprocess
    script = f"""
import sys; sys.path.insert(0, {str(SOURCE / "tests" / "support")!r}); sys.path.insert(0, {str(HERE)!r})
import etrt_ctypes, test_backward_parity as t
lib = etrt_ctypes.Library()
lib.load_program({str(PROGRAMS / "forward_only.pte")!r}).load_method("forward")
before = t.plugin_states(lib).get("kernels_training")
lib.load_program({str(PROGRAMS / "max_pool2d_cifar.pte")!r}).load_method("forward")
print(before, t.plugin_states(lib).get("kernels_training"))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert out[-2:] == ["declared", "loaded"], out
