"""Training in etrt (training_train_tool over libetrt_training, its own process) against ExecuTorch's runtime
(executorch.extension.training) and eager PyTorch, from the same program, initial weights and inputs.

XOR (ExecuTorch's example, SGD lr 0.5) against ExecuTorch: 100 steps, the loss at every step within 1e-5
relative, the final parameters within 1e-5 and the same accuracy on the four XOR rows.
CIFAR (the example's model, batch 4, random images, SGD lr 0.01 with momentum 0.9), 20 steps, against eager
PyTorch (torch.optim.SGD): losses within 1e-4 relative, parameters within 1e-4 of each tensor's largest
magnitude. The tolerance is float32 rounding carried by momentum: the convolution gradients sum up to 4096
products per entry in another order than PyTorch's (measured: 1.1e-7 and 3.9e-7). Against ExecuTorch, CIFAR
is checked for one step only (test_cifar_first_step_against_executorch says why).
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

PROGRAMS = Path(os.environ.get("ETRT_TRAINING_PROGRAMS", "training_programs"))
TOOL = os.environ.get("ETRT_TRAIN_TOOL", "training_train_tool")


def etrt_train(program, optimizer, steps, inputs, tmp_path, threads=None, checkpoint=None):
    params_path = tmp_path / "etrt_parameters.bin"
    command = [TOOL, str(program), optimizer, str(steps), "--parameters-out", str(params_path)]
    if checkpoint:
        command += ["--checkpoint", str(checkpoint)]
    if threads:
        command += ["--threads", str(threads)]
    stdin = b"".join(np.ascontiguousarray(a).tobytes() for step in inputs for a in step)
    result = subprocess.run(command, input=stdin, capture_output=True, check=False)
    assert result.returncode == 0, result.stderr.decode()
    losses = [float(line.split()[0]) for line in result.stdout.decode().splitlines()]
    return np.array(losses), params_path.read_bytes()


def executorch_train(program, sgd_args, inputs):
    from executorch.extension.training import _load_for_executorch_for_training_from_buffer, get_sgd_optimizer

    buffer = Path(program).read_bytes()  # ExecuTorch's module reads it in place: it must outlive the module
    module = _load_for_executorch_for_training_from_buffer(buffer)
    optimizer, losses = None, []
    for step in inputs:
        outputs = module.forward_backward("forward", tuple(torch.from_numpy(a) for a in step))
        losses.append(float(outputs[0]))
        if optimizer is None:
            optimizer = get_sgd_optimizer(module.named_parameters(), *sgd_args)
        optimizer.step(module.named_gradients())
    parameters = [p.detach().numpy().copy() for p in module.named_parameters().values()]
    del module
    return np.array(losses), parameters


def split_parameters(raw, like):
    flat = np.frombuffer(raw, dtype=np.float32)
    out, offset = [], 0
    for p in like:
        out.append(flat[offset:offset + p.size].reshape(p.shape))
        offset += p.size
    assert offset == flat.size
    return out


XOR_ROWS = np.array([[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]])


def xor_accuracy(params):
    w1, b1, w2, b2 = params
    x = XOR_ROWS[:, :2].astype(np.float32)
    hidden = 1 / (1 + np.exp(-(x @ w1.T + b1)))
    return float(np.mean(np.argmax(hidden @ w2.T + b2, axis=1) == XOR_ROWS[:, 2]))


def test_xor_100_steps_match_executorch(tmp_path):
    rng = np.random.default_rng(0)
    rows = XOR_ROWS[rng.integers(0, 4, size=100)]
    inputs = [(r[None, :2].astype(np.float32), r[2:3].astype(np.int64)) for r in rows]
    ours, our_raw = etrt_train(PROGRAMS / "xor.pte", "sgd:0.5,0,0,0,0", 100, inputs, tmp_path)
    theirs, their_params = executorch_train(PROGRAMS / "xor.pte", (0.5, 0, 0, 0, False), inputs)
    assert len(ours) == 100
    relative = np.abs(ours - theirs) / np.maximum(np.abs(theirs), 1e-30)
    print(f"xor: max relative loss difference {relative.max():.3g}; loss {theirs[0]:.4f} -> {theirs[-1]:.4f}")
    assert relative.max() <= 1e-5, f"step {relative.argmax()}: etrt {ours[relative.argmax()]}, ExecuTorch {theirs[relative.argmax()]}"
    our_params = split_parameters(our_raw, their_params)
    for a, b in zip(our_params, their_params):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    print(f"xor: accuracy etrt {xor_accuracy(our_params)}, ExecuTorch {xor_accuracy(their_params)}")
    assert xor_accuracy(our_params) == xor_accuracy(their_params)


def initial_parameters(program):
    """The program's parameters before any step, by name (read through ExecuTorch's runtime)."""
    from executorch.extension.training import _load_for_executorch_for_training_from_buffer

    buffer = Path(program).read_bytes()
    module = _load_for_executorch_for_training_from_buffer(buffer)
    module.forward_backward("forward", (torch.zeros(4, 3, 32, 32), torch.zeros(4, dtype=torch.int64)))
    parameters = {name: p.detach().clone() for name, p in module.named_parameters().items()}
    del module
    return parameters


def eager_cifar(initial, inputs, lr, momentum):
    """The CIFAR example's model in eager PyTorch (dropout off, as exported), trained by torch.optim.SGD."""
    from executorch.extension.training.examples.CIFAR.model import CIFAR10Model

    net = CIFAR10Model().eval()
    net.load_state_dict({name[len("model."):]: p for name, p in initial.items()})
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    losses = []
    for x, y in inputs:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(torch.from_numpy(x)), torch.from_numpy(y))
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return np.array(losses), [p.detach().numpy() for p in net.parameters()]


def cifar_inputs(steps):
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((4, 3, 32, 32), dtype=np.float32), rng.integers(0, 10, size=4).astype(np.int64))
            for _ in range(steps)]


@pytest.mark.parametrize("threads", [1, 2])
def test_cifar_20_steps_match_eager_pytorch(tmp_path, threads):
    inputs = cifar_inputs(20)
    initial = initial_parameters(PROGRAMS / "cifar.pte")
    ours, our_raw = etrt_train(PROGRAMS / "cifar.pte", "sgd:0.01,0.9,0,0,0", 20, inputs, tmp_path, threads)
    theirs, their_params = eager_cifar(initial, inputs, 0.01, 0.9)
    relative = np.abs(ours - theirs) / np.abs(theirs)
    print(f"cifar ({threads} threads): max relative loss difference to eager {relative.max():.3g}; "
          f"loss {theirs[0]:.4f} -> {theirs[-1]:.4f}")
    assert relative.max() <= 1e-4, f"step {relative.argmax()}: etrt {ours[relative.argmax()]}, eager {theirs[relative.argmax()]}"
    worst = 0.0
    for a, b in zip(split_parameters(our_raw, their_params), their_params):
        worst = max(worst, float(np.abs(a - b).max() / np.abs(b).max()))
    print(f"cifar ({threads} threads): max parameter difference {worst:.3g} of the tensor's largest magnitude")
    assert worst <= 1e-4


def test_cifar_first_step_against_executorch(tmp_path):
    """One SGD step (lr 0.01) from the same weights and batch: etrt's update of every parameter equals eager
    autograd's to 1e-4 of its magnitude. ExecuTorch 1.5.1's runtime agrees on the classifier but not on the
    convolution layers (its updates there differ from eager's by more than their own size): its
    max_pool2d_with_indices_backward adds into grad_input without zeroing it first, so the gradient picks up
    whatever the memory plan left there (a single-op program run twice returns twice the gradient). So
    ExecuTorch is not the reference for CIFAR: this test records that and fails if ExecuTorch's result changes."""
    inputs = cifar_inputs(1)
    initial = initial_parameters(PROGRAMS / "cifar.pte")
    _, our_raw = etrt_train(PROGRAMS / "cifar.pte", "sgd:0.01,0,0,0,0", 1, inputs, tmp_path)
    _, executorch_params = executorch_train(PROGRAMS / "cifar.pte", (0.01, 0, 0, 0, False), inputs)
    _, eager_params = eager_cifar(initial, inputs, 0.01, 0)
    names = list(initial)
    ours = split_parameters(our_raw, eager_params)
    for name, start, a, b, e in zip(names, initial.values(), ours, executorch_params, eager_params):
        eager_update = e - start.numpy()
        scale = np.abs(eager_update).max()
        # 1e-8: the rounding of parameters near 0.05 (their ulp is 3.7e-9) in the subtraction above.
        assert np.abs((a - start.numpy()) - eager_update).max() <= 1e-4 * scale + 1e-8, name
        executorch_error = np.abs((b - start.numpy()) - eager_update).max() / scale
        if name.startswith("model.features."):
            assert executorch_error > 1, f"{name}: ExecuTorch now agrees with eager ({executorch_error:.3g})"
        else:
            assert executorch_error < 1e-4, name


def test_checkpoint_saved_by_etrt_loads_in_executorch_and_etrt(tmp_path):
    """XOR trained 50 steps in etrt, its parameters saved as a .ptd (TrainingModule::save_parameters): the
    inference program whose weights are external constants of those names gives, in ExecuTorch's runtime
    and in etrt, the logits the saved parameters give."""
    from executorch.extension.pybindings.portable_lib import _load_for_executorch

    rng = np.random.default_rng(2)
    rows = XOR_ROWS[rng.integers(0, 4, size=50)]
    inputs = [(r[None, :2].astype(np.float32), r[2:3].astype(np.int64)) for r in rows]
    checkpoint = tmp_path / "xor_trained.ptd"
    _, raw = etrt_train(PROGRAMS / "xor.pte", "sgd:0.5,0,0,0,0", 50, inputs, tmp_path, checkpoint=checkpoint)
    w1, b1, w2, b2 = split_parameters(raw, [np.zeros((10, 2)), np.zeros(10), np.zeros((2, 10)), np.zeros(2)])
    x = XOR_ROWS[:, :2].astype(np.float32)
    expected = (1 / (1 + np.exp(-(x @ w1.T + b1)))) @ w2.T + b2

    program = PROGRAMS / "xor_inference_external.pte"
    theirs = _load_for_executorch(str(program), data_path=str(checkpoint)).forward([torch.from_numpy(x)])[0].numpy()
    np.testing.assert_allclose(theirs, expected, rtol=1e-5, atol=1e-6)

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
    import ctypes
    import etrt_ctypes
    library = etrt_ctypes.Library()
    loaded = library.load_program(program)
    error = ctypes.c_void_p()
    library.lib.et_program_add_data_file.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    library.check(library.lib.et_program_add_data_file(loaded.handle, str(checkpoint).encode(), ctypes.byref(error)), error)
    ours = loaded.load_method("forward").execute([x])[0]
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
