"""etrt.training from the installed package: NumPy in, NumPy out; views; named errors that leave the
module usable; one libetrt (and one registry) for etrt and etrt.training in one process."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from executorch.exir import to_edge
from torch.export import export
from torch.export.experimental import _export_forward_backward

import etrt
import etrt.training as training


class Simple(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)
        self.loss = torch.nn.CrossEntropyLoss()

    def forward(self, x, y):
        return self.loss(self.linear(x).softmax(dim=0), y)


INPUTS = (np.ones(3, dtype=np.float32), np.array([1.0, 0.0, 0.0], dtype=np.float32))


@pytest.fixture(scope="module")
def joint_program():
    torch.manual_seed(0)
    module = Simple()
    ep = _export_forward_backward(export(module, tuple(torch.from_numpy(a) for a in INPUTS), strict=True))
    return to_edge(ep).to_executorch().buffer


@pytest.fixture(scope="module")
def inference_program():
    return to_edge(export(torch.nn.Linear(2, 2), (torch.randn(1, 2),), strict=True)).to_executorch().buffer


def test_numpy_in_numpy_out_and_views(joint_program):
    module = training._load_for_executorch_for_training_from_buffer(joint_program)
    loss = module.forward_backward("forward", INPUTS)
    assert isinstance(loss[0], np.ndarray) and loss[0].shape == ()
    parameters = module.named_parameters()
    assert list(parameters) == ["linear.weight", "linear.bias"]
    weight = parameters["linear.weight"]
    before = weight.copy()
    optimizer = training.get_sgd_optimizer(parameters, 0.5)
    gradients = module.named_gradients()
    optimizer.step(gradients)
    np.testing.assert_allclose(weight, before - 0.5 * gradients["linear.weight"], rtol=1e-6)  # the view changed
    assert module.forward_backward("forward", INPUTS)[0] != loss[0]


def test_torch_in_torch_out(joint_program):
    module = training._load_for_executorch_for_training_from_buffer(joint_program)
    loss = module.forward_backward("forward", tuple(torch.from_numpy(a) for a in INPUTS))
    assert isinstance(loss[0], torch.Tensor)
    assert all(isinstance(t, torch.Tensor) for t in module.named_gradients().values())


def test_program_without_backward_graph(inference_program, joint_program):
    module = training._load_for_executorch_for_training_from_buffer(inference_program)
    with pytest.raises(etrt.Error, match="has no backward graph"):
        module.forward_backward("forward", (np.zeros((1, 2), dtype=np.float32),))
    good = training._load_for_executorch_for_training_from_buffer(joint_program)
    assert len(good.forward_backward("forward", INPUTS)) == 1


def test_unknown_gradient_name(joint_program):
    module = training._load_for_executorch_for_training_from_buffer(joint_program)
    module.forward_backward("forward", INPUTS)
    optimizer = training.get_sgd_optimizer(module.named_parameters(), 0.1)
    with pytest.raises(etrt.Error, match="gradient 'linear.weights' names no parameter"):
        optimizer.step({"linear.weights": module.named_gradients()["linear.weight"]})
    optimizer.step(module.named_gradients())


def test_parameters_and_gradients_of_another_module(joint_program):
    a = training._load_for_executorch_for_training_from_buffer(joint_program)
    b = training._load_for_executorch_for_training_from_buffer(joint_program)
    a.forward_backward("forward", INPUTS)
    b.forward_backward("forward", INPUTS)
    mixed = {"linear.weight": a.named_parameters()["linear.weight"], "linear.bias": b.named_parameters()["linear.bias"]}
    with pytest.raises(etrt.Error, match="belongs to another TrainingModule"):
        training.get_sgd_optimizer(mixed, 0.1)
    with pytest.raises(etrt.Error, match="not a view of a TrainingModule's parameter"):
        training.get_sgd_optimizer({k: v.copy() for k, v in a.named_parameters().items()}, 0.1)
    optimizer = training.get_sgd_optimizer(a.named_parameters(), 0.1)
    with pytest.raises(etrt.Error, match="another TrainingModule"):
        optimizer.step(b.named_gradients())
    optimizer.step(a.named_gradients())


def test_checkpoint_loads_as_external_constants(joint_program, tmp_path):
    """save_parameters' .ptd feeds an inference program whose weights are external constants of those names."""
    from executorch.exir import ExecutorchBackendConfig

    class Inference(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.linear(x)

    inference = to_edge(export(Inference(), (torch.ones(3),), strict=True)).to_executorch(
        ExecutorchBackendConfig(external_constants=True))
    (tmp_path / "inference.pte").write_bytes(inference.buffer)
    module = training._load_for_executorch_for_training_from_buffer(joint_program)
    module.forward_backward("forward", INPUTS)
    training.get_sgd_optimizer(module.named_parameters(), 0.5).step(module.named_gradients())
    module.save_parameters(tmp_path / "trained.ptd")
    program = etrt.Runtime.get().load_program(tmp_path / "inference.pte", data_path=tmp_path / "trained.ptd")
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    logits = np.asarray(program.load_method("forward").execute([x])[0])
    weights = module.named_parameters()
    np.testing.assert_allclose(logits, weights["linear.weight"] @ x + weights["linear.bias"], rtol=1e-5, atol=1e-6)
    with pytest.raises(etrt.Error, match="cannot write the parameters"):
        module.save_parameters("/nonexistent-directory/trained.ptd")


def test_nan_learning_rate(joint_program):
    module = training._load_for_executorch_for_training_from_buffer(joint_program)
    for make in (training.get_sgd_optimizer, training.get_adam_optimizer, training.get_adamw_optimizer):
        with pytest.raises(etrt.Error, match="learning rate is NaN"):
            make(module.named_parameters(), float("nan"))
    training.get_adamw_optimizer(module.named_parameters(), 1e-3).step(
        (module.forward_backward("forward", INPUTS), module.named_gradients())[1])


def test_one_runtime_for_etrt_llm_and_training(joint_program, inference_program, tmp_path):
    """In a fresh process importing etrt, etrt.llm and etrt.training: one libetrt is mapped, and the kernel
    plugin the training program loaded serves etrt's own inference program without being loaded again."""
    joint, inference = tmp_path / "joint.pte", tmp_path / "inference.pte"
    joint.write_bytes(joint_program)
    inference.write_bytes(inference_program)
    script = textwrap.dedent(f"""
        import numpy as np, etrt, etrt.llm, etrt.training as training
        module = training._load_for_executorch_for_training({str(joint)!r})
        module.forward_backward("forward", (np.ones(3, dtype=np.float32), np.array([1, 0, 0], dtype=np.float32)))
        etrt.Runtime.get().load_program({str(inference)!r}).load_method("forward").execute(
            [np.ones((1, 2), dtype=np.float32)])
        kernels = [p for p in etrt.plugins() if p["name"] == "kernels_optimized"]
        maps = sorted({{line.split()[-1] for line in open("/proc/self/maps") if "libetrt.so" in line}})
        print(len(maps), kernels[0]["state"], kernels[0]["load_count"])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split()[-3:] == ["1", "loaded", "1"], out
