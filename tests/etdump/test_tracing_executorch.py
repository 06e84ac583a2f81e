"""ETDump and Chrome traces written by `etrt run`, read by ExecuTorch's own tools.

The programs in models/ (export_traced_models.py) come with their ETRecords:
plain (portable kernels), xnnpack (delegated), multi (two methods), dynamic (a
dynamic batch). For each, `etrt run --etdump --debug-buffer --trace` must give
files that ExecuTorch's deserializer and Inspector read, listing every
operator instruction in order, with debug values equal to the outputs.
"""
import io
import json
import os
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

BUILD = os.environ.get("ETRT_BUILD_DIR")
MODELS = Path(__file__).resolve().parent / "models"
pytestmark = pytest.mark.skipif(BUILD is None, reason="run through ctest (ETRT_BUILD_DIR)")
RUNS = 2


def etrt(*args, check=True):
    result = subprocess.run([str(Path(BUILD) / "bin" / "etrt"), *map(str, args)], capture_output=True, text=True,
                            env={**os.environ, "ETRT_PLUGIN_PATH": ""})
    if check:
        assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def program_instructions(pte: Path, method: str):
    """[(instruction index, name)] of the method's kernel and delegate calls, in order."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    program = deserialize_pte_binary(pte.read_bytes())
    program = getattr(program, "program", program)
    plan = next(p for p in program.execution_plan if p.name == method)
    out = []
    for index, instruction in enumerate(plan.chains[0].instructions):
        args = instruction.instr_args
        kind = type(args).__name__
        if kind == "KernelCall":
            op = plan.operators[args.op_index]
            out.append((index, op.name + ("." + op.overload if op.overload else "")))
        elif kind == "DelegateCall":
            out.append((index, "DELEGATE_CALL"))
    return out


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """{(model, method): (etdump, debug buffer, trace, stdout, npz)} from one CLI run each."""
    out = {}
    d = tmp_path_factory.mktemp("traced")
    for model, method in [("plain", "forward"), ("xnnpack", "forward"), ("multi", "forward"), ("multi", "encode"),
                          ("dynamic", "forward")]:
        stem = d / f"{model}_{method}"
        inputs = np.load(MODELS / f"{model}.npz")
        npy = stem.with_suffix(".input.npy")
        np.save(npy, inputs["input_0"])
        result = etrt("run", MODELS / f"{model}.pte", "--method", method, "--input", npy, "--iterations", RUNS,
                      "--profile", "--etdump", stem.with_suffix(".etdp"), "--debug-buffer", stem.with_suffix(".bin"),
                      "--trace", stem.with_suffix(".json"), "--output-dir", stem)
        out[(model, method)] = (stem.with_suffix(".etdp"), stem.with_suffix(".bin"), stem.with_suffix(".json"),
                                result.stdout, stem)
    return out


CASES = [("plain", "forward"), ("xnnpack", "forward"), ("multi", "forward"), ("multi", "encode"),
         ("dynamic", "forward")]


@pytest.mark.parametrize("model,method", CASES)
def test_deserializer_reads_one_block_per_run_listing_every_instruction(traced, model, method):
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

    etdump = traced[(model, method)][0]
    dump = deserialize_from_etdump_flatcc(etdump.read_bytes())
    assert [run.name for run in dump.run_data] == ["Execute"] * RUNS
    expected = program_instructions(MODELS / f"{model}.pte", method)
    assert expected, "the program has calls"
    for run in dump.run_data:
        profiles = [e.profile_event for e in run.events if e.profile_event is not None]
        assert profiles[-1].name == "Method::execute"
        calls = [(p.instruction_id, p.name) for p in profiles[:-1] if p.delegate_debug_id_int == -1
                 and not p.delegate_debug_id_str]
        assert calls == expected
        for p in profiles:
            assert p.end_time >= p.start_time
            assert profiles[-1].start_time <= p.start_time and p.end_time <= profiles[-1].end_time


@pytest.mark.parametrize("model,method", CASES)
def test_method_output_debug_event_equals_what_the_method_returned(traced, model, method):
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

    etdump, buffer, _, _, outdir = traced[(model, method)]
    dump = deserialize_from_etdump_flatcc(etdump.read_bytes())
    data = buffer.read_bytes()
    outputs = [e.debug_event for e in dump.run_data[-1].events
               if e.debug_event is not None and e.debug_event.debug_entry.output is not None
               and e.debug_event.debug_entry.output.bool_val]
    assert len(outputs) == 1
    tensor = outputs[0].debug_entry.tensor
    expected = np.load(outdir / "output_0.npy")
    assert list(tensor.sizes) == list(expected.shape)
    got = np.frombuffer(data, dtype=np.float32, count=expected.size, offset=tensor.offset).reshape(expected.shape)
    np.testing.assert_array_equal(got, expected)
    # The last operator's output is the same tensor.
    last_op = [e.debug_event for e in dump.run_data[-1].events
               if e.debug_event is not None and e.debug_event.instruction_id >= 0][-1]
    t = last_op.debug_entry.tensor if last_op.debug_entry.tensor is not None else \
        last_op.debug_entry.tensor_list.tensors[-1]
    last = np.frombuffer(data, dtype=np.float32, count=expected.size, offset=t.offset).reshape(expected.shape)
    np.testing.assert_array_equal(last, expected)


@pytest.mark.parametrize("model", ["plain", "xnnpack", "dynamic"])
def test_inspector_with_etrecord_lists_etrt_operators_with_timings(traced, model):
    from executorch.devtools import Inspector

    etdump, buffer, _, _, _ = traced[(model, "forward")]
    inspector = Inspector(etdump_path=str(etdump), etrecord=str(MODELS / f"{model}.etrecord"),
                          debug_buffer_path=str(buffer))
    blocks = [b for b in inspector.event_blocks if b.name == "Execute"]
    assert len(blocks) == 1
    events = blocks[0].events
    expected = program_instructions(MODELS / f"{model}.pte", "forward")
    calls = [(e._instruction_id, e.name) for e in events if e.name != "Method::execute"
             and e.delegate_debug_identifier is None]
    assert calls == expected
    for event in events:
        assert event.perf_data is not None and len(event.perf_data.raw) == RUNS
    # Operator instructions map to the ETRecord. Events a delegate reports from inside its call cannot: ExecuTorch's
    # XNNPACK lowering records no delegate map (its ETRecord's delegate_map is {}), for its own runtime too.
    operators = [e for e in events if e.name not in ("Method::execute", "DELEGATE_CALL")
                 and e.delegate_debug_identifier is None]
    for event in operators:
        assert event.debug_handles is not None, f"{event.name} was not matched to the ETRecord"
    delegated = [e for e in events if e.delegate_debug_identifier is not None]
    assert bool(delegated) == (model == "xnnpack"), [e.name for e in delegated]
    for event in delegated:
        assert event.is_delegated_op and event.delegate_backend_name == "XnnpackBackend", event.name
    table = io.StringIO()
    inspector.print_data_tabular(file=table)
    table = table.getvalue()
    for _, name in expected:
        assert name in table


@pytest.mark.parametrize("model", ["plain", "dynamic"])
def test_inspector_numerical_comparison_works_on_etrt_debug_buffer(traced, model):
    from executorch.devtools import Inspector

    etdump, buffer, _, _, _ = traced[(model, "forward")]
    inspector = Inspector(etdump_path=str(etdump), etrecord=str(MODELS / f"{model}.etrecord"),
                          debug_buffer_path=str(buffer))
    gaps = inspector.calculate_numeric_gap("MSE")
    assert len(gaps) > 0
    # etrt's intermediate outputs agree with the reference graph's.
    assert float(np.max(np.asarray(gaps["gap"].tolist(), dtype=np.float64))) < 1e-8


@pytest.mark.parametrize("model,method", CASES)
def test_chrome_trace_is_valid_json_properly_nested_on_every_thread(traced, model, method):
    trace = json.loads(traced[(model, method)][2].read_text())
    spans = check_chrome_nesting(trace)
    assert 0 in spans, "the method's thread has a track"
    names = {name for _, _, name in spans[0]}
    assert "Method::execute" in names
    threads = {e["tid"] for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert set(spans) <= threads, "every track is named"


def test_profile_table_lists_operators_sorted_by_time(traced):
    stdout = traced[("plain", "forward")][3]
    lines = stdout[stdout.index("profile of method 'forward'"):].splitlines()
    assert lines[1].split()[:3] == ["operator", "plugin", "calls"]
    rows = [line.split() for line in lines[2:] if line.startswith("  ") and "%" in line]
    expected = {name for _, name in program_instructions(MODELS / "plain.pte", "forward")}
    assert {row[0] for row in rows} == expected
    totals = [float(row[-3]) for row in rows]
    assert totals == sorted(totals, reverse=True)
    assert all(row[1] == "kernels_optimized" for row in rows if row[0].startswith("aten::"))
    assert sum(float(row[-1].rstrip("%")) for row in rows) <= 100.5


def test_too_small_debug_buffer_is_a_clear_error(tmp_path):
    inputs = np.load(MODELS / "plain.npz")
    np.save(tmp_path / "x.npy", inputs["input_0"])
    result = etrt("run", MODELS / "plain.pte", "--input", tmp_path / "x.npy", "--iterations", 1,
                  "--etdump", tmp_path / "a.etdp", "--debug-buffer", tmp_path / "a.bin", "--debug-buffer-size", 64,
                  check=False)
    assert result.returncode == 1
    assert "too small" in result.stderr and "needed" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "terminate" not in result.stderr


def test_debug_buffer_without_etdump_is_a_usage_error(tmp_path):
    result = etrt("run", MODELS / "plain.pte", "--debug-buffer", tmp_path / "a.bin", check=False)
    assert result.returncode == 2
    assert "--debug-buffer needs --etdump" in result.stderr


def check_chrome_nesting(trace):
    """{tid: [(start, end, name)]} of the trace's spans, after checking they nest on every thread."""
    spans = defaultdict(list)
    for event in trace["traceEvents"]:
        if event["ph"] == "X":
            spans[event["tid"]].append((float(event["ts"]), float(event["ts"]) + float(event["dur"]), event["name"]))
    for tid, events in spans.items():
        events.sort(key=lambda e: (e[0], -e[1]))
        stack = []
        for start, end, name in events:
            while stack and stack[-1][1] <= start:
                stack.pop()
            assert not stack or end <= stack[-1][1] + 1e-3, f"thread {tid}: {name} overlaps {stack[-1][2]}"
            stack.append((start, end, name))
    return spans


def test_xnnpack_reports_each_node_it_runs_and_each_runtime_nested_in_its_delegate_call(tmp_path):
    """transformer_encoder/xnnpack.pte: the plugin runs transposes, batch matmuls and GELU itself between
    XNNPACK runtimes; each becomes a delegate event inside the DELEGATE_CALL that ran it."""
    from executorch.devtools import Inspector
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

    pte = Path(__file__).resolve().parents[1] / "models" / "generated" / "transformer_encoder" / "xnnpack.pte"
    etrt("run", pte, "--iterations", RUNS, "--etdump", tmp_path / "t.etdp", "--trace", tmp_path / "t.json")
    dump = deserialize_from_etdump_flatcc((tmp_path / "t.etdp").read_bytes())
    assert len(dump.run_data) == RUNS
    names_per_run = []
    for run in dump.run_data:
        profiles = [e.profile_event for e in run.events if e.profile_event is not None]
        calls = {p.instruction_id: p for p in profiles if p.name == "DELEGATE_CALL"}
        assert calls, "the program delegates"
        nodes = [p for p in profiles if p.delegate_debug_id_int != -1 or p.delegate_debug_id_str]
        signatures = [(p.instruction_id, p.delegate_debug_id_int, p.delegate_debug_id_str) for p in nodes]
        assert len(set(signatures)) == len(signatures), "one event per node and runtime (the Inspector needs it)"
        for p in nodes:
            call = calls[p.instruction_id]
            assert call.start_time <= p.start_time <= p.end_time <= call.end_time, p.name
        for instruction, call in calls.items():  # the node events of one call run one after another
            inside = sorted((p.start_time, p.end_time) for p in nodes if p.instruction_id == instruction)
            assert all(a[1] <= b[0] for a, b in zip(inside, inside[1:]))
            assert sum(end - start for start, end in inside) <= call.end_time - call.start_time
        names_per_run.append([p.name for p in nodes])
        identifiers = sorted(str(p.delegate_debug_id_int) if p.delegate_debug_id_int != -1 else p.delegate_debug_id_str
                             for p in nodes)
    assert names_per_run[0] == names_per_run[1], "every run reports the same nodes"
    names = names_per_run[0]
    for kind in ("StaticTranspose", "BatchMatrixMultiply", "Gelu"):  # run by the plugin, not by XNNPACK
        assert kind in names, names
    assert any(name.startswith("XNNPACK runtime 0: FullyConnected") for name in names), names
    # The Inspector lists them as delegated operators of their call; the Chrome trace shows them, nested.
    inspector = Inspector(etdump_path=str(tmp_path / "t.etdp"))
    block = [b for b in inspector.event_blocks if b.name == "Execute"][0]
    delegated = [e for e in block.events if e.is_delegated_op]
    assert sorted(str(e.delegate_debug_identifier) for e in delegated) == identifiers  # its name for them
    assert all(len(e.perf_data.raw) == RUNS for e in delegated)
    spans = check_chrome_nesting(json.loads((tmp_path / "t.json").read_text()))
    assert set(names) <= {name for _, _, name in spans[0]}


def debug_events_per_instruction(etdump: Path, data: bytes):
    """{instruction: [(sizes, float32 values) or a tensor list's [...] ]} from a dump's last run."""
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

    def values(tensor):
        count = int(np.prod(tensor.sizes)) if tensor.sizes else 1
        dtype = np.int64 if tensor.scalar_type.name == "LONG" else np.float32
        if count == 0:  # nothing copied: the offset means nothing (ExecuTorch leaves it past the buffer)
            return (list(tensor.sizes), [])
        return (list(tensor.sizes), np.frombuffer(data, dtype=dtype, count=count, offset=tensor.offset).tolist())

    out = defaultdict(list)
    for event in deserialize_from_etdump_flatcc(etdump.read_bytes()).run_data[-1].events:
        debug = event.debug_event
        if debug is None or debug.instruction_id < 0 or (debug.debug_entry.output and debug.debug_entry.output.bool_val):
            continue
        entry = debug.debug_entry
        out[debug.instruction_id].append(values(entry.tensor) if entry.tensor is not None else
                                         [values(t) for t in entry.tensor_list.tensors])
    return dict(out)


@pytest.mark.parametrize("model,inputs", [("op_native_batch_norm", "inputs.npz"),
                                          ("op_max_pool2d_with_indices", "inputs_forward.npz")])
def test_a_kernel_with_several_outputs_logs_each_as_executorch_does(tmp_path, model, inputs):
    """ExecuTorch's kernel wrappers log each out argument of a kernel as a debug event of its own (the
    TensorList of outputs that ends the arguments is not logged); the Inspector's numerical comparison
    expects one tensor per output. etrt's debug events are the same as ExecuTorch's runtime's."""
    import torch
    from executorch.runtime import Runtime

    pte = Path(__file__).resolve().parents[1] / "models" / "generated" / model / "portable.pte"
    x = np.load(pte.parent / inputs)["input_0"]
    np.save(tmp_path / "x.npy", x)
    etrt("run", pte, "--input", tmp_path / "x.npy", "--iterations", 1, "--etdump", tmp_path / "etrt.etdp",
         "--debug-buffer", tmp_path / "etrt.bin")
    program = Runtime.get().load_program(pte, enable_etdump=True, debug_buffer_size=1 << 20)
    program.load_method("forward").execute([torch.from_numpy(x)])
    program.write_etdump_result_to_file(str(tmp_path / "et.etdp"), str(tmp_path / "et.bin"))
    ours = debug_events_per_instruction(tmp_path / "etrt.etdp", (tmp_path / "etrt.bin").read_bytes())
    theirs = debug_events_per_instruction(tmp_path / "et.etdp", (tmp_path / "et.bin").read_bytes())
    assert any(len(events) > 1 for events in theirs.values()), "the program has a kernel with several outputs"
    assert ours.keys() == theirs.keys()
    for instruction, events in theirs.items():
        assert [e[0] for e in ours[instruction]] == [e[0] for e in events], f"instruction {instruction}"
        for (_, a), (_, b) in zip(ours[instruction], events):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("model", ["plain", "xnnpack"])
def test_a_cpp_hosts_dump_gives_the_inspector_its_tables_and_numerical_comparison(tmp_path, model):
    """The same round trip from a C++ host (traced_host.cpp: etrt::Program, etrt::TraceSession,
    Method::set_trace_session), fed the ETRecord's representative input."""
    from executorch.devtools import Inspector

    host = os.environ.get("ETRT_TRACED_HOST")
    assert host, "run through ctest (ETRT_TRACED_HOST)"
    x = np.load(MODELS / f"{model}.npz")["input_0"].astype(np.float32)
    (tmp_path / "x.f32").write_bytes(x.tobytes())
    result = subprocess.run([host, str(MODELS / f"{model}.pte"), "forward", str(tmp_path / "x.f32"), str(RUNS),
                             str(tmp_path / "h.etdp"), str(tmp_path / "h.bin")], capture_output=True, text=True,
                            env={**os.environ, "ETRT_PLUGIN_PATH": ""})
    assert result.returncode == 0, result.stderr
    inspector = Inspector(etdump_path=str(tmp_path / "h.etdp"), etrecord=str(MODELS / f"{model}.etrecord"),
                          debug_buffer_path=str(tmp_path / "h.bin"))
    (block,) = [b for b in inspector.event_blocks if b.name == "Execute"]
    expected = program_instructions(MODELS / f"{model}.pte", "forward")
    calls = [(e._instruction_id, e.name) for e in block.events if e.name != "Method::execute"
             and e.delegate_debug_identifier is None]
    assert calls == expected
    assert all(len(e.perf_data.raw) == RUNS for e in block.events if e.perf_data is not None)
    table = io.StringIO()
    inspector.print_data_tabular(file=table)
    assert all(name in table.getvalue() for _, name in expected)
    gaps = inspector.calculate_numeric_gap("MSE")
    assert len(gaps) > 0
    assert float(np.max(np.asarray(gaps["gap"].tolist(), dtype=np.float64))) < 1e-8
