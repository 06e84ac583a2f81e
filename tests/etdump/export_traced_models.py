"""Exports the small programs the tracing tests run, each with its ETRecord.

    python3 export_traced_models.py OUT_DIR

Writes OUT_DIR/NAME.pte, OUT_DIR/NAME.etrecord and OUT_DIR/NAME.npz (inputs
input_0.., eager outputs output_0..) for: plain (portable kernels), xnnpack
(delegated), multi (two methods: forward and encode) and dynamic (a dynamic
batch dimension). Small on purpose: the whole export takes seconds.
"""
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


class Encoder(nn.Module):
    def __init__(self, mlp):
        super().__init__()
        self.mlp = mlp

    def forward(self, x):
        return torch.tanh(self.mlp.fc1(x)) * 2.0


def export(out: Path) -> None:
    from executorch.exir import to_edge, to_edge_transform_and_lower
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    torch.manual_seed(11)
    mlp = Mlp().eval()
    x = torch.randn(2, 8)
    cases = {}

    def save(name, executorch_program, inputs, outputs):
        (out / f"{name}.pte").write_bytes(executorch_program.buffer)
        etrecord = executorch_program.get_etrecord()
        # The Inspector's numerical comparison reruns the reference graph on these.
        etrecord.update_representative_inputs([tuple(inputs)])
        etrecord.save(str(out / f"{name}.etrecord"))
        arrays = {f"input_{i}": t.numpy() for i, t in enumerate(inputs)}
        arrays.update({f"output_{i}": t.detach().numpy() for i, t in enumerate(outputs)})
        np.savez(out / f"{name}.npz", **arrays)

    with torch.no_grad():
        ep = torch.export.export(mlp, (x,))
        save("plain", to_edge(ep, generate_etrecord=True).to_executorch(), [x], [mlp(x)])
        lowered = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()], generate_etrecord=True)
        save("xnnpack", lowered.to_executorch(), [x], [mlp(x)])
        encoder = Encoder(mlp).eval()
        multi = to_edge({"forward": ep, "encode": torch.export.export(encoder, (x,))}, generate_etrecord=True)
        save("multi", multi.to_executorch(), [x], [mlp(x), encoder(x)])
        batch = torch.export.Dim("batch", min=1, max=4)
        dynamic = torch.export.export(mlp, (torch.randn(4, 8),), dynamic_shapes={"x": {0: batch}})
        x3 = torch.randn(3, 8)
        save("dynamic", to_edge(dynamic, generate_etrecord=True).to_executorch(), [x3], [mlp(x3)])


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    export(target)
