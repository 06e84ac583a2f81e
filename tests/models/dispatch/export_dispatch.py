#!/usr/bin/env python3
"""Export the dispatch-overhead programs (issue 16): long chains of tiny operators.

        python3 tests/models/dispatch/export_dispatch.py [--out tests/models/dispatch]

Each program takes x and y (float32, square [n, n]) and runs BLOCKS blocks of
        mul(t, y), add(t, x), relu, exp, view_copy([-1]), view_copy([n, n]), permute_copy([1, 0]), where(mask, t, x)
after one gt (mask = x > 0), so almost all of its cost is per-call dispatch, not arithmetic.
y is small (0.01) so the chain stays finite. Written here:
        static_1.pte   [1, 1] inputs, static shapes
        static_64.pte  [8, 8] inputs, static shapes
        dynamic.pte    [n, n] inputs with n in 1..8 (one symbol for both dims)
        inputs_1/x.npy, inputs_1/y.npy, inputs_64/x.npy, inputs_64/y.npy   the inputs the benchmark feeds
        elementwise22.pte, inputs_70/x.npy, inputs_70/y.npy   issue 16's 22-instruction program on [1, 70]
                       inputs (sub, abs, add, div, clamp, neg, exp, mul, rsqrt, pow, tanh, gt, where, sigmoid,
                       softmax, mean, sum; bench/small_programs.py times it against ExecuTorch)
Exported with torch.export -> executorch.exir.to_edge -> to_executorch, no delegate; view_copy is kept as an
operator (remove_view_copy=False) so that its dispatch is measured too.
"""
import argparse
import json
from pathlib import Path

import numpy as np
import torch

BLOCKS = 8
OPS_PER_BLOCK = 8


class Chain(torch.nn.Module):
    def forward(self, x, y):
        mask = x > 0
        t = x
        n = x.shape[0]
        for _ in range(BLOCKS):
            t = t * y
            t = t + x
            t = torch.relu(t)
            t = torch.exp(t)
            t = t.view(-1)
            t = t.view(n, n)
            t = t.permute(1, 0)
            t = torch.where(mask, t, x)
        return t


class Elementwise22(torch.nn.Module):
    def forward(self, x, y):
        a = (x - y).abs() + x
        b = (a / (y.abs() + 1.0)).clamp(-2.0, 2.0)
        c = (-b).exp() * x
        d = (c.abs() + 1.0).rsqrt().pow(2.0).tanh()
        e = torch.where(d > 0.5, d, x).sigmoid()
        return torch.softmax(e, -1).mean(-1, keepdim=True) + e.sum(-1, keepdim=True)


def elementwise22_inputs():
    torch.manual_seed(0)
    return torch.randn(1, 70), torch.randn(1, 70)


def inputs(n):
    rng = np.random.default_rng(16 + n)
    x = rng.uniform(-1, 1, size=(n, n)).astype(np.float32)
    y = np.full((n, n), 0.01, dtype=np.float32)
    return x, y


def export(out, name, n, dynamic, module=None, example=None):
    from executorch.exir import ExecutorchBackendConfig, to_edge
    if example is None:
        x, y = inputs(n)
        example = (torch.from_numpy(x), torch.from_numpy(y))
    shapes = None
    if dynamic:
        size = torch.export.Dim("n", min=1, max=8)
        shapes = ({0: size, 1: size}, {0: size, 1: size})
    program = torch.export.export(module or Chain(), example, dynamic_shapes=shapes)
    edge = to_edge(program)
    et = edge.to_executorch(ExecutorchBackendConfig(remove_view_copy=False))
    (out / f"{name}.pte").write_bytes(et.buffer)
    ops = {}
    for node in et.exported_program().graph.nodes:
        if node.op == "call_function":
            key = str(node.target)
            if "alloc" in key:  # memory planning's allocations, not instructions
                continue
            ops[key] = ops.get(key, 0) + 1
    return ops


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for n in (1, 8):
        folder = out / f"inputs_{n * n}"
        folder.mkdir(exist_ok=True)
        x, y = inputs(n)
        np.save(folder / "x.npy", x)
        np.save(folder / "y.npy", y)
    e22_inputs = elementwise22_inputs()
    (out / "inputs_70").mkdir(exist_ok=True)
    for name, tensor in zip(("x", "y"), e22_inputs):
        np.save(out / "inputs_70" / f"{name}.npy", tensor.numpy())
    graphs = {"static_1": export(out, "static_1", 1, False), "static_64": export(out, "static_64", 8, False),
              "elementwise22": export(out, "elementwise22", 0, False, Elementwise22().eval(), e22_inputs),
                        "dynamic": export(out, "dynamic", 8, True)}
    (out / "graphs.json").write_text(json.dumps(graphs, indent=1, sort_keys=True) + "\n")
    print(json.dumps(graphs, indent=1))


if __name__ == "__main__":
    main()
