"""Every reference program through etrt: outputs match eager PyTorch and
ExecuTorch's own runtime (outputs recorded by tests/models/export_models.py),
within each model's stated tolerance."""
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "tests" / "models" / "generated"
sys.path.insert(0, str(SOURCE / "tests" / "support"))
import etrt_ctypes  # noqa: E402

INDEX = json.loads((MODELS / "index.json").read_text())


@pytest.fixture(scope="module")
def etrt():
    return etrt_ctypes.Library()


def cases_of(model):
    meta = json.loads((MODELS / model["dir"] / "meta.json").read_text())
    for method, spec in meta["methods"].items():
        yield meta, method, spec


def load_arrays(path):
    with np.load(path) as data:
        return [data[f"{prefix}_{i}"] for prefix in ("input", "output") for i in range(len(data.files))
                if f"{prefix}_{i}" in data.files]


def assert_close(actual, expected, tolerance, what):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, expected {expected.dtype}"
    if np.issubdtype(expected.dtype, np.floating):
        bad = ~np.isclose(actual, expected, rtol=tolerance["rtol"], atol=tolerance["atol"], equal_nan=True)
        assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} elements differ; max |diff| "
                               f"{np.nanmax(np.abs(actual.astype(np.float64) - expected)):.3g}")
    else:
        assert np.array_equal(actual, expected), f"{what}: values differ"


@pytest.mark.parametrize("model", INDEX["models"], ids=[m["name"] for m in INDEX["models"]])
def test_portable_program_matches_eager_and_executorch(etrt, model):
    program = etrt.load_program(MODELS / model["dir"] / "portable.pte")
    checked = 0
    for meta, method_name, spec in cases_of(model):
        method = program.load_method(method_name)  # one method for all cases: state and resizing carry over
        for case in spec["cases"]:
            inputs = load_arrays(MODELS / model["dir"] / case["inputs_file"])
            outputs = method.execute(inputs)
            expected = load_arrays(MODELS / model["dir"] / case["expected_file"])
            reference = load_arrays(MODELS / model["dir"] / case["executorch"]["portable"]["file"])
            assert len(outputs) == len(expected)
            for i, (actual, want, theirs) in enumerate(zip(outputs, expected, reference)):
                label = f"{model['name']}.{method_name}[{case['name']}] output {i}"
                assert_close(actual, want, meta["tolerance"], label + " vs eager")
                assert_close(actual, theirs, meta["tolerance"], label + " vs ExecuTorch")
                checked += 1
    assert checked > 0


def test_inputs_whose_memory_a_run_reuses_must_be_set_again(etrt):
    # The transformer's token ids live in planned memory the planner hands to later tensors.
    model_dir = MODELS / "transformer_encoder"
    method = etrt.load_program(model_dir / "portable.pte").load_method("forward")
    inputs = load_arrays(model_dir / "inputs.npz")
    first = method.execute(inputs)
    with pytest.raises(etrt_ctypes.EtrtError, match="input 0 must be set again before each execute"):
        method.execute()
    again = method.execute(inputs)  # setting them again is all it takes
    assert np.array_equal(first[0], again[0])


def test_inputs_the_run_does_not_overwrite_stay_set(etrt):
    model_dir = MODELS / "op_add"
    method = etrt.load_program(model_dir / "portable.pte").load_method("forward")
    inputs = load_arrays(model_dir / "inputs_forward.npz")
    first = method.execute(inputs)
    assert np.array_equal(method.execute()[0], first[0])
