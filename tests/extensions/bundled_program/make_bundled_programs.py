"""Writes the bundled programs the bundled-program tests read, with ExecuTorch's own
devtools.bundled_program (torch 2.13 / executorch 1.5.1):

  linear_add.bpte        forward(x, y) = linear(x) + y and encode(x) = relu(linear(x)), two test
                         cases for forward and one for encode, expected outputs from eager PyTorch;
  linear_add_wrong.bpte  the same, with element 3 of forward's second expected output off by 0.5;
  linear_add.pte         the plain program inside them.

Run: python3 tests/extensions/bundled_program/make_bundled_programs.py [output_dir]
"""

import sys
from pathlib import Path

import torch
from executorch.devtools import BundledProgram
from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
from executorch.exir import to_edge


class LinearAdd(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return self.linear(x) + y

    def encode(self, x):
        return torch.relu(self.linear(x))


class Encode(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model.encode(x)


def main(out_dir: Path) -> None:
    torch.manual_seed(0)
    model = LinearAdd().eval()
    forward_inputs = [(torch.randn(2, 4), torch.randn(2, 3)) for _ in range(2)]
    encode_inputs = [(torch.randn(2, 4),)]
    programs = {
        "forward": torch.export.export(model, forward_inputs[0]),
        "encode": torch.export.export(Encode(model), encode_inputs[0]),
    }
    manager = to_edge(programs).to_executorch()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "linear_add.pte").write_bytes(manager.buffer)

    def suites(perturb: bool):
        forward_cases = []
        for i, inputs in enumerate(forward_inputs):
            expected = model(*inputs).detach().clone()
            if perturb and i == 1:
                expected.view(-1)[3] += 0.5
            forward_cases.append(MethodTestCase(inputs=list(inputs), expected_outputs=[expected]))
        encode_cases = [MethodTestCase(inputs=list(inputs), expected_outputs=[model.encode(*inputs).detach()])
                        for inputs in encode_inputs]
        return [MethodTestSuite(method_name="forward", test_cases=forward_cases),
                MethodTestSuite(method_name="encode", test_cases=encode_cases)]

    for name, perturb in (("linear_add.bpte", False), ("linear_add_wrong.bpte", True)):
        bundled = BundledProgram(manager, suites(perturb))
        (out_dir / name).write_bytes(serialize_from_bundled_program_to_flatbuffer(bundled))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "generated")
