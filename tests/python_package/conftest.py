"""Tests of the installed `etrt` wheel. scripts/test_python_package.sh builds the
wheel, installs it into a new venv and runs these from a copy in a temporary
directory (with a copy of the reference programs in ETRT_MODELS):

    ETRT_MODELS=/path/to/models  /path/to/venv/bin/python -m pytest --import-mode=importlib <copy of this dir>

They import `etrt` from the venv only (no checkout is on sys.path)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

MODELS = Path(os.environ.get("ETRT_MODELS", ""))


@pytest.fixture(scope="session")
def models_dir():
    assert MODELS.is_dir() and (MODELS / "index.json").is_file(), \
        f"ETRT_MODELS must name the reference programs (got {str(MODELS)!r})"
    return MODELS


@pytest.fixture(scope="session")
def package_dir():
    import etrt
    return Path(etrt.__file__).resolve().parent


def run_python(code, cwd, env=None, check=True):
    """Runs `code` in a fresh interpreter of this venv; returns the completed process."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=full_env)
    if check:
        assert result.returncode == 0, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result


def numbered(npz, prefix):
    """Arrays of an .npz saved as prefix_0, prefix_1, ... in order."""
    return [npz[f"{prefix}_{i}"] for i in range(len(npz.files))]


def reference_models():
    index = json.loads((MODELS / "index.json").read_text()) if MODELS.is_dir() else {"models": []}
    return index["models"]


def cases(model_dir, method):
    """(inputs, expected eager outputs, tolerance) per case of one method, in order."""
    meta = json.loads((model_dir / "meta.json").read_text())
    tolerance = meta["tolerance"]
    for case in meta["methods"][method]["cases"]:
        inputs = numbered(np.load(model_dir / case["inputs_file"]), "input")
        expected = numbered(np.load(model_dir / case["expected_file"]), "output")
        yield case["name"], inputs, expected, tolerance


def assert_close(actual, expected, rtol, atol, what):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    if np.issubdtype(expected.dtype, np.floating):
        finite = np.isfinite(expected)
        assert np.array_equal(actual[~finite], expected[~finite], equal_nan=True), f"{what}: non-finite values differ"
        np.testing.assert_allclose(actual[finite], expected[finite], rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
