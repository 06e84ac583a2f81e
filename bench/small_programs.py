"""Programs of many small operators: etrt vs ExecuTorch's portable kernels, each
runtime in its own process, alternating, several rounds (issue 16's targets).

    python3 bench/small_programs.py [--build build] [--rounds 5] [--runs 2000]

Programs: `elementwise22` (the issue's 22-instruction program: sub, abs, add, div,
clamp, neg, exp, mul, rsqrt, pow, tanh, where, sigmoid, sum, softmax, mean on
70-element tensors, exported here) and the transformer-style reference programs
(tests/models/generated/transformer_encoder, two_methods, mlp).

etrt's time is `etrt run`'s median (C++, no Python in the loop, one thread). ExecuTorch
has no C++ runner in its wheel, so its time is `executorch.runtime`'s execute() minus
the cost of its Python binding, estimated each round by `baseline`: a one-add
program taking elementwise22's two [1, 70] inputs (the reference programs' inputs are
of similar size; a larger estimate only makes the ratio worse for etrt).
Each cell: median over rounds of each round's median; p99 is ExecuTorch's raw; the ratio is
the median of the rounds' own ratios (each round's runs are adjacent in time, so the
machine's drift between rounds cancels), with their range. The last row measures
elementwise22 without any binding estimate: per-body time as the difference between a
program of REPEATS bodies and one body, divided by REPEATS - 1, in each runtime.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "tests" / "models" / "generated"
REPEATS = 10  # bodies in elementwise22_repeated


def export_small(out_dir: Path):
    """Child process: writes elementwise22.pte and its baseline, with inputs."""
    import torch
    from executorch.exir import to_edge

    sys.path.insert(0, str(ROOT / "tests" / "models" / "dispatch"))
    from export_dispatch import Elementwise22, elementwise22_inputs  # the program CI's dispatch budget guards

    class Elementwise22Repeated(torch.nn.Module):
        """The 22-instruction body REPEATS times (constants differ so nothing is merged), results summed:
        the difference to a single body is REPEATS - 1 bodies (+ one add each) with every fixed cost of a
        call (binding, input and output handling, the method's own set-up) cancelled."""

        def forward(self, x, y):
            total = None
            for k in range(REPEATS):
                a = (x - y).abs() + x
                b = (a / (y.abs() + (1.0 + 0.01 * k))).clamp(-2.0 - 0.01 * k, 2.0)
                c = (-b).exp() * x
                d = (c.abs() + 1.0).rsqrt().pow(2.0).tanh()
                e = torch.where(d > 0.5, d, x).sigmoid()
                r = torch.softmax(e, -1).mean(-1, keepdim=True) + e.sum(-1, keepdim=True)
                total = r if total is None else total + r
            return total

    class Baseline(torch.nn.Module):
        def forward(self, x, y):
            return (x + y)[:, :1]

    inputs = elementwise22_inputs()
    for name, module in (("elementwise22", Elementwise22()), ("elementwise22_baseline", Baseline()),
                         ("elementwise22_repeated", Elementwise22Repeated())):
        program = to_edge(torch.export.export(module.eval(), inputs)).to_executorch()
        (out_dir / f"{name}.pte").write_bytes(program.buffer)
    for i, tensor in enumerate(inputs):
        np.save(out_dir / f"elementwise22_input_{i}.npy", tensor.numpy())


def reference_inputs(model: str):
    meta = json.loads((GENERATED / model / "meta.json").read_text())
    method, spec = next(iter(meta["methods"].items()))
    case = spec["cases"][-1]
    with np.load(GENERATED / model / case["inputs_file"]) as data:
        return method, [data[f"input_{i}"] for i in range(len(data.files))]


def time_executorch(pte: str, method: str, input_files: list, runs: int):
    """Child process: ExecuTorch's execute() over `runs` calls; prints JSON median/p99 in ms."""
    import torch
    from executorch.runtime import Runtime

    inputs = [torch.from_numpy(np.load(f)) for f in input_files]
    m = Runtime.get().load_program(pte).load_method(method)
    for _ in range(50):
        m.execute(inputs)
    samples = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        m.execute(inputs)
        samples.append((time.perf_counter_ns() - start) / 1e6)
    samples.sort()
    print(json.dumps({"median": statistics.median(samples), "p99": samples[int(0.99 * (len(samples) - 1))]}))


def etrt_median(build: str, pte: str, method: str, input_files: list, runs: int) -> float:
    args = [str(Path(build) / "bin" / "etrt"), "run", pte, "--method", method, "--iterations", str(runs)]
    for f in input_files:
        args += ["--input", f]
    out = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "ETRT_NUM_THREADS": "1"})
    match = re.search(r"median ([0-9.]+) ms", out.stdout)
    if not match:
        raise RuntimeError(f"etrt run failed on {pte}:\n{out.stdout}\n{out.stderr}")
    return float(match.group(1))


def executorch_time(pte: str, method: str, input_files: list, runs: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child-executorch", pte, method, str(runs), *input_files],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"ExecuTorch failed on {pte}:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child-executorch":
        pte, method, runs, *files = sys.argv[2:]
        time_executorch(pte, method, files, int(runs))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--child-export":
        export_small(Path(sys.argv[2]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([sys.executable, __file__, "--child-export", str(tmp)], check=True)
        small_inputs = [str(tmp / f"elementwise22_input_{i}.npy") for i in range(2)]
        baseline = str(tmp / "elementwise22_baseline.pte")
        cases = [("elementwise22", str(tmp / "elementwise22.pte"), "forward", small_inputs)]
        for model in ("transformer_encoder", "two_methods", "mlp"):
            method, arrays = reference_inputs(model)
            files = []
            for i, array in enumerate(arrays):
                files.append(str(tmp / f"{model}_input_{i}.npy"))
                np.save(files[-1], array)
            cases.append((model, str(GENERATED / model / "portable.pte"), method, files))

        print(f"{'program':22} {'etrt ms':>9} {'ET ms':>9} {'ET p99':>9} {'ET binding':>10} {'ratio':>7} "
              f"{'ratio range':>13}")
        for name, pte, method, files in cases:
            etrt_rounds, et_rounds, p99_rounds, binding_rounds, ratios = [], [], [], [], []
            for _ in range(args.rounds):  # alternate: each round runs every runtime once, in its own process
                etrt_rounds.append(etrt_median(args.build, pte, method, files, args.runs))
                et = executorch_time(pte, method, files, args.runs)
                et_rounds.append(et["median"])
                p99_rounds.append(et["p99"])
                binding_rounds.append(executorch_time(baseline, "forward", small_inputs, args.runs)["median"])
                # The ratio of one round: its processes ran minutes apart at most, so the machine's drift
                # between rounds cancels.
                ratios.append(etrt_rounds[-1] / max(et_rounds[-1] - binding_rounds[-1], 1e-9))
            print(f"{name:22} {statistics.median(etrt_rounds):9.4f} {statistics.median(et_rounds):9.4f} "
                  f"{statistics.median(p99_rounds):9.4f} {statistics.median(binding_rounds):10.4f} "
                  f"{statistics.median(ratios):7.3f} {min(ratios):6.3f}-{max(ratios):<6.3f}", flush=True)

        # elementwise22 by difference: (t(REPEATS bodies) - t(1 body)) / (REPEATS - 1) in each runtime, so no
        # binding estimate enters. Each body also carries one add that sums the results.
        repeated = str(tmp / "elementwise22_repeated.pte")
        single = str(tmp / "elementwise22.pte")
        etrt_body, et_body, ratios = [], [], []
        for _ in range(args.rounds):
            etrt_one = etrt_median(args.build, single, "forward", small_inputs, args.runs)
            et_one = executorch_time(single, "forward", small_inputs, args.runs)["median"]
            etrt_many = etrt_median(args.build, repeated, "forward", small_inputs, args.runs)
            et_many = executorch_time(repeated, "forward", small_inputs, args.runs)["median"]
            etrt_body.append((etrt_many - etrt_one) / (REPEATS - 1))
            et_body.append((et_many - et_one) / (REPEATS - 1))
            ratios.append(etrt_body[-1] / max(et_body[-1], 1e-9))
        print(f"{'elementwise22 (slope)':22} {statistics.median(etrt_body):9.4f} {statistics.median(et_body):9.4f} "
              f"{'':>9} {'none':>10} {statistics.median(ratios):7.3f} {min(ratios):6.3f}-{max(ratios):<6.3f}",
              flush=True)

if __name__ == "__main__":
    main()
