"""Exports the joint forward-backward programs of ExecuTorch's training tests and examples.

Usage: make_training_programs.py OUTDIR

Writes, each made with torch.export + _export_forward_backward + to_edge + to_executorch:
  simple_train.pte        the Linear+softmax+CrossEntropy module of extension/training/pybindings/test
  xor.pte                 the XOR example's TrainingNet (export_model._export_model)
  xor_external.pte/.ptd   the same with external mutable weights (the .ptd named xor.ptd)
  cifar.pte               the CIFAR example's CIFAR10Model + CrossEntropyLoss, batch 4 (its dropout in eval
                          mode: a random mask makes two runtimes' steps incomparable)
  cifar_b32.pte           the same at batch 32
  forward_only.pte        an inference program (no backward graph), for the error tests
  xor_inference_external.pte  the XOR Net under the name "net" (as in TrainingNet), batch 4, its weights
                          external constants: what loads a checkpoint etrt saves
Files already present are kept (exporting is slow).
"""

import os
import sys

import torch
from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge
from torch.export import export
from torch.export.experimental import _export_forward_backward


class SimpleTrain(torch.nn.Module):
    # As in executorch/extension/training/pybindings/test/test.py.
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)
        self.loss = torch.nn.CrossEntropyLoss()

    def forward(self, x, y):
        return self.loss(self.linear(x).softmax(dim=0), y)


def joint_program(module, inputs, config=None, check_ir=True):
    ep = export(module, inputs, strict=True)
    ep = _export_forward_backward(ep)
    edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=check_ir))
    return edge.to_executorch(config=config) if config else edge.to_executorch()


def write(program, path):
    with open(path, "wb") as f:
        program.write_to_file(f)


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    out = lambda name: os.path.join(outdir, name)

    if not os.path.exists(out("simple_train.pte")):
        torch.manual_seed(0)
        write(joint_program(SimpleTrain(), (torch.ones(3), torch.tensor([1.0, 0.0, 0.0]))),
              out("simple_train.pte"))

    from executorch.extension.training.examples.XOR.model import Net, TrainingNet

    xor_inputs = (torch.randn(1, 2), torch.ones(1, dtype=torch.int64))
    if not os.path.exists(out("xor.pte")):
        torch.manual_seed(0)
        write(joint_program(TrainingNet(Net()), xor_inputs), out("xor.pte"))
    if not os.path.exists(out("xor.ptd")):
        torch.manual_seed(0)
        program = joint_program(TrainingNet(Net()), xor_inputs,
                                ExecutorchBackendConfig(external_mutable_weights=True))
        write(program, out("xor_external.pte"))
        program._tensor_data["xor"] = program._tensor_data.pop("_default_external_constant")
        program.write_tensor_data_to_file(outdir)

    from executorch.extension.training.examples.CIFAR.model import CIFAR10Model, ModelWithLoss

    for name, batch in (("cifar.pte", 4), ("cifar_b32.pte", 32)):
        if os.path.exists(out(name)):
            continue
        torch.manual_seed(0)
        net = CIFAR10Model()
        net.classifier[2].eval()  # Dropout(0.5): see the docstring
        model = ModelWithLoss(net, torch.nn.CrossEntropyLoss())
        inputs = (torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,)))
        write(joint_program(model, inputs, check_ir=False), out(name))

    if not os.path.exists(out("forward_only.pte")):
        torch.manual_seed(0)
        from executorch.extension.training.examples.XOR.model import Net as XorNet
        edge = to_edge(export(XorNet(), (torch.randn(1, 2),), strict=True))
        write(edge.to_executorch(), out("forward_only.pte"))


    if not os.path.exists(out("xor_inference_external.pte")):
        class Inference(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = Net()

            def forward(self, x):
                return self.net(x)

        program = to_edge(export(Inference(), (torch.randn(4, 2),), strict=True)).to_executorch(
            ExecutorchBackendConfig(external_constants=True))
        write(program, out("xor_inference_external.pte"))


if __name__ == "__main__":
    main(sys.argv[1])
