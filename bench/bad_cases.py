"""Latency under the bad cases of issue 15, etrt and ExecuTorch side by side.

    python3 bench/bad_cases.py [--rounds 40] [--build build] [--models small_cnn ...] [--write]

Every cell runs in a fresh process of its own (one runtime per process, so
neither runtime's pool disturbs the other's), loads one program, times the
first execute after load_method (first run) and then `--rounds` executes:
  alone    nothing else runs;
  torch    one torch op, (a @ a).sum() on 256x256, between runs, torch's
           OpenMP at its default policy (its threads spin after each op);
  torch1   the same op on one torch thread (torch.set_num_threads(1)): it evicts
           the caller's caches as "torch" does, but no OpenMP thread spins on
           the other core (not in the default set: a control for "torch");
  busy     two CPU-bound processes run beside it for the whole cell;
  threads  two Python threads, each with its own method of the same program,
           run at once (each thread's samples are pooled).
Reports median, p99 (of the rounds, so with 40 rounds p99 is the maximum but one)
and first-run latency in milliseconds; with --write also a section of
bench/RESULTS.md (replacing an earlier "## Bad cases" section).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "models" / "generated"
SCENARIOS = ("alone", "torch", "busy", "threads")


def percentile(samples, p):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


# ---------------------------------------------------------------- child side

def child(args):
    """One cell: prints {"load_ms", "first_ms", "samples"} as JSON."""
    import numpy as np
    model_dir = MODELS / args.model
    meta = json.loads((model_dir / "meta.json").read_text())
    method_name, spec = next(iter(meta["methods"].items()))
    with np.load(model_dir / spec["cases"][-1]["inputs_file"]) as data:
        arrays = [data[f"input_{i}"] for i in range(len(data.files))]
    program_path = model_dir / f"{args.variant}.pte"
    torch = None
    if args.scenario.startswith("torch") or args.runtime == "executorch":
        import torch
        if args.scenario == "torch1":
            torch.set_num_threads(1)

    if args.runtime == "etrt":
        sys.path.insert(0, str(ROOT / "tests" / "support"))
        os.environ["ETRT_BUILD_DIR"] = args.build
        import etrt_ctypes
        library = etrt_ctypes.Library(Path(args.build) / "lib" / "libetrt.so.1")
        program = library.load_program(program_path)

        def make_call():
            method = program.load_method(method_name)
            prepared = method.prepare_inputs(arrays)
            return method, lambda: method.execute_prepared(prepared, read_outputs=False)
    else:
        from executorch.runtime import Runtime
        program = Runtime.get().load_program(str(program_path))
        tensors = [torch.from_numpy(a) for a in arrays]

        def make_call():
            method = program.load_method(method_name)
            return method, lambda: method.execute(tensors)

    start = time.perf_counter()
    keep, call = make_call()
    load_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    call()
    first_ms = (time.perf_counter() - start) * 1e3

    between = (lambda: None)
    if args.scenario.startswith("torch"):
        a = torch.randn(256, 256)
        between = lambda: (a @ a).sum()

    def loop(fn, rounds, out):
        for _ in range(rounds):
            between()
            start = time.perf_counter()
            fn()
            out.append((time.perf_counter() - start) * 1e3)

    for _ in range(3):  # warm-up, outside the samples
        call()
    samples = []
    if args.scenario == "threads":
        import threading
        keep2, call2 = make_call()
        call2()
        second = []
        threads = [threading.Thread(target=loop, args=(call, args.rounds, samples)),
                   threading.Thread(target=loop, args=(call2, args.rounds, second))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        samples += second
    else:
        loop(call, args.rounds, samples)
    print(json.dumps({"load_ms": load_ms, "first_ms": first_ms, "samples": samples}))


# ---------------------------------------------------------------- parent side

BUSY = "import time\nend = time.time() + 600\nwhile time.time() < end:\n    pass\n"


def run_cell(args, runtime, model, variant, scenario):
    hogs = []
    if scenario == "busy":
        hogs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2)]
        time.sleep(0.2)
    try:
        out = subprocess.run([sys.executable, __file__, "--child", "--runtime", runtime, "--model", model,
                              "--variant", variant, "--scenario", scenario, "--rounds", str(args.rounds),
                              "--build", args.build], capture_output=True, text=True, timeout=600)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    if out.returncode != 0:
        raise RuntimeError(f"{runtime} {model}/{variant} {scenario} failed:\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    samples = result["samples"]
    return {"median": statistics.median(samples), "p99": percentile(samples, 0.99),
            "first": result["first_ms"], "load": result["load_ms"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--models", nargs="*", default=["small_cnn", "mobilenet_v2_block"])
    parser.add_argument("--variants", nargs="*", default=["xnnpack", "portable"])
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--write", action="store_true", help="write the section of bench/RESULTS.md")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--runtime", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--scenario", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    rows = []
    for variant in args.variants:  # all programs of one variant first: an interrupted run has whole variants
        for model in args.models:
            cells = {}
            for scenario in args.scenarios:
                for runtime in ("etrt", "executorch"):
                    cells[(runtime, scenario)] = c = run_cell(args, runtime, model, variant, scenario)
                    print(f"{model:20s} {variant:9s} {scenario:8s} {runtime:10s} median {c['median']:8.3f}  "
                          f"p99 {c['p99']:8.3f}  first {c['first']:8.3f}  load {c['load']:8.2f} ms", flush=True)
            rows.append((model, variant, cells))
            if args.write:  # after every program, so an interrupted run still leaves its rows
                write_results(args, rows)


def write_results(args, rows):
    lines = [
        "## Bad cases: under load, next to torch, two threads (`bench/bad_cases.py`)",
        "",
        f"Generated by `python3 bench/bad_cases.py --rounds {args.rounds} --write` on {time.strftime('%Y-%m-%d %H:%M')}"
        f" ({os.cpu_count()} logical CPUs; etrt at its default pool size). Each cell is a fresh process running one "
        "runtime; milliseconds. alone: nothing else; torch: `(a @ a).sum()` (256x256, default OpenMP policy) "
        "between runs; torch1: the same on one torch thread (a control); busy: two CPU-bound processes beside it; threads: two Python threads each running its "
        "own method. first: the first execute after load_method; load: load_method (the one-time work).",
        "",
        "| model | pte | scenario | etrt median | etrt p99 | etrt first | etrt load | ET median | ET p99 | ET first | ET load |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for model, variant, cells in rows:
        for scenario in args.scenarios:
            e, x = cells[("etrt", scenario)], cells[("executorch", scenario)]
            lines.append(f"| {model} | {variant} | {scenario} | {e['median']:.3f} | {e['p99']:.3f} | {e['first']:.3f} | "
                         f"{e['load']:.2f} | {x['median']:.3f} | {x['p99']:.3f} | {x['first']:.3f} | {x['load']:.2f} |")
    section = "\n".join(lines) + "\n"
    output = ROOT / "bench" / "RESULTS.md"
    text = output.read_text()
    start = text.find("\n## Bad cases")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[:start] + "\n" + section + (text[end:] if end >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    output.write_text(text)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
