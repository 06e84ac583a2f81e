"""Exports the end-to-end program of the vector math benchmark (bench/RESULTS.md, "Vector math"):
sigmoid, tanh, gelu (both forms), silu, exp, log1p and softmax on a [64, 1024] float32 input, lowered with
ExecuTorch's portable operators (no delegate), so every activation runs in etrt's kernels_optimized.

    python3 bench/kernels/export_activations.py OUT_DIR   # writes OUT_DIR/activations.pte and input.npy
"""
import sys
from pathlib import Path

import numpy as np
import torch
from executorch.exir import to_edge


class Activations(torch.nn.Module):
    def forward(self, x):
        y = torch.sigmoid(x) + torch.tanh(x)
        y = y + torch.nn.functional.gelu(x) + torch.nn.functional.gelu(x, approximate="tanh")
        y = y + torch.nn.functional.silu(x) + torch.exp(-x * x) + torch.log1p(x * x)
        return torch.softmax(y, dim=-1)


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    x = torch.randn(64, 1024, generator=torch.Generator().manual_seed(0)) * 3
    program = to_edge(torch.export.export(Activations(), (x,))).to_executorch()
    (out / "activations.pte").write_bytes(program.buffer)
    np.save(out / "input.npy", x.numpy())


if __name__ == "__main__":
    main(sys.argv[1])
