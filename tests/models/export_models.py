#!/usr/bin/env python3
"""Export etrt's reference set of ExecuTorch programs.

Every program is produced by ExecuTorch's own exporter (torch.export ->
executorch.exir) and run through ExecuTorch's own Python runtime, so the files
written here are the ground truth that etrt's loader and kernels are tested
against.

Usage:
    python3 tests/models/export_models.py --out tests/models/generated
    python3 tests/models/export_models.py --out tests/models/generated --only mlp op_add
    python3 tests/models/export_models.py --out tests/models/generated --check

For each model NAME, NAME/ holds:
    portable.pte               to_edge(...).to_executorch(), no delegates
    xnnpack.pte                to_edge_transform_and_lower(partitioner=[XnnpackPartitioner()])
    inputs[_CASE].npz          input_0, input_1, ... in argument order
    expected[_CASE].npz        eager PyTorch outputs output_0, output_1, ...
    executorch_portable[_CASE].npz / executorch_xnnpack[_CASE].npz
                               outputs of ExecuTorch's runtime on the .pte
    meta.json                  methods, shapes, operators, delegates, tolerances
and OUT/index.json lists every model and its files.

Case suffixes: a model with one method ("forward") and one case has no
suffix.  Otherwise every case has a name (e.g. "b5", "call0", or the method
name for multi-method programs) and files are suffixed with "_<case>".  The
cases of a method are listed in meta.json in execution order; when the method
is "stateful" the cases must be executed in that order on one loaded method.

--check exports everything into a temporary directory (running ExecuTorch too)
and verifies that the inputs, eager outputs and operator lists match what is
committed under --out.  .pte bytes are not compared.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import traceback
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from op_cases import op_builders, build_op_spec
from reference_models import DEFAULT_ATOL, DEFAULT_RTOL, ModelSpec, build_models

warnings.filterwarnings("ignore")


# ---------------------------------------------------------------------------
# Export and run
# ---------------------------------------------------------------------------


def to_numpy(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().contiguous().numpy()
    return np.asarray(t)


def as_tuple(out) -> Tuple[Any, ...]:
    if isinstance(out, (tuple, list)):
        return tuple(out)
    return (out,)


def tensor_desc(t) -> Dict[str, Any]:
    t = torch.as_tensor(t)
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}


def export_methods(spec: ModelSpec) -> Dict[str, Any]:
    eps = {}
    for mname, ms in spec.methods.items():
        eps[mname] = torch.export.export(ms.module, ms.example_inputs, dynamic_shapes=ms.dynamic_shapes)
    return eps


def eager_outputs(spec: ModelSpec) -> Dict[str, Dict[str, Tuple[Any, ...]]]:
    res: Dict[str, Dict[str, Tuple[Any, ...]]] = {}
    for mname, ms in spec.methods.items():
        res[mname] = {}
        module = ms.module
        if ms.stateful:
            module = spec.stateful_factory().eval()  # fresh state
            module.load_state_dict(ms.module.state_dict())
        with torch.no_grad():
            for case in ms.cases:
                res[mname][case.name] = tuple(o.clone() for o in as_tuple(module(*case.inputs)))
    return res


def plan_info(plan) -> Dict[str, Any]:
    from executorch.exir.schema import DelegateCall, KernelCall, Tensor

    ops = [f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators]
    calls: Dict[str, int] = {}
    n_delegate_calls = 0
    n_instructions = 0
    for chain in plan.chains:
        for ins in chain.instructions:
            n_instructions += 1
            a = ins.instr_args
            if isinstance(a, KernelCall):
                calls[ops[a.op_index]] = calls.get(ops[a.op_index], 0) + 1
            elif isinstance(a, DelegateCall):
                n_delegate_calls += 1
    dyn = {"STATIC": 0, "DYNAMIC_BOUND": 0, "DYNAMIC_UNBOUND": 0}
    mutable = []
    for idx, ev in enumerate(plan.values):
        v = ev.val
        if isinstance(v, Tensor):
            dyn[v.shape_dynamism.name] += 1
            eti = v.extra_tensor_info
            if eti is not None and (eti.fully_qualified_name or eti.mutable_data_segments_idx):
                mutable.append({"value_index": idx, "fqn": eti.fully_qualified_name,
                                "mutable_data_segments_idx": eti.mutable_data_segments_idx,
                                "sizes": list(v.sizes), "data_buffer_idx": v.data_buffer_idx,
                                "memory_planned": v.allocation_info is not None})
    input_vals = []
    for i in plan.inputs:
        v = plan.values[i].val
        if isinstance(v, Tensor):
            input_vals.append({"value_index": i, "sizes": list(v.sizes),
                               "shape_dynamism": v.shape_dynamism.name,
                               "memory_planned": v.allocation_info is not None})
    return {
        "operators": ops,
        "kernel_calls": dict(sorted(calls.items())),
        "delegates": [d.id for d in plan.delegates],
        "delegate_calls": n_delegate_calls,
        "instructions": n_instructions,
        "num_values": len(plan.values),
        "tensor_shape_dynamism": dyn,
        "program_inputs": input_vals,
        "non_const_buffer_sizes": list(plan.non_const_buffer_sizes),
        "tensors_with_extra_info": mutable,
    }


def pte_layout(data: bytes) -> Dict[str, Any]:
    """Where things live in the serialized .pte (read back from the bytes)."""
    from executorch.exir._serialize._program import _flatbuffer_to_program, _get_extended_header

    info: Dict[str, Any] = {"file_identifier": data[4:8].decode("ascii", "replace")}
    eh = _get_extended_header(data)
    size = len(data)
    if eh is not None and eh.is_valid():
        size = eh.program_size
        info["extended_header"] = {"program_size": eh.program_size, "segment_base_offset": eh.segment_base_offset,
                                   "segment_data_size": eh.segment_data_size}
    p = _flatbuffer_to_program(data[:size])
    info["version"] = p.version
    info["segments"] = [{"offset": s.offset, "size": s.size} for s in p.segments]
    info["constant_buffer_inline_entries"] = len(p.constant_buffer)
    info["constant_segment"] = {"segment_index": p.constant_segment.segment_index,
                                "num_offsets": len(p.constant_segment.offsets)}
    info["mutable_data_segments"] = [{"segment_index": m.segment_index, "num_offsets": len(m.offsets)}
                                     for m in (p.mutable_data_segments or [])]
    info["backend_delegate_data_inline"] = len(p.backend_delegate_data)
    info["named_data"] = [n.key for n in (p.named_data or [])]
    info["delegates"] = [{"plan": ep.name, "id": d.id, "processed_location": d.processed.location.name,
                          "processed_index": d.processed.index,
                          "compile_specs": [c.key for c in d.compile_specs]}
                         for ep in p.execution_plan for d in ep.delegates]
    return info


def edge_ops(edge_manager, mname: str) -> List[str]:
    names = set()
    gm = edge_manager.exported_program(mname).graph_module
    for node in gm.graph.nodes:
        if node.op == "call_function":
            schema = getattr(node.target, "_schema", None)
            if schema is not None:  # e.g. "aten::add.Tensor", "aten::addmm.default"
                names.add(f"{schema.name}.{schema.overload_name or 'default'}")
            else:  # operator.getitem and other Python callables
                mod = getattr(node.target, "__module__", "") or ""
                names.add(f"{mod.replace('_operator', 'operator')}.{getattr(node.target, '__name__', node.target)}")
    return sorted(names)


def graph_signature_info(ep) -> Dict[str, Any]:
    sig = ep.graph_signature
    return {
        "buffers_to_mutate": dict(sig.buffers_to_mutate),
        "buffers": list(sig.buffers),
        "user_inputs_to_mutate": dict(sig.user_inputs_to_mutate),
    }


def state_info(sig: Dict[str, Any], plans, mname: str, initialized: bool) -> Dict[str, Any]:
    """How mutable buffers show up in the portable program."""
    from executorch.exir.schema import KernelCall, Tensor

    plan = next(p for p in plans if p.name == mname)
    ops = [f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators]
    written = []
    for chain in plan.chains:
        for ins in chain.instructions:
            a = ins.instr_args
            if isinstance(a, KernelCall) and ops[a.op_index] == "aten::copy_":
                dst = a.args[0]
                t = plan.values[dst].val
                assert isinstance(t, Tensor)
                written.append({
                    "value_index": dst, "copy_args": list(a.args), "sizes": list(t.sizes),
                    "scalar_type": t.scalar_type.name,
                    "allocation": None if t.allocation_info is None else {
                        "memory_id": t.allocation_info.memory_id,
                        "offset": t.allocation_info.memory_offset_low
                        + (t.allocation_info.memory_offset_high << 32)},
                    "data_buffer_idx": t.data_buffer_idx,
                    "is_method_input": dst in plan.inputs,
                })
    return {
        "buffers": sig["buffers"],
        "buffers_to_mutate": sig["buffers_to_mutate"],
        "write_back": written,
        "how": (
            "Each mutated buffer is a memory-planned tensor value (allocation_info set, not a method input). "
            "The graph computes the new value into a temporary and the program ends with "
            "aten::copy_(buffer, new_value, non_blocking=False, out=buffer) kernel calls that write it back, "
            "so the state lives in the planned (non-constant) memory arena and persists across execute() "
            "calls of one loaded method. "
            + ("InitializedMutableBufferPass marked the buffers, so data_buffer_idx > 0 points at their "
               "initial values in the program's mutable-data segment (PTEFile.mutable_data / "
               "program.mutable_data_segments); the runtime copies them into the planned memory at method load."
               if initialized else
               "With the default config ExecuTorch serializes no initial value (data_buffer_idx 0, emitter "
               "warns that the initial state is 'meaningless'); ExecuTorch's Python runtime hands out "
               "zero-filled planned memory, so the buffers start at 0, which is what expected_call*.npz "
               "assume (the eager buffers also start at 0).")
        ),
    }


def run_executorch(pte_path: str, spec: ModelSpec) -> Dict[str, Dict[str, Tuple[torch.Tensor, ...]]]:
    from executorch.runtime import Runtime

    rt = Runtime.get()
    res: Dict[str, Dict[str, Tuple[torch.Tensor, ...]]] = {}
    program = rt.load_program(pte_path)  # fresh program -> fresh mutable state
    for mname, ms in spec.methods.items():
        method = program.load_method(mname)
        res[mname] = {}
        for case in ms.cases:
            outs = method.execute([torch.as_tensor(t).clone() for t in case.inputs])
            res[mname][case.name] = tuple(o.clone() if isinstance(o, torch.Tensor) else torch.as_tensor(o)
                                          for o in outs)
    return res


def max_abs_diff(a: Sequence[Any], b: Sequence[Any]) -> float:
    m = 0.0
    if len(a) != len(b):
        return float("inf")
    for x, y in zip(a, b):
        x, y = to_numpy(x), to_numpy(y)
        if x.shape != y.shape:
            return float("inf")
        if x.dtype == np.bool_ or np.issubdtype(x.dtype, np.integer):
            d = float(np.max(np.abs(x.astype(np.int64) - y.astype(np.int64)))) if x.size else 0.0
        else:
            xf, yf = x.astype(np.float64), y.astype(np.float64)
            both_inf = np.isinf(xf) & np.isinf(yf) & (np.sign(xf) == np.sign(yf))
            diff = np.where(both_inf, 0.0, np.abs(xf - yf))
            diff = np.where(np.isnan(xf) & np.isnan(yf), 0.0, diff)
            d = float(np.max(diff)) if diff.size else 0.0
        m = max(m, d)
    return m


def arrays_close(x: np.ndarray, y: np.ndarray, rtol: float, atol: float) -> bool:
    """allclose for float arrays (inf == inf, nan == nan), exact for bool/int."""
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if not np.issubdtype(x.dtype, np.floating):
        return bool(np.array_equal(x, y))
    return bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))


def suffix(case_name: str) -> str:
    return f"_{case_name}" if case_name else ""


def save_npz(path: str, prefix: str, tensors: Sequence[Any]) -> None:
    # Uncompressed on purpose: a C++ test can read it without zlib.
    np.savez(path, **{f"{prefix}_{i}": to_numpy(t) for i, t in enumerate(tensors)})


@contextlib.contextmanager
def quiet():
    """Silence the exporter's chatter (Python and C-level stdout/stderr)."""
    if os.environ.get("ETRT_EXPORT_VERBOSE"):
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 1)
        os.dup2(devnull.fileno(), 2)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def export_model(spec: ModelSpec, out_root: str) -> Dict[str, Any]:
    from executorch.exir import to_edge, to_edge_transform_and_lower

    d = os.path.join(out_root, spec.name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)

    meta: Dict[str, Any] = {"name": spec.name, "kind": spec.kind, "description": spec.description,
                            "export": {
                                "portable": "torch.export.export -> executorch.exir.to_edge -> to_executorch",
                                "xnnpack": "torch.export.export -> to_edge_transform_and_lower("
                                           "partitioner=[XnnpackPartitioner()]) -> to_executorch",
                                "to_executorch_config": spec.et_config[0] if spec.et_config
                                else "ExecutorchBackendConfig() (default)"}}
    if spec.target_op:
        meta["target_op"] = spec.target_op

    eager = eager_outputs(spec)

    # --- portable --------------------------------------------------------
    with quiet():
        eps = export_methods(spec)
        edge = to_edge(eps)
        edge_op_names = {m: edge_ops(edge, m) for m in spec.methods}
        edge_sigs = {m: graph_signature_info(edge.exported_program(m)) for m in spec.methods}
        et_prog = edge.to_executorch(spec.et_config[1]() if spec.et_config else None)
    with open(os.path.join(d, "portable.pte"), "wb") as f:
        f.write(et_prog.buffer)
    plans = {p.name: plan_info(p) for p in et_prog.executorch_program.execution_plan}
    meta["program"] = pte_layout(et_prog.buffer)

    # --- xnnpack ---------------------------------------------------------
    xnn_plans: Optional[Dict[str, Any]] = None
    meta["xnnpack"] = {"exported": False}
    if spec.xnnpack:
        try:
            from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

            with quiet():
                xeps = export_methods(spec)
                lowered = to_edge_transform_and_lower(xeps, partitioner=[XnnpackPartitioner()])
                xprog = lowered.to_executorch(spec.et_config[1]() if spec.et_config else None)
            with open(os.path.join(d, "xnnpack.pte"), "wb") as f:
                f.write(xprog.buffer)
            xnn_plans = {p.name: plan_info(p) for p in xprog.executorch_program.execution_plan}
            delegates = sorted({i for p in xnn_plans.values() for i in p["delegates"]})
            meta["xnnpack"] = {"exported": True, "delegates": delegates}
            if not delegates:
                meta["xnnpack"]["note"] = "XnnpackPartitioner claimed no node; program is portable-only"
        except Exception as e:  # record why and keep going
            meta["xnnpack"] = {"exported": False, "error": f"{type(e).__name__}: {e}"[:2000]}
    else:
        meta["xnnpack"]["skipped"] = "single-operator programs are exported portable-only"

    # --- run ExecuTorch --------------------------------------------------
    flows = {"portable": os.path.join(d, "portable.pte")}
    if meta["xnnpack"].get("exported"):
        flows["xnnpack"] = os.path.join(d, "xnnpack.pte")
    et_outs = {}
    run_errors = {}
    for flow, path in flows.items():
        try:
            with quiet():
                et_outs[flow] = run_executorch(path, spec)
        except Exception as e:
            run_errors[flow] = f"{type(e).__name__}: {e}"[:2000]

    # --- files -------------------------------------------------------------
    files = ["portable.pte"] + (["xnnpack.pte"] if "xnnpack" in flows else [])
    methods_meta = {}
    max_diff = {flow: 0.0 for flow in flows}
    for mname, ms in spec.methods.items():
        cases_meta = []
        for case in ms.cases:
            sfx = suffix(case.name)
            cm = {"name": case.name, "inputs_file": f"inputs{sfx}.npz", "expected_file": f"expected{sfx}.npz",
                  "inputs": [tensor_desc(t) for t in case.inputs],
                  "outputs": [tensor_desc(t) for t in eager[mname][case.name]]}
            save_npz(os.path.join(d, cm["inputs_file"]), "input", case.inputs)
            save_npz(os.path.join(d, cm["expected_file"]), "output", eager[mname][case.name])
            files += [cm["inputs_file"], cm["expected_file"]]
            cm["executorch"] = {}
            for flow in flows:
                if flow not in et_outs:
                    continue
                fn = f"executorch_{flow}{sfx}.npz"
                outs = et_outs[flow][mname][case.name]
                save_npz(os.path.join(d, fn), "output", outs)
                files.append(fn)
                diff = max_abs_diff(outs, eager[mname][case.name])
                max_diff[flow] = max(max_diff[flow], diff)
                cm["executorch"][flow] = {"file": fn, "max_abs_diff_vs_eager": diff}
            cases_meta.append(cm)
        mm: Dict[str, Any] = {
            "inputs": [tensor_desc(t) for t in ms.example_inputs],
            "outputs": cases_meta[0]["outputs"] if len(ms.cases) == 1 else
            [tensor_desc(t) for t in as_tuple(ms.module(*ms.example_inputs))] if not ms.stateful else cases_meta[0]["outputs"],
            "stateful": ms.stateful,
            "cases": cases_meta,
            "operators": plans[mname]["operators"],
            "edge_ops": edge_op_names[mname],
            "portable_plan": {k: v for k, v in plans[mname].items() if k != "operators"},
        }
        if ms.dynamic_shapes is not None:
            mm["dynamic_shapes"] = [
                {str(dim): {"name": dd.__name__, "min": dd.min, "max": dd.max} for dim, dd in ds.items()}
                if ds else None for ds in ms.dynamic_shapes]
            mm["inputs_note"] = "example input used for torch.export; the program accepts any size within dynamic_shapes bounds"
        if ms.stateful or edge_sigs[mname]["buffers_to_mutate"]:
            mm["state"] = state_info(edge_sigs[mname], et_prog.executorch_program.execution_plan,
                                     mname, spec.et_config is not None)
        if xnn_plans is not None:
            mm["xnnpack_plan"] = xnn_plans[mname]
        methods_meta[mname] = mm
    meta["methods"] = methods_meta
    meta["operators"] = sorted({o for m in methods_meta.values() for o in m["operators"]})
    if run_errors:
        meta["executorch_run_errors"] = run_errors
    meta["max_abs_diff_vs_eager"] = max_diff
    meta["tolerance"] = tolerance_for(spec, max_diff)
    meta["files"] = {}
    for fn in files:
        meta["files"][fn] = os.path.getsize(os.path.join(d, fn))
    files.append("meta.json")
    meta["file_list"] = files
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=False)
        f.write("\n")
    return meta


# Per-model tolerance overrides, with the reason.  Everything else uses
# rtol 1e-4 / atol 1e-5.
TOLERANCE_OVERRIDES: Dict[str, Dict[str, Any]] = {}


def tolerance_for(spec: ModelSpec, max_diff: Dict[str, float]) -> Dict[str, Any]:
    tol: Dict[str, Any] = {"rtol": DEFAULT_RTOL, "atol": DEFAULT_ATOL,
                           "compare": "np.allclose(actual, expected, rtol, atol, equal_nan=True) for floating "
                                      "outputs (+-inf must match exactly); exact equality for bool/int outputs"}
    observed = ", ".join(f"{k} {v:.2g}" for k, v in max_diff.items())
    tol["reason"] = (f"default float32 tolerance; ExecuTorch's own kernels differ from eager by at most "
                     f"{observed}, far inside it, so no op here needs a looser bound. Reductions, matmul/conv "
                     f"accumulation order and libm exp/erf/tanh may still make an independent implementation "
                     f"differ from eager in the last few ulps, which rtol 1e-4 absorbs")
    if spec.name in TOLERANCE_OVERRIDES:
        tol.update(TOLERANCE_OVERRIDES[spec.name])
    return tol


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def all_specs(only: Optional[List[str]]) -> Tuple[List[ModelSpec], List[str]]:
    models = build_models()
    builders = op_builders()
    op_specs = [build_op_spec(op, nm, fn) for op, (nm, fn) in sorted(builders.items(), key=lambda kv: kv[1][0])]
    specs = models + op_specs
    if only:
        specs = [s for s in specs if s.name in only]
        missing = set(only) - {s.name for s in specs}
        if missing:
            raise SystemExit(f"unknown model(s): {sorted(missing)}")
    return specs, sorted(builders)


def fmt_size(n: Optional[int]) -> str:
    if n is None:
        return "-"
    return f"{n / 1024:.1f}K"


def print_table(metas: List[Dict[str, Any]]) -> None:
    rows = [("model", "ops", "portable.pte", "xnnpack.pte (delegates)", "max|ET-eager| portable", "xnnpack")]
    for m in metas:
        x = m["xnnpack"]
        xs = "-"
        if x.get("exported"):
            xs = f"{fmt_size(m['files'].get('xnnpack.pte'))} ({','.join(x['delegates']) or 'none'})"
        elif x.get("error"):
            xs = "FAILED"
        md = m["max_abs_diff_vs_eager"]
        rows.append((m["name"], str(len(m["operators"])), fmt_size(m["files"]["portable.pte"]), xs,
                     f"{md.get('portable', float('nan')):.3g}",
                     f"{md['xnnpack']:.3g}" if "xnnpack" in md else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def write_index(out: str, metas: List[Dict[str, Any]]) -> None:
    from importlib.metadata import version

    path = os.path.join(out, "index.json")
    existing = {}
    if os.path.exists(path):
        with open(path) as f:
            for e in json.load(f).get("models", []):
                existing[e["name"]] = e
    for m in metas:
        existing[m["name"]] = {
            "name": m["name"], "kind": m["kind"], "dir": m["name"],
            "methods": list(m["methods"]), "files": m["file_list"],
            "operators": m["operators"],
            "xnnpack_delegates": m["xnnpack"].get("delegates", []),
            "tolerance": {k: m["tolerance"][k] for k in ("rtol", "atol")},
        }
    models = sorted(existing.values(), key=lambda e: (e["kind"] != "model", e["name"]))
    # keep the declared order for whole models
    order = [s.name for s in build_models()]
    models.sort(key=lambda e: (e["kind"] != "model", order.index(e["name"]) if e["name"] in order else 0, e["name"]))
    portable_ops = sorted({o for e in models for o in e["operators"]})
    index = {
        "generator": "tests/models/export_models.py",
        "versions": {"torch": torch.__version__, "executorch": version("executorch")},
        "models": models,
        "portable_operators": portable_ops,
    }
    with open(path, "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


def check_op_coverage(metas: List[Dict[str, Any]], builders: List[str]) -> List[str]:
    """Every operator used by a whole model must have a single-op program."""
    used = sorted({o for m in metas if m["kind"] == "model" for o in m["operators"]})
    covered = {o for m in metas if m["kind"] == "op" for o in m["operators"]}
    return [o for o in used if o not in covered]


def compare_with_committed(new_root: str, old_root: str, metas: List[Dict[str, Any]]) -> List[str]:
    problems = []
    for m in metas:
        old_meta_path = os.path.join(old_root, m["name"], "meta.json")
        if not os.path.exists(old_meta_path):
            problems.append(f"{m['name']}: not committed under {old_root}")
            continue
        with open(old_meta_path) as f:
            old = json.load(f)
        tol = old["tolerance"]
        if old["operators"] != m["operators"]:
            problems.append(f"{m['name']}: operator list changed {old['operators']} -> {m['operators']}")
        for mname, mm in m["methods"].items():
            for case in mm["cases"]:
                for kind in ("inputs_file", "expected_file"):
                    fn = case[kind]
                    a = np.load(os.path.join(new_root, m["name"], fn))
                    op = os.path.join(old_root, m["name"], fn)
                    if not os.path.exists(op):
                        problems.append(f"{m['name']}: committed {fn} missing")
                        continue
                    b = np.load(op)
                    if sorted(a.files) != sorted(b.files):
                        problems.append(f"{m['name']}/{fn}: array names differ")
                        continue
                    for k in a.files:
                        if a[k].shape != b[k].shape or a[k].dtype != b[k].dtype:
                            problems.append(f"{m['name']}/{fn}:{k}: shape/dtype differ")
                        elif kind == "inputs_file" and not np.array_equal(a[k], b[k]):
                            problems.append(f"{m['name']}/{fn}:{k}: inputs differ")
                        elif not arrays_close(a[k], b[k], tol["rtol"], tol["atol"]):
                            problems.append(f"{m['name']}/{fn}:{k}: eager outputs differ "
                                            f"(max {max_abs_diff([a[k]], [b[k]]):.3g})")
                # The re-exported programs, run by ExecuTorch, must still match
                # the committed expected outputs.
                for flow, info in case["executorch"].items():
                    et = np.load(os.path.join(new_root, m["name"], info["file"]))
                    exp = np.load(os.path.join(old_root, m["name"], case["expected_file"]))
                    for k in exp.files:
                        if not arrays_close(et[k], exp[k], tol["rtol"], tol["atol"]):
                            problems.append(f"{m['name']}/{info['file']}:{k}: re-exported {flow} program "
                                            f"disagrees with committed expected outputs")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated"))
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--check", action="store_true",
                    help="re-export into a temp dir and compare with the files under --out")
    args = ap.parse_args(argv)

    specs, builders = all_specs(args.only)
    tmp = None
    out = args.out
    if args.check:
        tmp = tempfile.mkdtemp(prefix="etrt_export_check_")
        out = tmp
    os.makedirs(out, exist_ok=True)

    metas, failures = [], []
    for spec in specs:
        print(f"[export] {spec.name}", flush=True)
        try:
            meta = export_model(spec, out)
        except Exception:
            failures.append(spec.name)
            traceback.print_exc()
            continue
        if spec.target_op and not any(o == spec.target_op or o.startswith(spec.target_op + ".")
                                      for o in meta["operators"]):
            failures.append(spec.name)
            print(f"  ERROR: {spec.name} does not call {spec.target_op}: {meta['operators']}")
        if "executorch_run_errors" in meta:
            failures.append(spec.name)
            print(f"  ExecuTorch run failed: {meta['executorch_run_errors']}")
        tol = meta["tolerance"]
        d = os.path.join(out, spec.name)
        for mname, mm in meta["methods"].items():
            for case in mm["cases"]:
                exp = np.load(os.path.join(d, case["expected_file"]))
                for flow, info in case["executorch"].items():
                    got = np.load(os.path.join(d, info["file"]))
                    if sorted(got.files) != sorted(exp.files) or not all(
                            arrays_close(got[k], exp[k], tol["rtol"], tol["atol"]) for k in exp.files):
                        failures.append(spec.name)
                        print(f"  ERROR: {spec.name}/{mname}/{case['name']}: ExecuTorch {flow} outputs differ "
                              f"from eager beyond rtol={tol['rtol']} atol={tol['atol']} "
                              f"(max abs diff {info['max_abs_diff_vs_eager']:.3g})")
        metas.append(meta)

    print()
    print_table(metas)
    if not args.only:
        missing = check_op_coverage(metas, builders)
        if missing:
            print(f"\nWARNING: operators without a single-op program: {missing}")
        all_ops = sorted({o for m in metas if m["kind"] == "model" for o in m["operators"]})
        print(f"\n{len(all_ops)} distinct operators in the model programs:")
        for o in all_ops:
            print(f"  {o}")

    rc = 1 if failures else 0
    if args.check:
        problems = compare_with_committed(out, args.out, metas)
        shutil.rmtree(tmp, ignore_errors=True)
        if problems:
            print("\nCHECK FAILED:")
            for p in problems:
                print(f"  {p}")
            rc = 1
        else:
            print(f"\nCHECK OK: {len(metas)} models re-exported; eager outputs, inputs and operator "
                  f"lists match {args.out}")
    else:
        write_index(out, metas)
        total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(out) for f in fs)
        print(f"\ntotal size of {out}: {total / 1024:.1f} KiB")
    if failures:
        print(f"\nFAILED: {failures}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
