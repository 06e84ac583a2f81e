"""Quantized XNNPACK reference programs, exported the way ExecuTorch's
examples/xnnpack/aot_compiler.py --quantize does (XNNPACKQuantizer,
prepare_pt2e, calibration, convert_pt2e, to_edge_transform_and_lower with the
XnnpackPartitioner), plus the dynamically quantized linear layers of the LLM
export (8-bit dynamic activations; 8-bit per-channel, 4-bit per-channel or
4-bit group-wise weights).

    python3 tests/models/export_quantized.py --out tests/models/generated_q [--only NAME ...]

Each program gets NAME/xnnpack.pte, inputs.npz (input_0, ...), expected.npz
(the quantized eager model's outputs) and executorch_xnnpack.npz (ExecuTorch's
own runtime on the same .pte, run in this exporting process, never in etrt's),
plus index.json listing them with their tolerance. Export is deterministic:
every model seeds torch with crc32(name).
"""
import argparse
import json
import logging
import zlib
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

logging.getLogger().setLevel(logging.ERROR)


def seed(name):
    torch.manual_seed(zlib.crc32(name.encode()))


class ConvPoolConcat(nn.Module):
    """conv (per-channel weights) + relu, max and average pooling, a concatenation, a residual add."""

    def __init__(self):
        super().__init__()
        self.conv_a = nn.Conv2d(3, 8, 3, padding=1)
        self.conv_b = nn.Conv2d(3, 8, 3, stride=1, padding=1, dilation=1)
        self.depthwise = nn.Conv2d(16, 16, 3, padding=1, groups=16)

    def forward(self, x):
        a = F.relu(self.conv_a(x))
        b = self.conv_b(x)
        c = torch.cat([a, b], dim=1)
        d = self.depthwise(c)
        e = d + c
        return F.max_pool2d(e, 2), F.avg_pool2d(e, 2)


class ConvLinear(nn.Module):
    """Small conv net ending in a mean and a linear layer."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 12, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(12, 12, 1)
        self.fc = nn.Linear(12, 10)

    def forward(self, x):
        y = F.relu(self.conv(x))
        y = F.relu(self.conv2(y)) * y
        y = torch.mean(y, dim=(2, 3))
        return self.fc(y)


class Mlp(nn.Module):
    def __init__(self, d_in=64, d_hidden=128, d_out=32):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def example_model(name):
    from executorch.examples.models import MODEL_NAME_TO_MODEL
    from executorch.examples.models.model_factory import EagerModelFactory
    model, inputs, _, _ = EagerModelFactory.create_model(*MODEL_NAME_TO_MODEL[name])
    return model.eval(), inputs


def static_quantize(model, inputs, per_channel):
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    module = torch.export.export(model, inputs, strict=False).module()
    quantizer = XNNPACKQuantizer()
    quantizer.set_global(get_symmetric_quantization_config(is_per_channel=per_channel, is_dynamic=False))
    prepared = prepare_pt2e(module, quantizer)
    prepared(*inputs)  # calibration
    return convert_pt2e(prepared)


def dynamic_quantize(model, inputs, weight_bits=8):
    """8-bit dynamic activations, per-channel weights: 8-bit (aot_compiler's DYNAMIC_PER_CHANNEL) or 4-bit
    (the quantizer's weight range [-8, 7], which ExecuTorch serializes as qcint4)."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    module = torch.export.export(model, inputs, strict=False).module()
    quantizer = XNNPACKQuantizer()
    weight_range = {} if weight_bits == 8 else {"weight_qmin": -8, "weight_qmax": 7}
    quantizer.set_global(get_symmetric_quantization_config(is_per_channel=True, is_dynamic=True, **weight_range))
    prepared = prepare_pt2e(module, quantizer)
    prepared(*inputs)
    return convert_pt2e(prepared)


def groupwise_4bit(model, group_size=32):
    """8-bit dynamic activations, 4-bit group-wise weights, as the LLM export's 8da4w mode."""
    from torchao.quantization.granularity import PerGroup
    from torchao.quantization.quant_api import Int8DynamicActivationIntxWeightConfig, quantize_
    quantize_(model, Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4,
                                                           weight_granularity=PerGroup(group_size)))
    return model


def build(name):
    """(model ready to export, example inputs, tolerance note)."""
    seed(name)
    if name in ("q_linear", "q_add", "q_add_mul"):
        model, inputs = example_model(name[2:])
        per_channel = name == "q_linear"  # as MODEL_NAME_TO_OPTIONS says
        return static_quantize(model, inputs, per_channel), inputs
    if name == "q_conv_pool_concat":
        model = ConvPoolConcat().eval()
        inputs = (torch.randn(1, 3, 16, 16),)
        return static_quantize(model, inputs, per_channel=True), inputs
    if name == "q_conv_linear_per_tensor":
        model = ConvLinear().eval()
        inputs = (torch.randn(2, 4, 12, 12),)
        return static_quantize(model, inputs, per_channel=False), inputs
    if name == "q_dynamic_linear":
        model = Mlp().eval()
        inputs = (torch.randn(4, 64),)
        return dynamic_quantize(model, inputs), inputs
    if name == "q_dynamic_linear_4bit_per_channel":
        model = Mlp(64, 128, 32).eval()
        inputs = (torch.randn(4, 64),)
        return dynamic_quantize(model, inputs, weight_bits=4), inputs
    if name == "q_dynamic_linear_4bit":
        model = groupwise_4bit(Mlp(64, 128, 32).eval())
        inputs = (torch.randn(4, 64),)
        return model, inputs
    raise KeyError(name)


MODELS = ["q_linear", "q_add", "q_add_mul", "q_conv_pool_concat", "q_conv_linear_per_tensor",
          "q_dynamic_linear", "q_dynamic_linear_4bit", "q_dynamic_linear_4bit_per_channel"]


def lower(model, inputs):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.backends.xnnpack.utils.configs import get_transform_passes
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge_transform_and_lower
    ep = torch.export.export(model, inputs, strict=False)
    edge = to_edge_transform_and_lower(
        ep, partitioner=[XnnpackPartitioner()], transform_passes=get_transform_passes(),
        compile_config=EdgeCompileConfig(_check_ir_validity=False, _skip_dim_order=True))
    return edge.to_executorch(config=ExecutorchBackendConfig(extract_delegate_segments=False))


def run_executorch(pte, inputs):
    from executorch.runtime import Runtime
    method = Runtime.get().load_program(str(pte)).load_method("forward")
    return [o.clone() for o in method.execute([t.clone() for t in inputs])]


def output_steps(model):
    """Per output: the scale of the quantized value it is dequantized from (one quantization step), or None
    when the output is computed in float (dynamically quantized linear layers)."""
    graph = getattr(model, "graph", None)
    if graph is None:
        return None
    out = next(n for n in graph.nodes if n.op == "output")
    steps = []
    for arg in (out.args[0] if isinstance(out.args[0], (tuple, list)) else [out.args[0]]):
        node = arg
        # Pooling and reshapes after the dequantize keep its step.
        while node is not None and "dequantize" not in str(node.target) and node.op == "call_function":
            node = node.args[0] if node.args and hasattr(node.args[0], "op") else None
        if node is None or "dequantize_per_tensor" not in str(node.target):
            steps.append(None)
            continue
        scale = node.args[1]
        if getattr(scale, "op", None) == "get_attr":  # the .tensor overload keeps the scale in a buffer
            scale = getattr(model, scale.target)
        # A scale computed at run time (dynamic quantization) is no fixed step.
        steps.append(float(scale) if isinstance(scale, (float, int, torch.Tensor)) else None)
    return steps


def save(path, prefix, tensors):
    np.savez(path, **{f"{prefix}_{i}": t.detach().numpy() for i, t in enumerate(tensors)})


def command_line(doc, default_out):
    """(--only names or None, output directory, its index.json path, the index so far) of an export script."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(Path(__file__).parent / default_out))
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    index_path = out / "index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {"models": {}}
    return args.only, out, index_path, index


def main():
    only, out, index_path, index = command_line(__doc__, "generated_q")
    for name in only or MODELS:
        model, inputs = build(name)
        program = lower(model, inputs)
        d = out / name
        d.mkdir(exist_ok=True)
        (d / "xnnpack.pte").write_bytes(program.buffer)
        with torch.no_grad():
            eager = model(*inputs)
        eager = list(eager) if isinstance(eager, (tuple, list)) else [eager]
        theirs = run_executorch(d / "xnnpack.pte", inputs)
        save(d / "inputs.npz", "input", inputs)
        save(d / "expected.npz", "output", eager)
        save(d / "executorch_xnnpack.npz", "output", theirs)
        index["models"][name] = {"dir": name, "outputs": len(theirs), "output_steps": output_steps(model)}
        print(f"{name}: {len(program.buffer)} bytes")
        index_path.write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    index_path.write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
