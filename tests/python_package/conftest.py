"""Tests of the installed `etrt` wheel. Run them with the venv's python from a
directory holding no checkout, pointing at the reference models:

    ETRT_MODELS=/path/to/tests/models/generated  /tmp/etrt-venv/bin/python -m pytest <this dir>

They import `etrt` from site-packages only (the checkout is never on sys.path)."""
import os
from pathlib import Path

import pytest

MODELS = Path(os.environ.get("ETRT_MODELS", Path(__file__).resolve().parents[1] / "models" / "generated"))


@pytest.fixture(scope="session")
def models_dir():
    if not MODELS.is_dir():
        pytest.skip(f"reference models not found at {MODELS} (set ETRT_MODELS)")
    return MODELS
