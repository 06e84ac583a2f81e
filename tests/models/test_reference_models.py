"""Checks the committed reference programs under tests/models/generated.

(a) Always (needs only numpy): every model listed in index.json has all of its
    files, meta.json agrees with index.json and with the arrays on disk, and
    ExecuTorch's outputs (executorch_*.npz) match the eager outputs
    (expected*.npz) within the model's tolerance.
(b) With ETRT_EXPORT_CHECK=1 (needs torch + executorch): runs
    export_models.py --check, which re-exports everything into a temporary
    directory and compares it with the committed files.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
GENERATED = Path(os.environ.get("ETRT_REFERENCE_MODELS", HERE / "generated"))
SCRIPT = HERE / "export_models.py"


def _index():
    with open(GENERATED / "index.json") as f:
        return json.load(f)


def _meta(name):
    with open(GENERATED / name / "meta.json") as f:
        return json.load(f)


INDEX = _index()
MODELS = [m["name"] for m in INDEX["models"]]
WHOLE_MODELS = [m["name"] for m in INDEX["models"] if m["kind"] == "model"]


def _close(actual, expected, rtol, atol):
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False
    if not np.issubdtype(expected.dtype, np.floating):
        return bool(np.array_equal(actual, expected))
    return bool(np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True))


def test_index_lists_the_reference_set():
    expected = {"mlp", "small_cnn", "mobilenet_v2_block", "resnet_basic", "transformer_encoder",
                "dynamic_mlp", "two_methods", "mutable_buffer"}
    assert expected <= set(WHOLE_MODELS)
    assert len(MODELS) == len(set(MODELS))
    assert INDEX["portable_operators"] == sorted({o for m in INDEX["models"] for o in m["operators"]})


def test_every_model_operator_has_a_single_op_program():
    used = {o for m in INDEX["models"] if m["kind"] == "model" for o in m["operators"]}
    covered = {o for m in INDEX["models"] if m["kind"] == "op" for o in m["operators"]}
    assert used - covered == set()


@pytest.mark.parametrize("name", MODELS)
def test_files_present_and_meta_consistent(name):
    entry = next(m for m in INDEX["models"] if m["name"] == name)
    d = GENERATED / entry["dir"]
    for fn in entry["files"]:
        assert (d / fn).is_file(), f"{name}: missing {fn}"
    meta = _meta(name)
    assert meta["name"] == name
    assert "portable.pte" in entry["files"]
    assert meta["operators"] == entry["operators"]
    assert set(meta["methods"]) == set(entry["methods"])
    for fn, size in meta["files"].items():
        assert (d / fn).stat().st_size == size, f"{name}/{fn}: size differs from meta.json"
    # .pte files are flatbuffers with the ExecuTorch file identifier.
    for pte in ("portable.pte", "xnnpack.pte"):
        if pte in entry["files"]:
            head = (d / pte).read_bytes()[:8]
            assert head[4:6] == b"ET", f"{name}/{pte}: not an ExecuTorch program"
    if meta["xnnpack"].get("exported"):
        assert "xnnpack.pte" in entry["files"]
    else:
        assert "xnnpack.pte" not in entry["files"]
    if meta["kind"] == "op":
        target = meta["target_op"]
        assert any(o == target or o.startswith(target + ".") for o in meta["operators"])


@pytest.mark.parametrize("name", MODELS)
def test_inputs_and_expected_match_meta(name):
    meta = _meta(name)
    d = GENERATED / name
    for mname, method in meta["methods"].items():
        assert method["operators"], f"{name}/{mname}: no operators recorded"
        for case in method["cases"]:
            inputs = np.load(d / case["inputs_file"])
            assert inputs.files == [f"input_{i}" for i in range(len(case["inputs"]))]
            for i, desc in enumerate(case["inputs"]):
                a = inputs[f"input_{i}"]
                assert list(a.shape) == desc["shape"] and str(a.dtype) == desc["dtype"]
            expected = np.load(d / case["expected_file"])
            assert expected.files == [f"output_{i}" for i in range(len(case["outputs"]))]
            for i, desc in enumerate(case["outputs"]):
                a = expected[f"output_{i}"]
                assert list(a.shape) == desc["shape"] and str(a.dtype) == desc["dtype"]


@pytest.mark.parametrize("name", MODELS)
def test_executorch_outputs_match_eager_within_tolerance(name):
    meta = _meta(name)
    d = GENERATED / name
    tol = meta["tolerance"]
    assert "executorch_run_errors" not in meta, meta.get("executorch_run_errors")
    flows = ["portable"] + (["xnnpack"] if meta["xnnpack"].get("exported") else [])
    for mname, method in meta["methods"].items():
        for case in method["cases"]:
            expected = np.load(d / case["expected_file"])
            assert set(case["executorch"]) == set(flows), f"{name}/{mname}/{case['name']}"
            for flow in flows:
                actual = np.load(d / case["executorch"][flow]["file"])
                assert actual.files == expected.files
                for k in expected.files:
                    assert _close(actual[k], expected[k], tol["rtol"], tol["atol"]), (
                        f"{name}/{mname}/{case['name']}/{flow}/{k}: ExecuTorch output differs from eager "
                        f"beyond rtol={tol['rtol']} atol={tol['atol']}")


def test_stateful_models_record_their_state():
    for name in ("mutable_buffer", "mutable_buffer_init"):
        meta = _meta(name)
        method = meta["methods"]["forward"]
        assert method["stateful"]
        assert [c["name"] for c in method["cases"]] == ["call0", "call1", "call2"]
        assert set(method["state"]["buffers_to_mutate"].values()) == {"count", "total"}
        assert len(method["state"]["write_back"]) == 2
        # Outputs change from call to call because the state carries over.
        outs = [np.load(GENERATED / name / c["expected_file"])["output_0"] for c in method["cases"]]
        assert not np.allclose(outs[0], outs[1])


def test_dynamic_mlp_cases_cover_the_bounds():
    meta = _meta("dynamic_mlp")
    method = meta["methods"]["forward"]
    assert [c["inputs"][0]["shape"][0] for c in method["cases"]] == [1, 5, 16]
    assert method["dynamic_shapes"][0]["0"]["max"] == 16


@pytest.mark.skipif(os.environ.get("ETRT_EXPORT_CHECK") != "1",
                    reason="set ETRT_EXPORT_CHECK=1 to re-export with torch/executorch")
def test_export_script_check():
    result = subprocess.run([sys.executable, str(SCRIPT), "--out", str(GENERATED), "--check"],
                            capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    assert "CHECK OK" in result.stdout
