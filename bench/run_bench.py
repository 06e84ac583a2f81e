"""Side-by-side latency of etrt and ExecuTorch's own runtime on every reference
program, in one process, alternating runs, written to bench/RESULTS.md.

    python3 bench/run_bench.py [--build build] [--repeats 30] [--threads N] [--only NAME ...]

etrt runs each model's portable.pte through the kernels_optimized plugin;
ExecuTorch runs the same portable.pte (its portable kernels) and the model's
xnnpack.pte (its XNNPACK delegate). Timings alternate etrt / ExecuTorch per
iteration so drift in machine speed hits both alike; each cell is a median.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "models" / "generated"
sys.path.insert(0, str(ROOT / "tests" / "support"))


def cpu_name():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def load_inputs(model_dir, case):
    with np.load(model_dir / case["inputs_file"]) as data:
        return [data[f"input_{i}"] for i in range(len(data.files))]


def time_call(fn, repeats, warmup=3):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return samples


def cli_median(build, program, method, model_dir, case, iterations=500):
    """etrt's own latency without any Python in the loop: `etrt run`'s median."""
    import re
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, array in enumerate(load_inputs(model_dir, case)):
            files += ["--input", f"{tmp}/input_{i}.npy"]
            np.save(files[-1], array)
        out = subprocess.run([str(Path(build) / "bin" / "etrt"), "run", str(program), "--method", method,
                              "--iterations", str(iterations), *files], capture_output=True, text=True)
    match = re.search(r"median ([0-9.]+) ms", out.stdout)
    return float(match.group(1)) if match else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=0, help="etrt pool size (0: default)")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--output", default=str(ROOT / "bench" / "RESULTS.md"))
    args = parser.parse_args()

    os.environ["ETRT_BUILD_DIR"] = args.build
    import etrt_ctypes
    import torch
    from executorch.runtime import Runtime

    etrt = etrt_ctypes.Library(Path(args.build) / "lib" / "libetrt.so.1")
    if args.threads:
        etrt.set_num_threads(args.threads)
    et_runtime = Runtime.get()
    index = json.loads((MODELS / "index.json").read_text())
    rows = []
    for model in index["models"]:
        if model["kind"] != "model" or (args.only and model["name"] not in args.only):
            continue
        model_dir = MODELS / model["dir"]
        meta = json.loads((model_dir / "meta.json").read_text())
        method_name, spec = next(iter(meta["methods"].items()))
        case = spec["cases"][-1]  # the largest case for dynamic models
        inputs = load_inputs(model_dir, case)
        torch_inputs = [torch.from_numpy(a) for a in inputs]

        etrt_method = etrt.load_program(model_dir / "portable.pte").load_method(method_name)
        etrt_inputs = etrt_method.prepare_inputs(inputs)
        et_portable = et_runtime.load_program(str(model_dir / "portable.pte")).load_method(method_name)
        et_xnnpack = etrt_xnnpack = None
        if (model_dir / "xnnpack.pte").exists():
            et_xnnpack = et_runtime.load_program(str(model_dir / "xnnpack.pte")).load_method(method_name)
            etrt_xnnpack = etrt.load_program(model_dir / "xnnpack.pte").load_method(method_name)
            etrt_xnnpack_inputs = etrt_xnnpack.prepare_inputs(inputs)

        samples = {"etrt": [], "et_portable": [], "etrt_xnnpack": [], "et_xnnpack": []}
        calls = {
            "etrt": lambda: etrt_method.execute_prepared(etrt_inputs, read_outputs=False),
            "et_portable": lambda: et_portable.execute(torch_inputs),
            "etrt_xnnpack": (lambda: etrt_xnnpack.execute_prepared(etrt_xnnpack_inputs, read_outputs=False))
            if etrt_xnnpack else None,
            "et_xnnpack": (lambda: et_xnnpack.execute(torch_inputs)) if et_xnnpack else None,
        }
        # Alternate in rounds so every runtime sees the same machine conditions.
        rounds = 5
        for _ in range(rounds):
            for name, call in calls.items():
                if call is not None:
                    samples[name] += time_call(call, max(1, args.repeats // rounds), warmup=1)
        medians = {name: statistics.median(s) if s else float("nan") for name, s in samples.items()}
        medians["etrt_cli"] = cli_median(args.build, model_dir / "portable.pte", method_name, model_dir, case)
        if etrt_xnnpack:
            medians["etrt_cli_xnnpack"] = cli_median(args.build, model_dir / "xnnpack.pte", method_name, model_dir, case)
        rows.append((model["name"], medians))
        print(f"{model['name']:22s} etrt {medians['etrt']:8.3f}  ET portable {medians['et_portable']:8.3f}  "
              f"etrt xnnpack {medians['etrt_xnnpack']:8.3f}  ET xnnpack {medians['et_xnnpack']:8.3f} ms", flush=True)

    threads = etrt.lib.et_threadpool_size()
    lines = [
        "# Benchmark: etrt vs ExecuTorch",
        "",
        f"Machine: {cpu_name()}, {os.cpu_count()} logical CPUs. etrt thread pool: {threads} threads. "
        f"torch {torch.__version__}, executorch from PyPI. Generated by `python3 bench/run_bench.py` on "
        f"{time.strftime('%Y-%m-%d')}; medians of {args.repeats} runs per cell, runtimes alternating in one process.",
        "",
        "Both runtimes run `portable.pte` (etrt: the kernels_optimized plugin; ExecuTorch: its portable "
        "kernels) and `xnnpack.pte` (etrt: its XNNPACK plugin on Debian's 2022 XNNPACK; ExecuTorch: its "
        "bundled XNNPACK). Targets: "
        "etrt portable / ET portable <= 0.1; etrt portable / ET XNNPACK <= 1.5; etrt XNNPACK / ET XNNPACK <= 1.0.",
        "",
        "| model | etrt portable | ET portable | etrt XNNPACK | ET XNNPACK | etrt/ET portable | etrt portable/ET XNNPACK | etrt XNNPACK/ET XNNPACK | etrt portable, C++ loop | etrt XNNPACK, C++ loop |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in rows:
        lines.append(f"| {name} | {m['etrt']:.3f} | {m['et_portable']:.3f} | {m['etrt_xnnpack']:.3f} | "
                     f"{m['et_xnnpack']:.3f} | {m['etrt'] / m['et_portable']:.3f} | "
                     f"{m['etrt'] / m['et_xnnpack']:.2f} | {m['etrt_xnnpack'] / m['et_xnnpack']:.2f} | "
                     f"{m['etrt_cli']:.4f} | {m.get('etrt_cli_xnnpack', float('nan')):.4f} |")
    lines += ["", "All latencies in milliseconds (medians). The etrt columns time set-inputs + execute "
              "through ctypes (outputs stay in place, readable); ExecuTorch's time `Method.execute` on torch "
              "tensors. The last two columns are `etrt run`'s own median (same program, no Python in the "
              "loop, separate process): the floor the Python entry adds to."]
    # Sections written by hand or by other scripts (from the first "## " heading on) are kept.
    output = Path(args.output)
    kept = ""
    if output.exists():
        previous = output.read_text()
        start = previous.find("\n## ")
        kept = previous[start:] if start >= 0 else ""
    output.write_text("\n".join(lines) + "\n" + kept)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
