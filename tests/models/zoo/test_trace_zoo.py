"""A bounded subset of tests/models/zoo/trace_zoo.py for ctest: one of ExecuTorch's example models
(portable: 32 instructions whose intermediate outputs the Inspector compares; XNNPACK-lowered programs'
dumps are checked by tests/etdump), exported with its ETRecord (cached in the build directory), traced by
`etrt run` and by ExecuTorch's runtime; ExecuTorch's Inspector must read etrt's ETDump as it reads
ExecuTorch's own (same operator instructions in the same order, each matched to the ETRecord, timed
once per run) and its numerical comparison must run on etrt's debug buffer."""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", HERE.parents[2]))
BUILD = Path(os.environ.get("ETRT_BUILD_DIR", SOURCE / "build"))
sys.path.insert(0, str(HERE))
import trace_zoo  # noqa: E402

OUT = BUILD / "zoo_traced"


def test_inspector_reads_etrt_dump_of_ds_cnn_as_it_reads_executorchs():
    model_dir = OUT / "ds_cnn" / "portable"
    model_dir.mkdir(parents=True, exist_ok=True)
    entry = trace_zoo.trace_one("ds_cnn", "portable", str(model_dir))
    assert entry.get("export", {"status": "exported"})["status"] == "exported", entry["export"]
    assert entry["executorch"]["status"] == "ran", entry["executorch"]
    assert entry["executorch_inspector"]["status"] == "inspected", entry["executorch_inspector"]
    assert trace_zoo.verdict(entry) == "ok", entry
    assert entry["same_calls"] is True
    ours, theirs = entry["etrt_inspector"], entry["executorch_inspector"]
    assert "gap_error" not in ours, ours["gap_error"]
    # The same intermediate outputs are compared for both runtimes, and etrt's agree with the reference graph.
    assert ours["gap_rows"] == theirs.get("gap_rows") and ours["gap_rows"] > 0
    assert ours["max_mse"] < 1e-8
