"""etrt's ETDump writer, read by ExecuTorch's own deserializer and Inspector.

etdump_sample writes a dump with a "Default" block and two "Execute" blocks
(two operators each, with their outputs in a debug buffer); ExecuTorch's tools
must see exactly that.
"""
import os
import subprocess

import numpy as np
import pytest

SAMPLE = os.environ.get("ETRT_ETDUMP_SAMPLE")
pytestmark = pytest.mark.skipif(SAMPLE is None, reason="run through ctest (ETRT_ETDUMP_SAMPLE)")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("etdump")
    dump, buffer = d / "sample.etdp", d / "sample.bin"
    subprocess.run([SAMPLE, str(dump), str(buffer)], check=True)
    return dump, buffer


def test_executorch_deserializer_reads_every_block_and_event(files):
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

    dump = deserialize_from_etdump_flatcc(files[0].read_bytes())
    assert dump.version == 0
    assert [run.name for run in dump.run_data] == ["Default", "Execute", "Execute"]
    execute = dump.run_data[1]
    profiles = [e.profile_event for e in execute.events if e.profile_event is not None]
    debugs = [e.debug_event for e in execute.events if e.debug_event is not None]
    assert [p.name for p in profiles] == ["native_call_addmm.out", "native_call_relu.out", "Method::execute"]
    assert [p.instruction_id for p in profiles] == [0, 1, -1]
    assert (profiles[0].start_time, profiles[0].end_time) == (10000, 10700)
    assert [d.instruction_id for d in debugs] == [0, 1]
    tensor = debugs[1].debug_entry.tensor
    assert list(tensor.sizes) == [2, 2] and list(tensor.strides) == [2, 1]
    assert tensor.offset == 64


def test_inspector_groups_operator_events_and_reads_the_debug_buffer(files):
    from executorch.devtools import Inspector

    inspector = Inspector(etdump_path=str(files[0]), debug_buffer_path=str(files[1]))
    blocks = {block.name: block for block in inspector.event_blocks}
    assert "Execute" in blocks
    events = {event.name: event for event in blocks["Execute"].events}
    relu = events["native_call_relu.out"]
    # Two runs of each operator, 700 ns each (the Inspector reports ms by default).
    assert len(relu.perf_data.raw) == 2
    assert relu.perf_data.raw == pytest.approx([0.0007, 0.0007])
    # Debug values: instruction 1's output is [1, 2, 7, -1.5] in every run.
    outputs = relu.debug_data
    assert len(outputs) >= 1
    last = np.asarray(outputs[-1]).reshape(-1)
    np.testing.assert_array_equal(last, np.array([1, 2, 7, -1.5], dtype=np.float32))
