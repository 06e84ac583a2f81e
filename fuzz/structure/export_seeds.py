"""Exports the hand-made seeds of the structure-aware target (fuzz/corpus/pte_struct), programs
whose instructions the reference models do not have: prim operators and control flow.

    python3 fuzz/structure/export_seeds.py fuzz/corpus/pte_struct

prims_view_gather_item.pte  gather, _local_scalar_dense of a constant, cat of a tensor list
prims_dynamic_view.pte      executorch_prim::et_view of a tensor with a dynamic dimension (its size list
                            made of Int values), gather on the view
control_flow_cond.pte       torch.cond: JumpFalse and Move instructions
xnnpack_same_shapes.pte     an XNNPACK graph whose values mostly share one shape (linear, relu, add,
                            sigmoid, mul, tanh on [2, 8]): a node can read another value than its
                            producer's and still pass the shape checks
The other seeds are copies of small reference programs (tests/models/generated*).
"""
import sys
from pathlib import Path

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge, to_edge_transform_and_lower
from torch.export import Dim


class ViewGatherItem(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.tensor([2], dtype=torch.int64))

    def forward(self, x, idx):
        y = x.view(3, 2)
        return torch.gather(y, 0, idx) * self.k.item(), torch.cat([y, y, y], 0)


class DynamicView(torch.nn.Module):
    def forward(self, x, idx):
        y = x.view(-1, 3)
        return torch.gather(y, 0, idx) * 2, y.sum(0)


class SameShapes(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(8, 8)
        self.second = torch.nn.Linear(8, 8)

    def forward(self, x):
        a = torch.relu(self.first(x))
        b = torch.sigmoid(a + x)
        return torch.tanh(self.second(b) * a)


class Cond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda v: v.sin(), lambda v: v.cos(), (x,))


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    models = {
        "prims_view_gather_item.pte": (ViewGatherItem(), (torch.randn(2, 3), torch.zeros(2, 2, dtype=torch.int64)), None),
        "prims_dynamic_view.pte": (DynamicView(), (torch.randn(2, 6), torch.zeros(2, 3, dtype=torch.int64)),
                                   {"x": {0: Dim("b", min=1, max=8)}, "idx": None}),
        "control_flow_cond.pte": (Cond(), (torch.randn(3),), None),
    }
    for name, (module, args, dynamic_shapes) in models.items():
        program = to_edge(torch.export.export(module, args, dynamic_shapes=dynamic_shapes)).to_executorch()
        (out / name).write_bytes(program.buffer)
    torch.manual_seed(0)
    exported = torch.export.export(SameShapes().eval(), (torch.randn(2, 8),))
    program = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch()
    (out / "xnnpack_same_shapes.pte").write_bytes(program.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
