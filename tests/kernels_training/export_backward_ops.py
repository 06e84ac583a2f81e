"""Single-operator programs of the backward operators kernels_training provides, with their inputs and
the gradients eager PyTorch's autograd computes for them (cached in OUTDIR).

Each case is one call of aten::convolution_backward or aten::max_pool2d_with_indices_backward, exported by
ExecuTorch (torch.export + to_edge + to_executorch), its inputs random, and its expected outputs the
.grad of the forward operator's inputs after backward(grad_output) in eager mode.
"""
import json
import os
import sys

import numpy as np
import torch
from executorch.exir import EdgeCompileConfig, to_edge
from torch.export import export

# name: (input shape, weight shape, bias?, stride, padding, dilation, groups, output_mask, dtype)
CONVOLUTIONS = {
    "conv2d_cifar_first": ((4, 3, 32, 32), (32, 3, 3, 3), True, [1, 1], [1, 1], [1, 1], 1, [False, True, True], torch.float32),
    "conv2d_cifar_middle": ((4, 32, 16, 16), (64, 32, 3, 3), True, [1, 1], [1, 1], [1, 1], 1, [True, True, True], torch.float32),
    "conv2d_strided_dilated_groups": ((2, 4, 11, 9), (6, 2, 3, 2), False, [2, 1], [1, 0], [2, 1], 2, [True, True, False], torch.float32),
    "conv2d_depthwise": ((2, 4, 7, 7), (4, 1, 3, 3), True, [1, 1], [1, 1], [1, 1], 4, [True, True, True], torch.float32),
    "conv2d_input_only": ((1, 3, 6, 5), (2, 3, 2, 2), True, [1, 1], [0, 0], [1, 1], 1, [True, False, False], torch.float32),
    "conv1d": ((3, 2, 10), (5, 2, 3), True, [2], [1], [1], 1, [True, True, True], torch.float32),
    "conv2d_float64": ((2, 3, 8, 8), (4, 3, 3, 3), True, [1, 1], [1, 1], [1, 1], 1, [True, True, True], torch.float64),
}
# name: (input shape, kernel_size, stride, padding, dilation, ceil_mode, dtype)
MAX_POOLS = {
    "max_pool2d_cifar": ((4, 32, 32, 32), [2, 2], [2, 2], [0, 0], [1, 1], False, torch.float32),
    "max_pool2d_overlapping": ((2, 3, 9, 9), [3, 3], [2, 2], [1, 1], [1, 1], False, torch.float32),
    "max_pool2d_ceil_dilated": ((2, 2, 10, 11), [2, 3], [2, 2], [0, 1], [2, 1], True, torch.float32),
    "max_pool2d_3d_input": ((3, 8, 8), [2, 2], [1, 1], [0, 0], [1, 1], False, torch.float32),
    "max_pool2d_float64": ((2, 3, 6, 6), [3, 3], [1, 1], [1, 1], [1, 1], False, torch.float64),
}


class ConvolutionBackward(torch.nn.Module):
    def __init__(self, bias_sizes, stride, padding, dilation, groups, mask):
        super().__init__()
        self.args = (bias_sizes, stride, padding, dilation, False, [0] * len(stride), groups, mask)
        self.mask = mask

    def forward(self, grad_output, x, weight):
        grads = torch.ops.aten.convolution_backward.default(grad_output, x, weight, *self.args)
        return tuple(g for g, wanted in zip(grads, self.mask) if wanted)


class MaxPoolBackward(torch.nn.Module):
    def __init__(self, kernel_size, stride, padding, dilation, ceil_mode):
        super().__init__()
        self.args = (kernel_size, stride, padding, dilation, ceil_mode)

    def forward(self, grad_output, x, indices):
        return torch.ops.aten.max_pool2d_with_indices_backward.default(grad_output, x, *self.args, indices)


def _write(program_module, inputs, outputs, name, outdir, index, operator):
    edge = to_edge(export(program_module, tuple(inputs), strict=True),
                   compile_config=EdgeCompileConfig(_check_ir_validity=False))
    with open(os.path.join(outdir, f"{name}.pte"), "wb") as f:
        edge.to_executorch().write_to_file(f)
    arrays = {f"input_{i}": t.detach().numpy() for i, t in enumerate(inputs)}
    arrays.update({f"output_{i}": t.detach().numpy() for i, t in enumerate(outputs)})
    np.savez(os.path.join(outdir, f"{name}.npz"), **arrays)
    index[name] = {"operator": operator}


def export_all(outdir):
    os.makedirs(outdir, exist_ok=True)
    index_path = os.path.join(outdir, "index.json")
    if os.path.exists(index_path):
        return json.load(open(index_path))
    index = {}
    torch.manual_seed(0)
    for name, (xs, ws, bias, stride, padding, dilation, groups, mask, dtype) in CONVOLUTIONS.items():
        x = torch.randn(xs, dtype=dtype, requires_grad=True)
        w = torch.randn(ws, dtype=dtype, requires_grad=True)
        b = torch.randn(ws[0], dtype=dtype, requires_grad=True) if bias else None
        forward = torch.nn.functional.conv2d if len(xs) == 4 else torch.nn.functional.conv1d
        y = forward(x, w, b, stride, padding, dilation, groups)
        dy = torch.randn_like(y)
        y.backward(dy)
        expected = [g for g, wanted in zip((x.grad, w.grad, b.grad if bias else None), mask) if wanted]
        module = ConvolutionBackward([ws[0]] if bias else None, stride, padding, dilation, groups, mask)
        _write(module, [dy, x.detach(), w.detach()], expected, name, outdir, index, "aten::convolution_backward.out")
    for name, (xs, kernel, stride, padding, dilation, ceil_mode, dtype) in MAX_POOLS.items():
        x = torch.randn(xs, dtype=dtype, requires_grad=True)
        y, indices = torch.nn.functional.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, return_indices=True)
        dy = torch.randn_like(y)
        y.backward(dy)
        module = MaxPoolBackward(kernel, stride, padding, dilation, ceil_mode)
        _write(module, [dy, x.detach(), indices], [x.grad], name, outdir, index,
               "aten::max_pool2d_with_indices_backward.grad_input")
    # An inference program (no backward operator), for the test that the plugin is opened only on need.
    edge = to_edge(export(torch.nn.ReLU(), (torch.randn(4),), strict=True))
    with open(os.path.join(outdir, "forward_only.pte"), "wb") as f:
        edge.to_executorch().write_to_file(f)
    json.dump(index, open(index_path, "w"), indent=1)
    return index


if __name__ == "__main__":
    print(export_all(sys.argv[1]))
