"""ExecuTorch's own instructions per execute of a program, to compare with etrt's callgrind counts (issue 16).

    python3 bench/executorch_instructions.py PROGRAM.pte [INPUT.npy ...] [--runs 10] [--method forward]

Runs ExecuTorch's Python runtime under callgrind twice, with 1 and with 1 + RUNS executes, and reads from each
profile the inclusive instruction count of `executorch::runtime::Method::execute()`: the C++ method with its
kernels, without the Python binding around it (which costs far more than a small program's kernels, the reason
wall-time comparisons through the binding are noisy). Prints the first execute's count and the steady count per
execute, (Ir(1 + RUNS) - Ir(1)) / RUNS: the figure to set against etrt's `(Ir at 1 + N runs - Ir at 1 run) / N`
inside et_method_execute (bench/callgrind_counts.py).

Slow: the interpreter and torch's import run under valgrind too (several minutes per profile).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SYMBOL = "executorch::runtime::Method::execute()"


def child(pte, method, runs, input_files):
    import numpy as np
    import torch
    from executorch.runtime import Runtime

    inputs = [torch.from_numpy(np.load(f)) for f in input_files]
    m = Runtime.get().load_program(pte).load_method(method)
    for _ in range(runs):
        m.execute(inputs)


def inclusive_count(profile):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", profile],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if SYMBOL in line:
            return int(line.split()[0].replace(",", ""))
    raise RuntimeError(f"{SYMBOL} not in the profile {profile}")


def profile(pte, method, runs, input_files, folder):
    # The real interpreter: a pyenv shim is a shell script, which valgrind would trace instead of python.
    python = os.path.realpath(sys.executable)
    out = os.path.join(folder, f"callgrind.{runs}.out")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, __file__, "--child",
                    "--method", method, "--runs", str(runs), pte, *input_files],
                   check=True, capture_output=True)
    return inclusive_count(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("program")
    parser.add_argument("inputs", nargs="*")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--method", default="forward")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.program, args.method, args.runs, args.inputs)
        return
    with tempfile.TemporaryDirectory() as folder:
        first = profile(args.program, args.method, 1, args.inputs, folder)
        more = profile(args.program, args.method, 1 + args.runs, args.inputs, folder)
    name = re.sub(r"\.pte$", "", os.path.basename(args.program))
    print(f"{name}: ExecuTorch Method::execute() {first:,} instructions the first execute, "
          f"{(more - first) / args.runs:,.0f} per execute after it ({args.runs} more)")


if __name__ == "__main__":
    main()
