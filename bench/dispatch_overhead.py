"""Per-operator dispatch cost on chains of tiny operators (issue 16), in instructions (callgrind) and wall time.

    python3 bench/dispatch_overhead.py [--build build] [--runs 10] [--wall-iterations 20000] [--annotate CASE]

The programs of tests/models/dispatch/ (65 operators: mul, add, relu, exp, view_copy, permute_copy, where;
see export_dispatch.py) run in `etrt run` with their committed inputs. For each case the table gives the
instructions of one execute (callgrind_counts.per_run: inside et_method_execute, first run excluded), the same
divided by the operator instructions the program executes, and the wall time of one run (wall_us; noisy on a
loaded machine, the instruction counts are not). --annotate CASE writes CASE's callgrind profile and prints
callgrind_annotate --inclusive=yes of it.
"""
import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from callgrind_counts import instructions, per_run

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "models" / "dispatch"
# case: (program, inputs directory)
CASES = {
    "static_1": ("static_1", "inputs_1"),
    "static_64": ("static_64", "inputs_64"),
    "dynamic_1": ("dynamic", "inputs_1"),
    "dynamic_64": ("dynamic", "inputs_64"),
    "elementwise22": ("elementwise22", "inputs_70"),
}


def case_args(case):
    program, inputs = CASES[case]
    folder = MODELS / inputs
    return MODELS / f"{program}.pte", ["--input", str(folder / "x.npy"), "--input", str(folder / "y.npy")]


def operator_count(case):
    """Operator instructions one execute runs (every node of the exported graph but memory planning's)."""
    graphs = json.loads((MODELS / "graphs.json").read_text())
    return sum(graphs[CASES[case][0]].values())


def ir_per_operator(etrt, case, runs):
    program, args = case_args(case)
    return per_run(etrt, program, runs, args) / operator_count(case)


def wall_us(etrt, case, iterations, repeats=5):
    """Wall time of one run (set_input + execute): (t(1 + N runs) - t(1 run)) / N, each the best of `repeats`.

    `etrt run` prints its per-run latency in whole microseconds, too coarse here; the difference of two process
    times keeps start-up and method load out, as the instruction count does."""
    program, args = case_args(case)
    env = {"ETRT_PLUGIN_PATH": "", "ETRT_NUM_THREADS": "1"}

    def best(n):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run([str(etrt), "run", str(program), *args, "--iterations", str(n)], check=True,
                           capture_output=True, env=env)
            times.append(time.perf_counter() - start)
        return min(times)
    return (best(1 + iterations) - best(1)) / iterations * 1e6


def annotate(etrt, case, dump):
    program, args = case_args(case)
    with tempfile.TemporaryDirectory() as tmp:
        instructions(etrt, program, 11, args, tmp, dump=dump)
    return subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=99", str(dump)], check=True,
                          capture_output=True, text=True).stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--wall-iterations", type=int, default=20000)
    parser.add_argument("--only", nargs="*", choices=list(CASES))
    parser.add_argument("--annotate", choices=list(CASES))
    args = parser.parse_args()
    etrt = Path(args.build) / "bin" / "etrt"
    if args.annotate:
        print(annotate(etrt, args.annotate, Path(f"callgrind.{args.annotate}.out")))
        return
    print("| case | operators | Ir/run | Ir/operator | wall/run (us) | wall/operator (ns) |")
    print("|---|---:|---:|---:|---:|---:|")
    for case in args.only or CASES:
        program, extra = case_args(case)
        ir = per_run(etrt, program, args.runs, extra)
        ops = operator_count(case)
        wall = wall_us(etrt, case, args.wall_iterations)
        print(f"| {case} | {ops} | {ir:,.0f} | {ir / ops:,.0f} | {wall:.2f} | {1000 * wall / ops:.0f} |", flush=True)


if __name__ == "__main__":
    main()
