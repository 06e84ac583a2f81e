"""Instructions of one execute of a program, counted by callgrind (deterministic, unlike wall time here).

`etrt run` executes under callgrind twice, with --iterations 1 and 1 + RUNS, collecting only inside
et_method_execute; the difference divided by RUNS is the instructions of one execute, free of the first run's
one-time work, of start-up and of writing results. Used by bench/tracing_overhead.py,
bench/dispatch_overhead.py and the CI budget test of tests/dispatch/.
"""
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path


def valgrind_available():
    return shutil.which("valgrind") is not None


def instructions(etrt, program, iterations, extra, tmp, dump=None):
    """Ir inside et_method_execute over `iterations` runs; `extra` may use {tmp}; `dump` keeps the callgrind file."""
    out = Path(dump) if dump else Path(tmp) / "callgrind.out"
    args = [a.format(tmp=tmp) for a in extra]
    env = {**os.environ, "ETRT_PLUGIN_PATH": "", "ETRT_NUM_THREADS": "1"}
    subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=et_method_execute",
                                    f"--callgrind-out-file={out}", str(etrt), "run", str(program),
                                    "--iterations", str(iterations), *args], check=True, capture_output=True, env=env)
    return int(re.search(r"^summary: (\d+)", out.read_text(), re.M)[1])


def per_run(etrt, program, runs, extra=()):
    """Ir of one execute: (Ir at 1 + runs runs - Ir at 1 run) / runs."""
    with tempfile.TemporaryDirectory() as tmp:
        many = instructions(etrt, program, 1 + runs, extra, tmp)
        return (many - instructions(etrt, program, 1, extra, tmp)) / runs


def inclusive(dump, function):
    """Ir spent in `function` and what it called, from a callgrind file (callgrind_annotate --inclusive)."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(dump)],
                         check=True, capture_output=True, text=True).stdout
    # The function's whole inclusive cost is its largest line; the others split it by source file.
    costs = [int(m[1].replace(",", "")) for line in out.splitlines()
             if (m := re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+\S*:" + re.escape(function) + r"\(", line))]
    return max(costs, default=0)


def per_run_split(etrt, program, runs, extra, function):
    """(Ir of one execute, of which inside `function`), both as per_run counts them."""
    with tempfile.TemporaryDirectory() as tmp:
        many_dump, one_dump = Path(tmp) / "many.out", Path(tmp) / "one.out"
        many = instructions(etrt, program, 1 + runs, extra, tmp, many_dump)
        one = instructions(etrt, program, 1, extra, tmp, one_dump)
        return (many - one) / runs, (inclusive(many_dump, function) - inclusive(one_dump, function)) / runs

