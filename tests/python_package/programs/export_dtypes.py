"""Exports the small programs of the Python dtype tests (committed beside this script):
  bfloat16_identity.pte   bfloat16 [2, 3] in, the same tensor out
  float16_identity.pte    float16 [2, 3] in, the same tensor out
They check how values cross the Python boundary, not kernels: the method's output is its input.
Run: python3 tests/python_package/programs/export_dtypes.py
"""
import os

import torch
from executorch.exir import to_edge_transform_and_lower


class Identity(torch.nn.Module):
    def forward(self, x):
        return x


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for dtype, name in ((torch.bfloat16, "bfloat16_identity"), (torch.float16, "float16_identity")):
        example = torch.randn(2, 3).to(dtype)
        program = to_edge_transform_and_lower(torch.export.export(Identity(), (example,))).to_executorch()
        with open(os.path.join(here, name + ".pte"), "wb") as f:
            f.write(program.buffer)


if __name__ == "__main__":
    main()
