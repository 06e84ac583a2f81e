"""Exports SwishMlp to a .pte whose program calls my_ops::scaled_swish.out.

    python3 export.py OUT_DIR      -> OUT_DIR/swish_mlp.pte, input_0.npy, expected_0.npy
"""
import os
import sys

import numpy as np
import torch
from executorch.exir import to_edge_transform_and_lower, EdgeCompileConfig

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from my_ops import SwishMlp  # noqa: E402  (registers the operator)


def main(out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    model = SwishMlp().eval()
    example = (torch.randn(4, 16),)
    exported = torch.export.export(model, example)
    # Custom operators are not ATen core operators: skip the edge dialect's ATen-only check.
    edge = to_edge_transform_and_lower(exported, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    program = edge.to_executorch()
    with open(os.path.join(out_dir, "swish_mlp.pte"), "wb") as f:
        f.write(program.buffer)
    np.save(os.path.join(out_dir, "input_0.npy"), example[0].numpy())
    with torch.no_grad():
        np.save(os.path.join(out_dir, "expected_0.npy"), model(*example).numpy())
    operators = [op.name + ("." + op.overload if op.overload else "")
                 for plan in program.executorch_program.execution_plan for op in plan.operators]
    print("wrote", os.path.join(out_dir, "swish_mlp.pte"), "operators:", ", ".join(operators))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
