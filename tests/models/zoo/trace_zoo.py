"""ExecuTorch's example models traced by etrt and by ExecuTorch's runtime, both read by ExecuTorch's Inspector.

    python3 tests/models/zoo/trace_zoo.py [--models a,b] [--variants portable,xnnpack] [--out DIR]

Each model/variant is exported with its ETRecord (zoo.py's export), then run three times by
`etrt run --etdump --debug-buffer --trace --profile` and by ExecuTorch's runtime with `enable_etdump`,
each in a process of its own. Both ETDumps go through ExecuTorch's Inspector with the ETRecord:
- the operator instructions of the "Execute" block, in order, must be the same for etrt as for ExecuTorch,
  and each must be matched to the ETRecord (debug handles);
- the Inspector's numerical comparison against the ETRecord's reference graph runs on each debug buffer
  (largest MSE reported for both runtimes);
- the events a delegate reports from inside its calls are counted for both;
- etrt's Chrome trace must be JSON whose spans nest on every thread.
Writes DIR/trace_results.json and, rendered, tests/models/TRACED_ZOO.md. Needs a built etrt (build/bin/etrt).
"""
import argparse
import glob
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
import zoo  # noqa: E402

RUNS = 3
DEBUG_BUFFER_BYTES = 64 << 20


def run_executorch_traced(model_dir: str) -> dict:
    """Child process: ExecuTorch's runtime with its ETDump and debug buffer (executorch_trace.etdp/.bin)."""
    import numpy as np
    import torch
    from executorch.runtime import Runtime
    from executorch.kernels import quantized  # noqa: F401

    inputs = [torch.from_numpy(np.load(p)) for p in sorted(glob.glob(os.path.join(model_dir, "input_*.npy")))]
    for i in json.load(open(os.path.join(model_dir, "bfloat16.json"))):
        inputs[i] = inputs[i].to(torch.bfloat16)
    program = Runtime.get().load_program(os.path.join(model_dir, "model.pte"), enable_etdump=True,
                                         debug_buffer_size=DEBUG_BUFFER_BYTES)
    method = program.load_method("forward")
    for _ in range(RUNS):
        method.execute(inputs)
    program.write_etdump_result_to_file(os.path.join(model_dir, "executorch_trace.etdp"),
                                        os.path.join(model_dir, "executorch_trace.bin"))
    return {"status": "ran"}


def run_etrt_traced(model_dir: str) -> dict:
    """`etrt run` with every tracing output (etrt_trace.etdp/.bin/.json) and the --profile table."""
    cli = os.path.join(os.environ.get("ETRT_BUILD_DIR", os.path.join(ROOT, "build")), "bin", "etrt")
    stem = os.path.join(model_dir, "etrt_trace")
    args = [cli, "run", os.path.join(model_dir, "model.pte"), "--iterations", str(RUNS), "--profile",
            "--etdump", stem + ".etdp", "--debug-buffer", stem + ".bin", "--trace", stem + ".json"]
    for p in sorted(glob.glob(os.path.join(model_dir, "input_*.npy"))):
        args += ["--input", p]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "ETRT_PLUGIN_PATH": ""})
    if proc.returncode != 0:
        return {"status": "failed", "detail": (proc.stderr or proc.stdout).strip().splitlines()[-1][:300]}
    # Timings only (no debug events): what the Inspector still reads when it cannot read a debug event.
    timings = args[:args.index("--etdump")] + ["--etdump", stem + "_timings.etdp"] + args[args.index("--trace") + 2:]
    subprocess.run(timings, capture_output=True, text=True, timeout=600, check=True,
                   env={**os.environ, "ETRT_PLUGIN_PATH": ""})
    return {"status": "ran", "profile": proc.stdout}


def inspect_dump(model_dir: str, prefix: str) -> dict:
    """Child process: what ExecuTorch's Inspector makes of one runtime's ETDump with the ETRecord."""
    import numpy as np
    from executorch.devtools import Inspector

    paths = {"etdump_path": os.path.join(model_dir, f"{prefix}.etdp"),
             "etrecord": os.path.join(model_dir, "model.etrecord")}
    buffer_error = None
    try:
        inspector = Inspector(**paths, debug_buffer_path=os.path.join(model_dir, f"{prefix}.bin"))
    except Exception as error:  # then a dump of timings alone, to tell what the Inspector cannot read
        buffer_error = f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
        timings = os.path.join(model_dir, f"{prefix}_timings.etdp")
        if not os.path.exists(timings):
            raise
        inspector = Inspector(**{**paths, "etdump_path": timings})
    blocks = [b for b in inspector.event_blocks if b.name == "Execute"]
    if len(blocks) != 1:
        return {"status": "failed", "detail": f"{len(blocks)} 'Execute' blocks"}
    events = blocks[0].events
    calls = [e for e in events if e.delegate_debug_identifier is None and e.name != "Method::execute"]
    operators = [e for e in calls if e.name != "DELEGATE_CALL"]
    table = io.StringIO()
    inspector.print_data_tabular(file=table)
    answer = {
        "status": "inspected",
        "calls": [[e._instruction_id, e.name] for e in calls],
        "unmatched": sorted({e.name for e in operators if e.debug_handles is None}),
        "delegate_events": sum(1 for e in events if e.delegate_debug_identifier is not None),
        "runs": min((len(e.perf_data.raw) for e in events if e.perf_data is not None), default=0),
        "missing_from_table": sorted({e.name for e in calls if e.name not in table.getvalue()}),
    }
    if buffer_error is not None:
        answer["buffer_error"] = buffer_error
        return answer
    try:
        gaps = inspector.calculate_numeric_gap("MSE")
        values = [float(np.max(np.asarray(g, dtype=np.float64))) for g in gaps["gap"].tolist()]
        answer["gap_rows"], answer["max_mse"] = len(values), max(values, default=None)
    except Exception as error:  # reported in the table: the comparison is ExecuTorch's code
        answer["gap_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
    return answer


def instruction_calls(calls: list, executorch: bool) -> list:
    """[(instruction, operator)] from an Execute block's calls. ExecuTorch's runtime lists a kernel call as two
    events, "native_call_<op>" (its kernel wrapper; none for a primitive operator) and "OPERATOR_CALL"; etrt as
    one, named "<namespace>::<op>". Operators are compared without their namespace."""
    by_instruction = {}
    for instruction, name in calls:
        if not executorch:
            by_instruction[instruction] = name if name == "DELEGATE_CALL" else name.split("::")[-1]
        elif name.startswith("native_call_"):
            by_instruction[instruction] = name[len("native_call_"):]
        else:
            by_instruction.setdefault(instruction, name)  # OPERATOR_CALL or DELEGATE_CALL
    return list(by_instruction.items())


def same_calls(ours: list, theirs: list) -> bool:
    """The same instructions in the same order, each with the same operator (where ExecuTorch names one)."""
    ours, theirs = instruction_calls(ours, False), instruction_calls(theirs, True)
    return len(ours) == len(theirs) and all(
        a[0] == b[0] and (a[1] == b[1] or (b[1] == "OPERATOR_CALL" and a[1] != "DELEGATE_CALL"))
        for a, b in zip(ours, theirs))


def chrome_trace_nests(path: str) -> str:
    """'' when the trace is JSON whose complete/begin-end spans nest on every thread, else what is wrong."""
    try:
        trace = json.load(open(path))
    except (OSError, ValueError) as error:
        return f"not JSON: {error}"
    by_thread = {}
    for event in trace.get("traceEvents", []):
        if event.get("ph") == "X":
            by_thread.setdefault(event["tid"], []).append((event["ts"], event["ts"] + event["dur"]))
        elif event.get("ph") in ("B", "E"):
            return "begin/end events (complete events expected)"
    for tid, spans in by_thread.items():
        open_ends = []
        for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            if open_ends and end > open_ends[-1] + 1e-3:
                return f"thread {tid}: a span [{start}, {end}] overlaps its parent's end {open_ends[-1]}"
            open_ends.append(end)
    return "" if by_thread else "no spans"


def child(kind: str, *args) -> dict:
    """Runs one step of this script in a fresh interpreter (zoo.child)."""
    return zoo.child(kind, *args, script=__file__)


def trace_one(model: str, variant: str, model_dir: str) -> dict:
    entry = {}
    if not os.path.exists(os.path.join(model_dir, "model.etrecord")):
        entry["export"] = zoo.child("export_traced", model, variant, model_dir)
        if entry["export"]["status"] != "exported":
            return entry
    entry["etrt"] = run_etrt_traced(model_dir)
    entry["executorch"] = child("executorch", model_dir)
    if entry["etrt"]["status"] == "ran":
        entry["etrt_inspector"] = child("inspect", model_dir, "etrt_trace")
        entry["chrome_trace"] = chrome_trace_nests(os.path.join(model_dir, "etrt_trace.json")) or "nested"
    if entry["executorch"]["status"] == "ran":
        entry["executorch_inspector"] = child("inspect", model_dir, "executorch_trace")
    ours, theirs = entry.get("etrt_inspector", {}), entry.get("executorch_inspector", {})
    if ours.get("status") == "inspected" and theirs.get("status") == "inspected":
        entry["same_calls"] = same_calls(ours["calls"], theirs["calls"])
    return entry


def verdict(entry: dict) -> str:
    """'ok' when every check holds, else the first that does not."""
    ours = entry.get("etrt_inspector", {})
    if entry.get("etrt", {}).get("status") != "ran":
        return "etrt failed: " + entry.get("etrt", {}).get("detail", "")
    theirs = entry.get("executorch_inspector", {})
    if ours.get("status") != "inspected":
        return "Inspector failed on etrt's ETDump: " + ours.get("detail", "")
    if "same_calls" in entry and not entry["same_calls"]:
        return "operator instructions differ from ExecuTorch's"
    if "buffer_error" in ours:
        return "the Inspector reads etrt's timings, not its debug events: " + ours["buffer_error"]
    if "gap_error" in ours and "gap_error" not in theirs:
        return "the numerical comparison fails on etrt's dump only: " + ours["gap_error"]
    if ours["unmatched"]:
        return "not matched to the ETRecord: " + ", ".join(ours["unmatched"])
    if ours["missing_from_table"]:
        return "missing from print_data_tabular: " + ", ".join(ours["missing_from_table"])
    if ours["runs"] != RUNS:
        return f"{ours['runs']} timings per event, {RUNS} runs"
    if entry.get("chrome_trace") != "nested":
        return "Chrome trace: " + entry.get("chrome_trace", "missing")
    return "ok"


def render(results: dict) -> str:
    def mse(side):
        if side.get("status") != "inspected":
            return "-"
        if "buffer_error" in side:
            return "no debug buffer: " + side["buffer_error"].replace("|", "/")
        if "gap_error" in side:
            return "error: " + side["gap_error"].replace("|", "/")
        return "-" if side.get("max_mse") is None else f"{side['max_mse']:.3g} ({side['gap_rows']})"

    def executorch_mse(entry):
        theirs = entry.get("executorch_inspector", {})
        if theirs.get("status") == "failed":
            return "its dump unread: " + theirs.get("detail", "").replace("|", "/")
        return mse(theirs)

    rows = ["# ExecuTorch's example models traced by etrt", "",
            "Made by `python3 tests/models/zoo/trace_zoo.py`: each program of tests/models/zoo/zoo.py (portable and",
            "XNNPACK variants) exported with its ETRecord, run three times by `etrt run --profile --etdump",
            "--debug-buffer --trace` and by ExecuTorch's runtime (`enable_etdump=True`, a debug buffer), each in a",
            "process of its own. Both ETDumps are read by ExecuTorch's `Inspector` with the ETRecord.",
            "calls: the operator and delegate instructions of the Inspector's `Execute` block; same as ExecuTorch:",
            "the same (instruction, name) list in the same order. delegate events: events a delegate reported",
            "from inside its calls (etrt / ExecuTorch). MSE: the largest gap of `calculate_numeric_gap(\"MSE\")`",
            "against the ETRecord's reference graph (rows compared). check: every operator matched to the",
            "ETRecord, listed by `print_data_tabular`, timed once per run, and the Chrome trace nested. Where",
            "both MSE columns hold the same error, the Inspector's comparison fails on both runtimes' dumps alike.",
            "",
            "| model | variant | calls | same as ExecuTorch | delegate events | etrt MSE (rows) | "
            "ExecuTorch MSE (rows) | check |", "|---|---|---:|---|---|---|---|---|"]
    for key in sorted(results):
        entry = results[key]
        model, variant = key.split("/")
        if entry.get("export", {}).get("status", "exported") != "exported":
            rows.append(f"| {model} | {variant} | - | - | - | - | - | not exported: "
                        f"{entry['export'].get('detail', '')[:120]} |")
            continue
        ours, theirs = entry.get("etrt_inspector", {}), entry.get("executorch_inspector", {})
        same = {True: "yes", False: "NO"}.get(entry.get("same_calls"), "-")
        delegate = f"{ours.get('delegate_events', '-')} / {theirs.get('delegate_events', '-')}"
        rows.append(f"| {model} | {variant} | {len(ours.get('calls', []))} | {same} | {delegate} | {mse(ours)} | "
                    f"{executorch_mse(entry)} | {verdict(entry).replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, args = sys.argv[2], sys.argv[3:]
        answer = {"executorch": lambda: run_executorch_traced(args[0]),
                  "inspect": lambda: inspect_dump(args[0], args[1])}[kind]()
        print("ZOO:" + json.dumps(answer))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join(zoo.DEFAULT_MODELS))
    parser.add_argument("--variants", default="portable,xnnpack")
    parser.add_argument("--out", default="/tmp/etrt_zoo_traced")
    parser.add_argument("--markdown", default=os.path.join(ROOT, "tests", "models", "TRACED_ZOO.md"))
    args = parser.parse_args()
    results_path = os.path.join(args.out, "trace_results.json")
    os.makedirs(args.out, exist_ok=True)
    results = json.load(open(results_path)) if os.path.exists(results_path) else {}
    for model in args.models.split(","):
        for variant in args.variants.split(","):
            model_dir = os.path.join(args.out, model, variant)
            os.makedirs(model_dir, exist_ok=True)
            entry = trace_one(model, variant, model_dir)
            results[f"{model}/{variant}"] = entry
            print(f"{model}/{variant}", verdict(entry) if "etrt" in entry else entry.get("export"), flush=True)
            with open(results_path, "w") as f:
                json.dump(results, f, indent=1)
            with open(args.markdown, "w") as f:
                f.write(render(results))


if __name__ == "__main__":
    main()
