"""XNNPACK blobs crafted from the reference programs' own, field by field (blob_edit.py), and run on etrt in a
child process (isolated.py), so a crash fails the test instead of killing pytest:
- a node's output that loses its last reader (a reader redirected to another value of the same shape): etrt
  computes the graph as ExecuTorch's runtime does on the same file, for each node kind found as the producer;
- a union whose type names a member while its table is gone (the flatbuffer verifier accepts that): method load
  fails naming the value or node, for each of the blob's three unions."""
import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from blob_edit import NO_VALUE, OPERATION_NAMES, blobs
from isolated import Job, run_isolated

SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "tests" / "models" / "generated"
QUANTIZED = SOURCE / "tests" / "models" / "generated_q"
INDEX = json.loads((MODELS / "index.json").read_text())["models"]
QUANTIZATION_NAMES = ["NONE", "PerChannel", "PerTensor", "PerTokenDynamic", "PerChannelGroup"]
VALUE_KIND_NAMES = ["NONE", "TensorValue", "QuantizedTensorValue"]


def npz(path, prefix):
    with np.load(path) as data:
        return [data[f"{prefix}_{i}"] for i in range(len(data.files))]


def single_method_models():
    for model in INDEX:
        d = MODELS / model["dir"]
        if not (d / "xnnpack.pte").exists():
            continue
        meta = json.loads((d / "meta.json").read_text())
        if list(meta["methods"]) == ["forward"]:
            yield d, meta


def dead_output_mutants():
    """(label, producer kind, mutated .pte bytes, inputs, tolerance): one per kind of node whose output is made
    to lose its only reader, that reader now reading an earlier float value of the same shape."""
    found = {}
    for d, meta in single_method_models():
        data = (d / "xnnpack.pte").read_bytes()
        inputs = npz(d / meta["methods"]["forward"]["cases"][0]["inputs_file"], "input")
        for blob_index, blob in enumerate(blobs(bytearray(data))):
            values = {v.id: v for v in blob.values()}
            nodes = blob.nodes()
            producer = {n.output(): k for k, n in enumerate(nodes) if n.output_field is not None}
            reads = Counter(v for n in nodes for v in n.inputs() if v != NO_VALUE)
            available = [v.id for v in values.values() if v.io == 1 and v.kind == 1]
            for k, n in enumerate(nodes):
                for slot, v in enumerate(n.inputs()):
                    if v not in producer or reads[v] != 1 or values[v].io == 2 or values[v].kind != 1:
                        continue
                    kind = nodes[producer[v]].kind
                    other = [u for u in available if u != v and values[u].dims == values[v].dims]
                    if kind in found or not other:
                        continue
                    mutant = bytearray(data)
                    [edited] = [b for b in blobs(mutant) if b.start == blob.start]
                    edited.nodes()[k].set_input(slot, other[0])
                    label = (f"{d.name} blob {blob_index}: node {k} ({n.kind}) reads value {other[0]} instead of "
                             f"{v}, the output of node {producer[v]} ({kind})")
                    found[kind] = (label, kind, bytes(mutant), inputs, meta["tolerance"])
                available.extend([n.output()] if n.output_field is not None else [])
    return list(found.values())


def executorch_outputs(path, inputs):
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(str(path)).load_method("forward")
    return [o.numpy() for o in method.execute([torch.from_numpy(x.copy()) for x in inputs])]


def test_a_value_nothing_reads_is_computed_as_executorch_does(tmp_path):
    mutants = dead_output_mutants()
    jobs, theirs = [], {}
    for k, (label, kind, data, inputs, _) in enumerate(mutants):
        path = tmp_path / f"dead_{k}.pte"
        path.write_bytes(data)
        jobs.append(Job(label, path, inputs))
        theirs[label] = executorch_outputs(path, inputs)
    results, crash = run_isolated(tmp_path, jobs)
    assert crash is None, crash
    for label, kind, _, _, tolerance in mutants:
        status, outputs = results[label]
        assert status == "ok", f"{label}: {outputs}"
        assert len(outputs) == len(theirs[label]), label
        for ours, want in zip(outputs, theirs[label]):
            np.testing.assert_allclose(ours, want, rtol=tolerance["rtol"], atol=tolerance["atol"], err_msg=label)
    # Among them, node kinds XNNPACK runs, whose unread output aborted Debian's XNNPACK at setup.
    kinds = {kind for _, kind, *_ in mutants}
    assert {"FullyConnected", "Conv2d", "DepthwiseConv2d", "Add", "Softmax", "Reshape"} <= kinds, sorted(kinds)


def without_table(data, which):
    """The program with one union's table offset removed from its vtable (the type stays), and the message
    method load must give. Tables of one layout share a vtable, so every table using the edited vtable loses
    its member; the first of them read names the problem."""
    mutant = bytearray(data)
    blob = blobs(mutant)[0]
    values, nodes = blob.root.tables(2), blob.root.tables(1)
    if which == "quantization":
        holders = [(i, v.table(1)) for i, v in enumerate(values) if v.u8(0) == 2]
        field, names, what = 2, QUANTIZATION_NAMES, "quantization"
    elif which == "kind":
        holders = list(enumerate(values))
        field, names, what = 1, VALUE_KIND_NAMES, "kind"
    else:
        holders = list(enumerate(nodes))
        field, names, what = 1, OPERATION_NAMES, "operation"
    vtable = holders[0][1].vtable_slot_pos(0)
    index, holder = next((i, t) for i, t in holders if t.vtable_slot_pos(0) == vtable)
    kind = names[holder.u8(field - 1)]
    if which == "quantization":
        name = f"value {index} (id {holder.table(0).u32(6)})"
    else:
        name = f"{'value' if which == 'kind' else 'node'} {index}"
    at = holder.vtable_slot_pos(field)
    mutant[at:at + 2] = b"\0\0"
    return mutant, f"{name}: its {what} is {kind} but holds no table"


@pytest.mark.parametrize("which", ["quantization", "kind", "operation"])
def test_a_union_without_its_table_fails_method_load_by_name(tmp_path, which):
    source = QUANTIZED / "q_linear" / "xnnpack.pte"
    inputs = npz(QUANTIZED / "q_linear" / "inputs.npz", "input")
    mutant, message = without_table(source.read_bytes(), which)
    (tmp_path / "mutant.pte").write_bytes(mutant)
    results, crash = run_isolated(tmp_path, [Job(which, tmp_path / "mutant.pte", inputs),
                                             Job("intact", source, inputs)])
    assert crash is None, crash
    status, error = results[which]
    assert status == "error", f"{which}: the method ran"
    assert "invalid XNNPACK delegate blob" in error and message in error, error
    assert results["intact"][0] == "ok", results["intact"]  # the process stays usable
