"""kernels_optimized's x86-64 baseline build vs its x86-64-v3 build on every
whole reference program (tests/models/generated, kind "model"), each level in its
own `etrt run` process (ETRT_CPU_LEVEL forces the level), alternating, several
rounds; plus callgrind's instruction count of one execute at each level.

    python3 bench/cpu_levels.py [--build build] [--rounds 5] [--runs 300] [--callgrind-runs 3]

Each time cell: median over rounds of each round's `etrt run` median (one thread).
The Ir columns are instructions of one execute inside et_method_execute
(bench/callgrind_counts.py); `--callgrind-runs 0` skips them.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from callgrind_counts import per_run, valgrind_available  # noqa: E402
from small_programs import GENERATED, ROOT, etrt_median, reference_inputs  # noqa: E402

LEVELS = ("x86-64", "x86-64-v3")


def at_level(level, call):
    os.environ["ETRT_CPU_LEVEL"] = level
    try:
        return call()
    finally:
        del os.environ["ETRT_CPU_LEVEL"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--callgrind-runs", type=int, default=3)
    args = parser.parse_args()
    etrt = Path(args.build) / "bin" / "etrt"
    models = [m["name"] for m in json.loads((GENERATED / "index.json").read_text())["models"] if m["kind"] == "model"]
    count_instructions = args.callgrind_runs > 0 and valgrind_available()

    print(f"{'program':20} {'x86-64 ms':>10} {'v3 ms':>9} {'speed-up':>8} {'x86-64 Ir':>11} {'v3 Ir':>11} {'Ir ratio':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            method, arrays = reference_inputs(model)
            files = []
            for i, array in enumerate(arrays):
                files.append(str(Path(tmp) / f"{model}_input_{i}.npy"))
                np.save(files[-1], array)
            pte = str(GENERATED / model / "portable.pte")
            rounds = {level: [] for level in LEVELS}
            for _ in range(args.rounds):  # alternate: each round runs each level once, in its own process
                for level in LEVELS:
                    rounds[level].append(at_level(level, lambda: etrt_median(args.build, pte, method, files, args.runs)))
            base, v3 = (statistics.median(rounds[level]) for level in LEVELS)
            line = f"{model:20} {base:10.4f} {v3:9.4f} {base / v3:8.2f}"
            if count_instructions:
                extra = ["--method", method] + [a for f in files for a in ("--input", f)]
                ir = [at_level(level, lambda: per_run(etrt, pte, args.callgrind_runs, extra)) for level in LEVELS]
                line += f" {ir[0]:11,.0f} {ir[1]:11,.0f} {ir[0] / ir[1]:8.2f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
