#!/usr/bin/env python3
"""Exports the small programs whose XNNPACK graphs make NaN out of finite inputs (test_nan_inside.py).

    python3 tests/xnnpack/export_nan_programs.py [--out tests/xnnpack/generated_nan]

Each NAME/ holds xnnpack.pte (ExecuTorch's XnnpackPartitioner), portable.pte, inputs.npz, expected.npz (eager
PyTorch), executorch_xnnpack.npz and executorch_portable.npz (ExecuTorch's runtime on the two files, run by
this process). Every input is finite; every expected output holds a NaN that the graph itself makes."""
import argparse
import json
from pathlib import Path

import numpy as np
import torch


class LinearReluOverflow(torch.nn.Module):
    """Linear -> Linear -> ReLU -> Linear: the first layer overflows to +inf and -inf, the second adds them."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = torch.nn.Linear(4, 8), torch.nn.Linear(8, 8), torch.nn.Linear(8, 2)
        with torch.no_grad():
            self.a.weight.mul_(4.0)

    def forward(self, x):
        return self.c(torch.relu(self.b(self.a(x))))


class ZeroByZero(torch.nn.Module):
    """0 / 0 inside a graph: x / y where both are 0, then a linear layer."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 3)

    def forward(self, x, y):
        return self.fc(x / y + x)


class ConvOverflowPool(torch.nn.Module):
    """Conv2d whose output overflows, then Conv2d with ReLU and max pooling: inf - inf inside the second conv."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(2, 4, 3, padding=1)
        self.c2 = torch.nn.Conv2d(4, 4, 3, padding=1)
        with torch.no_grad():
            self.c1.weight.mul_(8.0)

    def forward(self, x):
        return torch.nn.functional.max_pool2d(torch.relu(self.c2(self.c1(x))), 2)


def programs():
    torch.manual_seed(0)
    big = np.array([[3e38, 3e38, 1, 2]], np.float32)
    x6 = np.array([[0.0, 1.0, -2.0, 0.5, 3.0, 0.0]], np.float32)
    image = np.full((1, 2, 6, 6), 3e38, np.float32)
    image[0, 1] = -1.0
    return {
        "linear_relu_overflow": (LinearReluOverflow(), [big]),
        "zero_by_zero": (ZeroByZero(), [x6, np.array([[0.0, 2.0, 1.0, 4.0, 1.0, 3.0]], np.float32)]),
        "conv_overflow_pool": (ConvOverflowPool(), [image]),
    }


def main():
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge, to_edge_transform_and_lower
    from executorch.runtime import Runtime

    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "generated_nan"))
    out = Path(parser.parse_args().out)
    index = {}
    for name, (model, inputs) in programs().items():
        model.eval()
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        args = tuple(torch.from_numpy(x) for x in inputs)
        with torch.no_grad():
            expected = model(*args)
        expected = expected if isinstance(expected, tuple) else (expected,)
        assert all(torch.isnan(e).any() for e in expected), f"{name}: eager gives no NaN"
        files = {
            "xnnpack.pte": to_edge_transform_and_lower(torch.export.export(model, args),
                                                       partitioner=[XnnpackPartitioner()]).to_executorch().buffer,
            "portable.pte": to_edge(torch.export.export(model, args)).to_executorch().buffer,
        }
        for file, data in files.items():
            (d / file).write_bytes(data)
        np.savez(d / "inputs.npz", **{f"input_{i}": x for i, x in enumerate(inputs)})
        np.savez(d / "expected.npz", **{f"output_{i}": e.numpy() for i, e in enumerate(expected)})
        for flow in ("xnnpack", "portable"):
            method = Runtime.get().load_program(str(d / f"{flow}.pte")).load_method("forward")
            outputs = method.execute([a.clone() for a in args])
            np.savez(d / f"executorch_{flow}.npz", **{f"output_{i}": o.numpy() for i, o in enumerate(outputs)})
        index[name] = model.__doc__.strip()
        print(name, "eager", [e.numpy().ravel()[:6] for e in expected])
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n")


if __name__ == "__main__":
    main()
