"""Lowers two models with EwChainBackend (ewchain.py) and writes them as .pte:

    python3 export.py OUT_DIR

OUT_DIR/ewchain_only/     model.pte (the whole model is one EwChainBackend call)
OUT_DIR/ewchain_xnnpack/  model.pte (linear layers lowered to XNNPACK, the chain between them to EwChainBackend)
each with input_<i>.npy and expected_0.npy (eager PyTorch).
"""
import os
import sys

import numpy as np
import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ewchain import EwChainPartitioner  # noqa: E402


class GatedChain(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x * y) * torch.relu(x - y) - torch.tanh(-y)


class LinearChainLinear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        return self.fc2(torch.sigmoid(h) * h + torch.tanh(h))


def export(model, example, partitioners, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    edge = to_edge_transform_and_lower(torch.export.export(model, example), partitioner=partitioners)
    program = edge.to_executorch()
    with open(os.path.join(out_dir, "model.pte"), "wb") as f:
        f.write(program.buffer)
    for i, tensor in enumerate(example):
        np.save(os.path.join(out_dir, f"input_{i}.npy"), tensor.numpy())
    with torch.no_grad():
        np.save(os.path.join(out_dir, "expected_0.npy"), model(*example).numpy())
    plan = program.executorch_program.execution_plan[0]
    delegates = [d.id for d in plan.delegates]
    operators = [op.name + ("." + op.overload if op.overload else "") for op in plan.operators]
    print(f"wrote {out_dir}/model.pte delegates: {', '.join(delegates)}; operators: {', '.join(operators) or '-'}")


def main(out_dir: str) -> None:
    torch.manual_seed(0)
    export(GatedChain().eval(), (torch.randn(4, 64), torch.randn(4, 64)), [EwChainPartitioner()],
           os.path.join(out_dir, "ewchain_only"))
    export(LinearChainLinear().eval(), (torch.randn(4, 16),), [EwChainPartitioner(), XnnpackPartitioner()],
           os.path.join(out_dir, "ewchain_xnnpack"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
