"""Exports the programs of the .ptd tests: weights kept outside the program.

Writes, into the output directory (default: generated/ beside this script):
  linear_portable.pte + linear_portable.ptd   constants external (ExecuTorch's external_constants)
  linear_xnnpack.pte  + linear_xnnpack.ptd    XNNPACK-lowered, the delegate's weights external
  input.npy, expected.npy                     one input and eager PyTorch's output

Run: python3 tests/data_file/export_external.py [OUT_DIR]  (about a minute: importing ExecuTorch).
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(8, 16)
        self.l2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


def export(model, example, name, out_dir, partitioner=None):
    exported = torch.export.export(model, (example,))
    if partitioner is not None:
        # Delegates keep their weights in named data; tagging the unlifted graph's
        # constants (as ExecuTorch's LLM export does) moves them to the .ptd too.
        from executorch.exir.passes.external_constants_pass import delegate_external_constants_pass_unlifted

        module = exported.module()
        delegate_external_constants_pass_unlifted(module=module, gen_tag_fn=lambda node: name)
        exported = torch.export.export(module, (example,))
    program = to_edge_transform_and_lower(exported, partitioner=partitioner).to_executorch(
        ExecutorchBackendConfig(external_constants=True))
    with open(os.path.join(out_dir, name + ".pte"), "wb") as f:
        f.write(program.buffer)
    with tempfile.TemporaryDirectory() as scratch:
        program.write_tensor_data_to_file(scratch)
        written = [f for f in os.listdir(scratch) if f.endswith(".ptd")]
        if len(written) != 1:
            sys.exit(f"{name}: expected one .ptd, ExecuTorch wrote {written}")
        shutil.copy(os.path.join(scratch, written[0]), os.path.join(out_dir, name + ".ptd"))


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "generated")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(7)
    model = TwoLayers().eval()
    example = torch.randn(2, 8)
    export(model, example, "linear_portable", out_dir)
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    export(model, example, "linear_xnnpack", out_dir, partitioner=[XnnpackPartitioner()])
    np.save(os.path.join(out_dir, "input.npy"), example.numpy())
    with torch.no_grad():
        np.save(os.path.join(out_dir, "expected.npy"), model(example).numpy())


if __name__ == "__main__":
    main()
