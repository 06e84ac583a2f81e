"""Fixtures shared by the XNNPACK plugin's pytest suites."""
import gc
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(SOURCE / "tests" / "support"))
import etrt_ctypes  # noqa: E402


@pytest.fixture(scope="module")
def etrt():
    """libetrt through ctypes (test_xnnpack.py has its own, with more entry points)."""
    return etrt_ctypes.Library()


def npz_arrays(path, prefix):
    """prefix_0, prefix_1, ... of an .npz, in order."""
    with np.load(path) as data:
        return [data[f"{prefix}_{i}"] for i in range(len(data.files))]


@pytest.fixture
def stats(tmp_path, monkeypatch):
    """Lines the plugin appends per destroyed delegate (ETRT_XNNPACK_STATS)."""
    path = tmp_path / "xnnpack_stats.jsonl"
    monkeypatch.setenv("ETRT_XNNPACK_STATS", str(path))

    def read():
        gc.collect()
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return read
