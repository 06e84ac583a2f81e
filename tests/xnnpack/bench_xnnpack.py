"""Latency of the reference xnnpack.pte programs: etrt (xnnpack plugin on
Debian's 2022 XNNPACK) against ExecuTorch's own runtime (its bundled XNNPACK),
at 1 and 2 threads. Not a test; prints a table.

    ETRT_BUILD_DIR=build python3 tests/xnnpack/bench_xnnpack.py [--iterations N] [--rounds R] [--quantized]

--quantized: the quantized programs of tests/models/generated_q (export_quantized.py) instead.
--zoo DIR: ExecuTorch's example models as tests/models/zoo/zoo.py exported them into DIR (its --out,
/tmp/etrt_zoo by default): every DIR/<model>/xnnpack*/model.pte with its input_<i>.npy files, except
programs taking bfloat16 inputs (bfloat16.json).
--rounds: the two runtimes alternate R times per thread count (fresh processes each time); the table shows
the median over rounds.

Each runtime runs in its own process (two thread pools spinning in one
process fight over the cores). etrt's time is set_input + execute through
ctypes with prebuilt structs; ExecuTorch's is Method.execute from Python.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).resolve().parents[2]
MODELS = SOURCE / "tests" / "models" / "generated"
QUANTIZED_MODELS = SOURCE / "tests" / "models" / "generated_q"
QUANTIZED = "--quantized" in sys.argv
ZOO = Path(sys.argv[sys.argv.index("--zoo") + 1]) if "--zoo" in sys.argv else None
sys.path.insert(0, str(SOURCE / "tests" / "support"))
import etrt_ctypes  # noqa: E402


def arrays(path):
    if path.is_dir():  # a zoo program's directory: input_0.npy, input_1.npy, ...
        count = len(list(path.glob("input_*.npy")))
        return [np.load(path / f"input_{i}.npy") for i in range(count)]
    with np.load(path) as data:
        return [data[f"input_{i}"] for i in range(len(data.files))]


def median_us(fn, iterations):
    for _ in range(max(3, iterations // 10)):
        fn()
    times = []
    for _ in range(iterations):
        start = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - start)
    return float(np.median(times)) / 1000.0


def etrt_runner(etrt, method, inputs):
    """set_input (prebuilt ctypes structs: one C call per input, data copied
    into planned memory) + execute; the outputs stay in place."""
    import ctypes
    keep, values = [], []
    for array in inputs:
        array = np.require(array, requirements="C")
        sizes = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        strides = (ctypes.c_int64 * max(array.ndim, 1))(*[st // array.itemsize for st in array.strides])
        tensor = etrt_ctypes.Tensor(struct_size=ctypes.sizeof(etrt_ctypes.Tensor),
                                    dtype=etrt_ctypes.NUMPY_TO_DTYPE[array.dtype], rank=array.ndim, sizes=sizes,
                                    strides=strides, data=array.ctypes.data, nbytes=array.nbytes,
                                    capacity_bytes=array.nbytes)
        value = etrt_ctypes.Value(struct_size=ctypes.sizeof(etrt_ctypes.Value), tag=etrt_ctypes.VALUE_TENSOR,
                                  tensor=ctypes.pointer(tensor))
        keep += [array, sizes, strides, tensor]
        values.append(value)
    lib, handle = etrt.lib, method.handle
    error = ctypes.c_void_p()

    def run():
        _ = keep
        for i, v in enumerate(values):
            if lib.et_method_set_input(handle, i, ctypes.byref(v), ctypes.byref(error)) != 0:
                etrt.check(1, error)
        if lib.et_method_execute(handle, ctypes.byref(error)) != 0:
            etrt.check(1, error)
    return run


def cases():
    """(name, method, directory holding xnnpack.pte or model.pte, inputs file or directory) per program."""
    if ZOO is not None:  # programs with bfloat16 inputs are left out: NumPy (and so the etrt runner) has no bfloat16
        return [(f"{pte.parent.parent.name}/{pte.parent.name}", "forward", pte.parent, ".")
                for pte in sorted(ZOO.glob("*/xnnpack*/model.pte"))
                if not json.loads((pte.parent / "bfloat16.json").read_text() if (pte.parent / "bfloat16.json").exists()
                                  else "[]")]
    if QUANTIZED:
        index = json.loads((QUANTIZED_MODELS / "index.json").read_text())["models"]
        return [(name, "forward", QUANTIZED_MODELS / m["dir"], "inputs.npz") for name, m in sorted(index.items())]
    index = json.loads((MODELS / "index.json").read_text())
    found = []
    for model in index["models"]:
        d = MODELS / model["dir"]
        if not (d / "xnnpack.pte").exists():
            continue
        meta = json.loads((d / "meta.json").read_text())
        for method, spec in meta["methods"].items():
            found.append((model["name"] + ("" if method == "forward" else "." + method), method, d,
                          spec["cases"][-1]["inputs_file"]))
    return found


def program_file(d):
    return d / "model.pte" if ZOO is not None else d / "xnnpack.pte"


def bench_etrt(threads, iterations):
    etrt = etrt_ctypes.Library()
    etrt.set_num_threads(threads)
    out = {}
    for name, method_name, d, inputs_file in cases():
        program = etrt.load_program(program_file(d))
        method = program.load_method(method_name)
        out[name] = median_us(etrt_runner(etrt, method, arrays(d / inputs_file)), iterations)
        del method, program
    return out


def bench_executorch(threads, iterations):
    import torch
    from executorch.extension.pybindings import _C
    from executorch.runtime import Runtime
    _C._unsafe_reset_threadpool(threads)
    runtime = Runtime.get()
    out = {}
    for name, method_name, d, inputs_file in cases():
        program = runtime.load_program(str(program_file(d)))
        method = program.load_method(method_name)
        inputs = [torch.from_numpy(a) for a in arrays(d / inputs_file)]
        out[name] = median_us(lambda: method.execute(inputs), iterations)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--child", choices=["etrt", "executorch"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--quantized", action="store_true")
    parser.add_argument("--zoo", metavar="DIR")
    args = parser.parse_args()
    if args.child:  # one runtime per process: two spinning pools would fight over the cores
        fn = bench_etrt if args.child == "etrt" else bench_executorch
        print(json.dumps(fn(args.threads, args.iterations)))
        return
    import subprocess
    rounds = {}
    for _ in range(args.rounds):
        for threads in (1, 2):
            for runtime in ("etrt", "executorch"):
                proc = subprocess.run([sys.executable, __file__, "--child", runtime, "--threads", str(threads),
                                       "--iterations", str(args.iterations)] + (["--quantized"] if QUANTIZED else []) +
                                      (["--zoo", args.zoo] if args.zoo else []),
                                      capture_output=True, text=True, check=True)
                rounds.setdefault((runtime, threads), []).append(json.loads(proc.stdout.strip().splitlines()[-1]))
    results = {key: {name: float(np.median([r[name] for r in runs])) for name in runs[0]}
               for key, runs in rounds.items()}
    print(f"{'program':30} {'etrt 1T':>9} {'ET 1T':>9} {'ratio':>6} {'etrt 2T':>9} {'ET 2T':>9} {'ratio':>6}   (median us)")
    for name, *_ in cases():
        a1, b1 = results[("etrt", 1)][name], results[("executorch", 1)][name]
        a2, b2 = results[("etrt", 2)][name], results[("executorch", 2)][name]
        print(f"{name:30} {a1:>9.1f} {b1:>9.1f} {a1 / b1:>6.2f} {a2:>9.1f} {b2:>9.1f} {a2 / b2:>6.2f}")
    for threads in (1, 2):
        ratios = [results[("etrt", threads)][n] / results[("executorch", threads)][n] for n, *_ in cases()]
        print(f"geometric mean etrt/ExecuTorch at {threads} thread(s): {float(np.exp(np.mean(np.log(ratios)))):.2f}")


if __name__ == "__main__":
    main()
