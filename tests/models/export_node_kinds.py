"""XNNPACK programs for the node kinds the xnnpack plugin gained last: ConvTranspose2d, PReLU and
StaticResizeBilinear2D, each lowered by ExecuTorch 1.5.1's XnnpackPartitioner from a torch module (shapes,
strides, padding, output padding, dilation, groups, fused ReLU, batch > 1).

    python3 tests/models/export_node_kinds.py [--out tests/models/generated_nodes] [--only NAME ...]

Each program gets NAME/xnnpack.pte, inputs.npz (input_0, ...), expected.npz (eager PyTorch),
executorch_xnnpack.npz (ExecuTorch's own runtime on the same .pte, run in this exporting process), and
inputs_nan.npz / expected_nan.npz: the inputs with a NaN and an infinity planted, with eager PyTorch's outputs
(etrt runs those on its reference path; ExecuTorch's XNNPACK clamps NaN, so it is no reference there).
index.json lists the programs with the blob's node kinds. Export is deterministic (seeded by crc32(name)).

Not made here, because ExecuTorch 1.5.1 never serializes them: ArgMaxPooling2d (its partitioner claims
max.dim only when the indices go unused, and then emits MaxPooling2d) and ScaledDotProductAttention (no
node visitor; attention is lowered as BatchMatrixMultiply and Softmax).
"""
import json
import logging
import re
import zlib
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from export_quantized import command_line, run_executorch, save  # this directory: run as a script

logging.getLogger().setLevel(logging.ERROR)


class Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class DeconvRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return F.relu(self.deconv(x))


def build(name):
    """(module, example inputs, the blob node kind it must contain)."""
    torch.manual_seed(zlib.crc32(name.encode()))
    if name == "deconv_stride2_outpad_relu":
        return DeconvRelu(), (torch.randn(2, 4, 5, 7),), "XNNConvTranspose2d"
    if name == "deconv_groups_dilation":
        m = nn.ConvTranspose2d(4, 6, (3, 2), stride=(1, 2), padding=(1, 0), dilation=2, groups=2, bias=False)
        return m, (torch.randn(1, 4, 5, 6),), "XNNConvTranspose2d"
    if name == "deconv_depthwise_pad":
        m = nn.ConvTranspose2d(3, 3, 4, stride=3, padding=2, groups=3)
        return m, (torch.randn(1, 3, 6, 4),), "XNNConvTranspose2d"
    if name == "deconv_adjust_over_stride":
        # output_padding 1 with stride 1 is legal under dilation 2; XNNPACK needs it below the stride.
        m = nn.ConvTranspose2d(3, 5, 3, stride=1, padding=1, dilation=2, output_padding=1)
        return m, (torch.randn(1, 3, 6, 5),), "XNNConvTranspose2d"
    if name == "prelu_per_channel":
        m = nn.PReLU(5)
        with torch.no_grad():
            m.weight.copy_(torch.linspace(-0.5, 0.7, 5))
        return m, (torch.randn(2, 5, 6, 7),), "XNNPReLU"
    if name == "prelu_shared":
        return nn.PReLU(init=0.2), (torch.randn(1, 3, 4, 4),), "XNNPReLU"
    if name == "resize_half_pixel":
        fn = Lambda(lambda x: F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=False))
        return fn, (torch.randn(1, 3, 4, 5),), "XNNStaticResizeBilinear2D"
    if name == "resize_align_corners":
        fn = Lambda(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True))
        return fn, (torch.randn(2, 3, 4, 5),), "XNNStaticResizeBilinear2D"
    if name == "resize_downscale":
        fn = Lambda(lambda x: F.interpolate(x, size=(3, 2), mode="bilinear", align_corners=False))
        return fn, (torch.randn(1, 2, 6, 7),), "XNNStaticResizeBilinear2D"
    if name == "fp16_linear_conv":
        return Fp16LinearConv().half(), (torch.randn(2, 8).half(), torch.randn(1, 3, 5, 5).half()), "FullyConnected"
    raise KeyError(name)


class Fp16LinearConv(nn.Module):
    """fp16 inputs, weights and outputs: the delegate's boundary is fp16."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x, y):
        return F.relu(self.fc(x)), self.conv(y)


MODELS = ["deconv_stride2_outpad_relu", "deconv_groups_dilation", "deconv_depthwise_pad", "deconv_adjust_over_stride",
          "prelu_per_channel", "prelu_shared", "resize_half_pixel", "resize_align_corners", "resize_downscale",
          "fp16_linear_conv"]


def lower(model, inputs):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    ep = torch.export.export(model, inputs, strict=False)
    edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    outside = sorted({str(n.target) for n in edge.exported_program().graph_module.graph.nodes
                      if n.op == "call_function" and "executorch_call_delegate" not in str(n.target)
                      and "getitem" not in str(n.target)})
    return edge.to_executorch(), outside


def blob_node_kinds(blob):
    import os
    import struct
    import subprocess
    import tempfile
    schema = Path(__import__("executorch").__path__[0]) / "backends/xnnpack/serialization/runtime_schema.fbs"
    offset, size = struct.unpack_from("<II", blob, 10)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "blob.bin")
        Path(path).write_bytes(blob[offset:offset + size])
        subprocess.run(["flatc", "--json", "--raw-binary", "--strict-json", "-o", d, str(schema), "--", path],
                       check=True, capture_output=True)
        # flatc writes an unbounded fused range as inf, which JSON spells Infinity.
        text = re.sub(r"(?<=[:\s\[,])(-?)inf\b", r"\1Infinity", Path(d, "blob.json").read_text())
        graph = json.loads(text)
    return [n["xnode_union_type"] for n in graph["xnodes"]]


def with_non_finite(inputs):
    out = []
    for t in inputs:
        t = t.clone()
        flat = t.view(-1)
        flat[3] = float("nan")
        flat[-2] = float("inf")
        out.append(t)
    return out


def main():
    only, out, index_path, index = command_line(__doc__, "generated_nodes")
    for name in only or MODELS:
        model, inputs, kind = build(name)
        model.eval()
        program, outside = lower(model, inputs)
        kinds = [k.removeprefix("XNN") for blob in program.executorch_program.backend_delegate_data
                 for k in blob_node_kinds(bytes(blob.data))]
        assert "XNN" + kind.removeprefix("XNN") in ["XNN" + k for k in kinds], f"{name}: no {kind} in {kinds}"
        assert not outside, f"{name}: not delegated: {outside}"
        d = out / name
        d.mkdir(exist_ok=True)
        (d / "xnnpack.pte").write_bytes(program.buffer)
        with torch.no_grad():
            eager = model(*inputs)
            nan_inputs = with_non_finite(inputs)
            eager_nan = model(*nan_inputs)
        entry = {"dir": name, "node_kinds": kinds, "kind": kind.removeprefix("XNN")}
        try:
            theirs = run_executorch(d / "xnnpack.pte", inputs)
            save(d / "executorch_xnnpack.npz", "output", theirs)
        except RuntimeError as e:  # recorded: the test then holds etrt to eager PyTorch alone
            entry["executorch_error"] = str(e)
        save(d / "inputs.npz", "input", inputs)
        eager = list(eager) if isinstance(eager, tuple) else [eager]
        save(d / "expected.npz", "output", eager)
        save(d / "inputs_nan.npz", "input", nan_inputs)
        save(d / "expected_nan.npz", "output", list(eager_nan) if isinstance(eager_nan, tuple) else [eager_nan])
        index["models"][name] = entry
        print(f"{name}: {len(program.buffer)} bytes, nodes {kinds}", flush=True)
        index_path.write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
