"""Fixtures shared by the XNNPACK plugin's pytest suites."""
import gc
import json

import pytest


@pytest.fixture
def stats(tmp_path, monkeypatch):
    """Lines the plugin appends per destroyed delegate (ETRT_XNNPACK_STATS)."""
    path = tmp_path / "xnnpack_stats.jsonl"
    monkeypatch.setenv("ETRT_XNNPACK_STATS", str(path))

    def read():
        gc.collect()
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return read
