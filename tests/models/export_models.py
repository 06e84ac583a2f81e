#!/usr/bin/env python3
"""Export etrt's reference set of ExecuTorch programs.

Every program is produced by ExecuTorch's own exporter (torch.export ->
executorch.exir) and run through ExecuTorch's own Python runtime, so the files
written here are the ground truth that etrt's loader and kernels are tested
against.

Usage:
    python3 tests/models/export_models.py --out tests/models/generated
    python3 tests/models/export_models.py --out tests/models/generated --only mlp op_add
    python3 tests/models/export_models.py --out tests/models/generated --check

For each model NAME, NAME/ holds:
    portable.pte               to_edge(...).to_executorch(), no delegates
    xnnpack.pte                to_edge_transform_and_lower(partitioner=[XnnpackPartitioner()])
    inputs[_CASE].npz          input_0, input_1, ... in argument order
    expected[_CASE].npz        eager PyTorch outputs output_0, output_1, ...
    executorch_portable[_CASE].npz / executorch_xnnpack[_CASE].npz
                               outputs of ExecuTorch's runtime on the .pte
    meta.json                  methods, shapes, operators, delegates, tolerances
and OUT/index.json lists every model and its files.

Case suffixes: a model with one method ("forward") and one case has no
suffix.  Otherwise every case has a name (e.g. "b5", "call0", or the method
name for multi-method programs) and files are suffixed with "_<case>".  The
cases of a method are listed in meta.json in execution order; when the method
is "stateful" the cases must be executed in that order on one loaded method.

--check exports everything into a temporary directory (running ExecuTorch too)
and verifies that the inputs, eager outputs and operator lists match what is
committed under --out.  .pte bytes are not compared.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import shutil
import sys
import tempfile
import traceback
import warnings
import zlib
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore")

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5


# ---------------------------------------------------------------------------
# Model specification
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    name: str  # "" only for the single case of a single-method model
    inputs: Tuple[Any, ...]


@dataclasses.dataclass
class MethodSpec:
    module: nn.Module  # its forward() is the method
    example_inputs: Tuple[Any, ...]
    cases: List[Case]
    dynamic_shapes: Any = None
    stateful: bool = False  # cases run in order on one loaded method


@dataclasses.dataclass
class ModelSpec:
    name: str
    description: str
    methods: Dict[str, MethodSpec]
    kind: str = "model"  # "model" or "op"
    xnnpack: bool = True
    tolerance: Optional[Dict[str, Any]] = None  # overrides, with "reason"
    target_op: Optional[str] = None  # for kind == "op"
    stateful_factory: Optional[Callable[[], nn.Module]] = None
    # to_executorch() config for both flows: (description, factory) or None
    # for the default ExecutorchBackendConfig().
    et_config: Optional[Tuple[str, Callable[[], Any]]] = None


def seed_for(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def randn(*shape, scale=1.0):
    return torch.randn(*shape) * scale


# ---------------------------------------------------------------------------
# 1-8: whole models
# ---------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 10)
        self.log_softmax = nn.LogSoftmax(dim=-1)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.log_softmax(self.fc3(x))


def randomize_bn(bn: nn.BatchNorm2d) -> nn.BatchNorm2d:
    c = bn.num_features
    with torch.no_grad():
        bn.weight.copy_(1.0 + 0.2 * torch.randn(c))
        bn.bias.copy_(0.1 * torch.randn(c))
        bn.running_mean.copy_(0.2 * torch.randn(c))
        bn.running_var.copy_(0.5 + torch.rand(c))
    return bn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = randomize_bn(nn.BatchNorm2d(8))
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool2 = nn.AvgPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool1(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool2(torch.relu(self.conv2(x)))
        x = torch.flatten(self.gap(x), 1)
        return self.fc(x)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.expand = nn.Conv2d(cin, hidden, 1)
        self.act1 = nn.ReLU6()
        self.dw = nn.Conv2d(hidden, hidden, 3, stride=stride, padding=1, groups=hidden)
        self.act2 = nn.ReLU6()
        self.project = nn.Conv2d(hidden, cout, 1)

    def forward(self, x):
        y = self.project(self.act2(self.dw(self.act1(self.expand(x)))))
        return x + y if self.use_res else y


class MobileNetV2Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = InvertedResidual(16, 16, stride=1, expand=2)
        self.block2 = InvertedResidual(16, 24, stride=2, expand=2)
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        x = self.block2(self.block1(x))
        return self.fc(x.mean([2, 3]))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = randomize_bn(nn.BatchNorm2d(cout))
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = randomize_bn(nn.BatchNorm2d(cout))
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                randomize_bn(nn.BatchNorm2d(cout)),
            )

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + identity)


class ResNetBasic(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = randomize_bn(nn.BatchNorm2d(8))
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = BasicBlock(8, 8, 1)
        self.layer2 = BasicBlock(8, 16, 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.maxpool(torch.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class TransformerEncoder(nn.Module):
    def __init__(self, vocab=100, d=32, heads=4, seq=8, ff=64):
        super().__init__()
        self.d, self.heads = d, heads
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(0.1 * torch.randn(seq, d))
        self.ln1 = nn.LayerNorm(d)
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        with torch.no_grad():  # non-trivial affine parameters
            for ln in (self.ln1, self.ln2):
                ln.weight.copy_(1.0 + 0.1 * torch.randn(d))
                ln.bias.copy_(0.1 * torch.randn(d))

    def forward(self, ids):
        B, T = ids.shape
        H, Dh = self.heads, self.d // self.heads
        x = self.tok(ids) + self.pos[:T]
        h = self.ln1(x)

        def split(t):  # [B,T,D] -> [B*H,T,Dh]
            return t.view(B, T, H, Dh).transpose(1, 2).reshape(B * H, T, Dh)

        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        scores = torch.bmm(q, k.transpose(1, 2)) * (1.0 / (Dh**0.5))
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(causal, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        ctx = torch.bmm(attn, v)  # [B*H,T,Dh]
        ctx = ctx.view(B, H, T, Dh).transpose(1, 2).reshape(B, T, self.d)
        x = x + self.o(ctx)
        x = x + self.ff2(F.gelu(self.ff1(self.ln2(x))))
        return x


class DynamicMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class EncoderDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 8)
        self.dec = nn.Linear(8, 16)

    def encode(self, x):
        return torch.tanh(self.enc(x))

    def forward(self, x):
        return self.dec(self.encode(x))


class EncodeMethod(nn.Module):
    """Exposes EncoderDecoder.encode as forward() so it can be exported."""

    def __init__(self, m: EncoderDecoder):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m.encode(x)


class RunningMean(nn.Module):
    def __init__(self, count0: float = 0.0, total0: Optional[torch.Tensor] = None):
        super().__init__()
        self.register_buffer("count", torch.full((1,), count0))
        self.register_buffer("total", torch.zeros(2, 4) if total0 is None else total0.clone())

    def forward(self, x):
        self.count.add_(1.0)
        self.total.add_(x)
        return self.total / self.count


def build_models() -> List[ModelSpec]:
    specs: List[ModelSpec] = []

    def seeded(name):
        torch.manual_seed(seed_for(name))

    seeded("mlp")
    m = MLP().eval()
    x = (randn(4, 32),)
    specs.append(ModelSpec("mlp", "Linear(32,64)+ReLU, Linear(64,64)+ReLU, Linear(64,10), LogSoftmax(-1)",
                           {"forward": MethodSpec(m, x, [Case("", x)])}))

    seeded("small_cnn")
    m = SmallCNN().eval()
    x = (randn(2, 3, 16, 16),)
    specs.append(ModelSpec("small_cnn", "Conv-BN(eval, random running stats)-ReLU-MaxPool, Conv-ReLU-AvgPool, "
                           "AdaptiveAvgPool(1,1), flatten, Linear(16,10)",
                           {"forward": MethodSpec(m, x, [Case("", x)])}))

    seeded("mobilenet_v2_block")
    m = MobileNetV2Blocks().eval()
    x = (randn(1, 16, 16, 16),)
    specs.append(ModelSpec("mobilenet_v2_block", "Two MobileNetV2 inverted residual blocks (1x1 expand, ReLU6, "
                           "3x3 depthwise, ReLU6, 1x1 project; residual on block 1, stride 2 on block 2), "
                           "mean over H,W, Linear(24,10)",
                           {"forward": MethodSpec(m, x, [Case("", x)])}))

    seeded("resnet_basic")
    m = ResNetBasic().eval()
    x = (randn(1, 3, 32, 32),)
    specs.append(ModelSpec("resnet_basic", "ResNet stem (3x3 conv, BN, ReLU, MaxPool(3,2,1)), two BasicBlocks "
                           "(second with stride 2 and 1x1 conv+BN downsample), global avg pool, Linear(16,10)",
                           {"forward": MethodSpec(m, x, [Case("", x)])}))

    seeded("transformer_encoder")
    m = TransformerEncoder().eval()
    x = (torch.randint(0, 100, (2, 8), dtype=torch.int64),)
    specs.append(ModelSpec("transformer_encoder", "Embedding(100,32) of int64 ids + learned positions, pre-LN "
                           "encoder block: explicit 4-head causal self-attention (bmm, masked_fill with "
                           "triu(ones) mask, softmax), residual, LayerNorm, GELU MLP(64), residual",
                           {"forward": MethodSpec(m, x, [Case("", x)])}))

    seeded("dynamic_mlp")
    m = DynamicMLP().eval()
    batch = torch.export.Dim("batch", min=1, max=16)
    cases = [Case(f"b{b}", (randn(b, 16),)) for b in (1, 5, 16)]
    specs.append(ModelSpec("dynamic_mlp", "Linear(16,32)+ReLU+Linear(32,8) with a dynamic batch dimension "
                           "(torch.export.Dim('batch', min=1, max=16)); cases batch 1, 5, 16",
                           {"forward": MethodSpec(m, (randn(4, 16),), cases, dynamic_shapes=({0: batch},))}))

    seeded("two_methods")
    m = EncoderDecoder().eval()
    xf, xe = (randn(2, 16),), (randn(3, 16),)
    specs.append(ModelSpec("two_methods", "One program, two methods sharing weights: forward(x) = "
                           "dec(tanh(enc(x))) on [2,16], encode(x) = tanh(enc(x)) on [3,16]",
                           {"forward": MethodSpec(m, xf, [Case("forward", xf)]),
                            "encode": MethodSpec(EncodeMethod(m).eval(), xe, [Case("encode", xe)])}))

    seeded("mutable_buffer")
    m = RunningMean().eval()
    cases = [Case(f"call{i}", (randn(2, 4),)) for i in range(3)]
    specs.append(ModelSpec("mutable_buffer", "Running mean with two mutable buffers: count.add_(1); "
                           "total.add_(x); return total / count. State carries across calls; cases "
                           "call0..call2 must run in order on one loaded method",
                           {"forward": MethodSpec(m, cases[0].inputs, cases, stateful=True)},
                           stateful_factory=RunningMean))

    seeded("mutable_buffer_init")
    total0 = randn(2, 4)
    m = RunningMean(2.0, total0).eval()
    cases = [Case(f"call{i}", (randn(2, 4),)) for i in range(3)]

    def init_config():
        from executorch.exir import ExecutorchBackendConfig
        from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass
        return ExecutorchBackendConfig(passes=[InitializedMutableBufferPass(["count", "total"])])

    specs.append(ModelSpec("mutable_buffer_init", "Same running mean as mutable_buffer but the buffers start "
                           "non-zero (count=2, total=randn) and to_executorch runs InitializedMutableBufferPass "
                           "so their initial values are serialized; cases call0..call2 run in order",
                           {"forward": MethodSpec(m, cases[0].inputs, cases, stateful=True)},
                           stateful_factory=lambda: RunningMean(2.0, total0),
                           et_config=("ExecutorchBackendConfig(passes=[InitializedMutableBufferPass(['count', 'total'])])",
                                      init_config)))
    return specs


# ---------------------------------------------------------------------------
# 9: single-operator programs
# ---------------------------------------------------------------------------


class Fn(nn.Module):
    def __init__(self, fn, params: Optional[Dict[str, torch.Tensor]] = None):
        super().__init__()
        self.fn = fn
        for k, v in (params or {}).items():
            self.register_buffer(k, v)

    def forward(self, *args):
        return self.fn(self, *args)


# Each builder returns (description, {method: (fn, inputs)}).  Method "forward"
# is the basic case; "broadcast" and "rank0" exist where meaningful.
OpBuilder = Callable[[], Tuple[str, Dict[str, Tuple[Callable, Tuple[Any, ...]]]]]


def _binary(fn, desc):
    def build():
        return desc, {
            "forward": (lambda s, a, b: fn(a, b), (randn(3, 5), randn(3, 5))),
            "broadcast": (lambda s, a, b: fn(a, b), (randn(2, 3, 4), randn(3, 1))),
            "rank0": (lambda s, a, b: fn(a, b), (randn(()), randn(()))),
        }
    return build


def _unary(fn, desc, scale=2.0):
    def build():
        return desc, {
            "forward": (lambda s, a: fn(a), (randn(3, 7, scale=scale),)),
            "rank0": (lambda s, a: fn(a), (randn((), scale=scale),)),
        }
    return build


def _op_builders() -> Dict[str, Tuple[str, OpBuilder]]:
    """Runtime operator name (without overload) -> (program name, builder)."""
    b: Dict[str, Tuple[str, OpBuilder]] = {}
    b["aten::add"] = ("op_add", _binary(torch.add, "a + b"))
    b["aten::mul"] = ("op_mul", _binary(torch.mul, "a * b"))
    b["aten::sub"] = ("op_sub", _binary(torch.sub, "a - b"))
    b["aten::div"] = ("op_div", _binary(torch.div, "a / b (true division)"))
    b["aten::relu"] = ("op_relu", _unary(torch.relu, "relu(a)"))
    b["aten::tanh"] = ("op_tanh", _unary(torch.tanh, "tanh(a)"))
    b["aten::gelu"] = ("op_gelu", _unary(F.gelu, "gelu(a), approximate='none' (erf form)", scale=3.0))

    def hardtanh():
        return "relu6(a) == hardtanh(a, 0, 6); hardtanh(a, -0.5, 0.75); rank 0", {
            "forward": (lambda s, a: F.relu6(a), (randn(3, 7, scale=5.0),)),
            "minmax": (lambda s, a: F.hardtanh(a, -0.5, 0.75), (randn(3, 7),)),
            "rank0": (lambda s, a: F.relu6(a), (torch.tensor(7.25),)),
        }
    b["aten::hardtanh"] = ("op_hardtanh", hardtanh)

    def addmm():
        return "torch.addmm(bias, a, b): full [M,N] bias and broadcast [N] bias (the nn.Linear pattern)", {
            "forward": (lambda s, c, a, w: torch.addmm(c, a, w), (randn(4, 6), randn(4, 5), randn(5, 6))),
            "broadcast": (lambda s, c, a, w: torch.addmm(c, a, w), (randn(6), randn(4, 5), randn(5, 6))),
        }
    b["aten::addmm"] = ("op_addmm", addmm)

    def mm():
        return "torch.mm(a, b)", {"forward": (lambda s, a, w: torch.mm(a, w), (randn(4, 5), randn(5, 6)))}
    b["aten::mm"] = ("op_mm", mm)

    def bmm():
        return "torch.bmm(a, b)", {"forward": (lambda s, a, w: torch.bmm(a, w), (randn(3, 4, 5), randn(3, 5, 6)))}
    b["aten::bmm"] = ("op_bmm", bmm)

    def permute():
        return "a.permute(2, 0, 1); a 2-d transpose a.t() (how nn.Linear weights are transposed)", {
            "forward": (lambda s, a: a.permute(2, 0, 1), (randn(2, 3, 4),)),
            "transpose2d": (lambda s, a: a.t(), (randn(3, 5),)),
        }
    b["aten::permute_copy"] = ("op_permute_copy", permute)

    def unsqueeze():
        return "x.unsqueeze(dim): middle dim, last dim, rank 0 -> [1]", {
            "forward": (lambda s, a: a.unsqueeze(1), (randn(3, 4),)),
            "last": (lambda s, a: a.unsqueeze(-1), (randn(5),)),
            "rank0": (lambda s, a: a.unsqueeze(0), (randn(()),)),
        }
    b["aten::unsqueeze_copy"] = ("op_unsqueeze_copy", unsqueeze)

    def conv():
        return "F.conv2d: 3x3 pad 1 with bias; stride 2 without bias; depthwise (groups=C); 1x1", {
            "forward": (lambda s, x: F.conv2d(x, s.w, s.b, padding=1), (randn(1, 3, 6, 6),)),
            "stride2_nobias": (lambda s, x: F.conv2d(x, s.w, None, stride=2, padding=1), (randn(2, 3, 7, 7),)),
            "depthwise": (lambda s, x: F.conv2d(x, s.wd, s.bd, stride=1, padding=1, groups=4), (randn(1, 4, 5, 5),)),
            "pointwise": (lambda s, x: F.conv2d(x, s.wp, s.bp), (randn(1, 4, 3, 3),)),
        }, {"w": randn(4, 3, 3, 3, scale=0.3), "b": randn(4, scale=0.1),
            "wd": randn(4, 1, 3, 3, scale=0.3), "bd": randn(4, scale=0.1),
            "wp": randn(6, 4, 1, 1, scale=0.3), "bp": randn(6, scale=0.1)}
    b["aten::convolution"] = ("op_convolution", conv)

    def bn():
        c = 4
        return "F.batch_norm in eval mode (running stats, affine)", {
            "forward": (lambda s, x: F.batch_norm(x, s.rm, s.rv, s.w, s.b, False, 0.1, 1e-5), (randn(2, c, 3, 3),)),
        }, {"rm": randn(c, scale=0.2), "rv": 0.5 + torch.rand(c), "w": 1 + randn(c, scale=0.2), "b": randn(c, scale=0.1)}
    b["aten::_native_batch_norm_legit_no_training"] = ("op_native_batch_norm", bn)

    def maxpool():
        return "F.max_pool2d: kernel 2; kernel 3 stride 2 pad 1", {
            "forward": (lambda s, x: F.max_pool2d(x, 2), (randn(1, 3, 6, 6),)),
            "k3s2p1": (lambda s, x: F.max_pool2d(x, 3, 2, 1), (randn(1, 2, 7, 7),)),
        }
    b["aten::max_pool2d_with_indices"] = ("op_max_pool2d_with_indices", maxpool)

    def avgpool():
        return "F.avg_pool2d: kernel 2; kernel 3 stride 2 pad 1 (count_include_pad=True)", {
            "forward": (lambda s, x: F.avg_pool2d(x, 2), (randn(1, 3, 6, 6),)),
            "k3s2p1": (lambda s, x: F.avg_pool2d(x, 3, 2, 1), (randn(1, 2, 7, 7),)),
        }
    b["aten::avg_pool2d"] = ("op_avg_pool2d", avgpool)

    def mean():
        return "x.mean([2,3]); x.mean(-1, keepdim=True); AdaptiveAvgPool2d((1,1))", {
            "forward": (lambda s, x: x.mean([2, 3]), (randn(2, 3, 4, 5),)),
            "keepdim": (lambda s, x: x.mean(-1, keepdim=True), (randn(3, 6),)),
            "adaptive_avg_pool": (lambda s, x: F.adaptive_avg_pool2d(x, (1, 1)), (randn(1, 3, 4, 4),)),
        }
    b["aten::mean"] = ("op_mean", mean)

    def log_softmax():
        return "torch.log_softmax over the last / first dim", {
            "forward": (lambda s, x: torch.log_softmax(x, -1), (randn(4, 10, scale=3.0),)),
            "dim0": (lambda s, x: torch.log_softmax(x, 0), (randn(5, 3, scale=3.0),)),
        }
    b["aten::_log_softmax"] = ("op_log_softmax", log_softmax)

    def softmax():
        return "torch.softmax over the last / first dim; rows containing -inf (input, not computed)", {
            "forward": (lambda s, x: torch.softmax(x, -1), (randn(4, 10, scale=3.0),)),
            "dim0": (lambda s, x: torch.softmax(x, 0), (randn(5, 3, scale=3.0),)),
            "neg_inf": (lambda s, x: torch.softmax(x, -1),
                        (randn(4, 4).masked_fill(torch.triu(torch.ones(4, 4, dtype=torch.bool), 1), float("-inf")),)),
        }
    b["aten::_softmax"] = ("op_softmax", softmax)

    def layer_norm():
        return "F.layer_norm over the last dim with affine parameters", {
            "forward": (lambda s, x: F.layer_norm(x, (8,), s.w, s.b, 1e-5), (randn(2, 3, 8, scale=2.0),)),
        }, {"w": 1 + randn(8, scale=0.2), "b": randn(8, scale=0.2)}
    b["aten::native_layer_norm"] = ("op_native_layer_norm", layer_norm)

    def embedding():
        return "F.embedding(int64 ids [2,3], weight [10,4]); 1-d ids", {
            "forward": (lambda s, i: F.embedding(i, s.w), (torch.tensor([[1, 0, 9], [3, 3, 7]], dtype=torch.int64),)),
            "ids1d": (lambda s, i: F.embedding(i, s.w), (torch.tensor([4, 2, 8, 0], dtype=torch.int64),)),
        }, {"w": randn(10, 4)}
    b["aten::embedding"] = ("op_embedding", embedding)

    def where():
        return ("torch.where(cond, a, b): same shape, broadcast, rank 0; masked_fill(mask, -inf) also "
                "lowers to where.self (with a scalar_tensor for the fill value)"), {
            "forward": (lambda s, c, x, y: torch.where(c, x, y), (torch.rand(3, 4) > 0.5, randn(3, 4), randn(3, 4))),
            "broadcast": (lambda s, c, x, y: torch.where(c, x, y), (torch.rand(3, 1) > 0.5, randn(2, 3, 4), randn(4))),
            "rank0": (lambda s, c, x, y: torch.where(c, x, y), (torch.tensor(False), randn(()), randn(()))),
        }
    b["aten::where"] = ("op_where", where)

    def ge():
        return "x >= scalar (Scalar overload, bool output): float, int64, rank 0", {
            "forward": (lambda s, x: x >= 0.25, (randn(3, 4),)),
            "int64": (lambda s, x: x >= 2, (torch.arange(-3, 5, dtype=torch.int64).reshape(2, 4),)),
            "rank0": (lambda s, x: x >= 0.0, (randn(()),)),
        }
    b["aten::ge"] = ("op_ge", ge)

    def logical_and():
        return "torch.logical_and on bool tensors: same shape, broadcast, rank 0", {
            "forward": (lambda s, a, c: torch.logical_and(a, c), (torch.rand(3, 4) > 0.5, torch.rand(3, 4) > 0.5)),
            "broadcast": (lambda s, a, c: torch.logical_and(a, c), (torch.rand(4, 1) > 0.5, torch.rand(1, 5) > 0.5)),
            "rank0": (lambda s, a, c: torch.logical_and(a, c), (torch.tensor(True), torch.tensor(True))),
        }
    b["aten::logical_and"] = ("op_logical_and", logical_and)

    def arange():
        return "torch.arange(n) (int64) and torch.arange(0.5, 3.0, 0.5) (float32); the input is ignored", {
            "forward": (lambda s, x: torch.arange(6), (randn(2),)),
            "float_step": (lambda s, x: torch.arange(0.5, 3.0, 0.5), (randn(2),)),
        }
    b["aten::arange"] = ("op_arange", arange)

    def full():
        return "torch.full((2,3), 1.5) and torch.ones(3,3, dtype=bool); the input is ignored", {
            "forward": (lambda s, x: torch.full((2, 3), 1.5), (randn(2),)),
            "bool": (lambda s, x: torch.ones(3, 3, dtype=torch.bool), (randn(2),)),
        }
    b["aten::full"] = ("op_full", full)

    def scalar_tensor():
        return "torch.scalar_tensor(-inf) / (2.5) (rank-0 float32); the input is ignored", {
            "forward": (lambda s, x: torch.scalar_tensor(float("-inf")), (randn(2),)),
            "finite": (lambda s, x: torch.scalar_tensor(2.5), (randn(2),)),
        }
    b["aten::scalar_tensor"] = ("op_scalar_tensor", scalar_tensor)

    def clone():
        return "x.clone() of a contiguous tensor; rank 0", {
            "forward": (lambda s, x: x.clone(), (randn(3, 4),)),
            "rank0": (lambda s, x: x.clone(), (randn(()),)),
        }
    b["dim_order_ops::_clone_dim_order"] = ("op_clone_dim_order", clone)

    def copy_():
        return "in-place write of a registered buffer: buf.copy_(x); return buf", {
            "forward": (lambda s, x: s.buf.copy_(x), (randn(2, 3),)),
        }, {"buf": torch.zeros(2, 3)}
    b["aten::copy_"] = ("op_copy", copy_)
    return b


def build_op_spec(op: str, name: str, builder: OpBuilder) -> ModelSpec:
    torch.manual_seed(seed_for(name))
    res = builder()
    desc, methods = res[0], res[1]
    params = res[2] if len(res) > 2 else None
    mspecs = {}
    for mname, (fn, inputs) in methods.items():
        mod = Fn(fn, params).eval()
        case_name = "" if len(methods) == 1 else mname
        mspecs[mname] = MethodSpec(mod, inputs, [Case(case_name, inputs)])
    return ModelSpec(name, f"single-operator program for {op}: {desc}", mspecs, kind="op",
                     xnnpack=False, target_op=op)


# ---------------------------------------------------------------------------
# Export and run
# ---------------------------------------------------------------------------


def to_numpy(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().contiguous().numpy()
    return np.asarray(t)


def as_tuple(out) -> Tuple[Any, ...]:
    if isinstance(out, (tuple, list)):
        return tuple(out)
    return (out,)


def tensor_desc(t) -> Dict[str, Any]:
    t = torch.as_tensor(t)
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}


def export_methods(spec: ModelSpec) -> Dict[str, Any]:
    eps = {}
    for mname, ms in spec.methods.items():
        eps[mname] = torch.export.export(ms.module, ms.example_inputs, dynamic_shapes=ms.dynamic_shapes)
    return eps


def eager_outputs(spec: ModelSpec) -> Dict[str, Dict[str, Tuple[Any, ...]]]:
    res: Dict[str, Dict[str, Tuple[Any, ...]]] = {}
    for mname, ms in spec.methods.items():
        res[mname] = {}
        module = ms.module
        if ms.stateful:
            module = spec.stateful_factory().eval()  # fresh state
            module.load_state_dict(ms.module.state_dict())
        with torch.no_grad():
            for case in ms.cases:
                res[mname][case.name] = tuple(o.clone() for o in as_tuple(module(*case.inputs)))
    return res


def plan_info(plan) -> Dict[str, Any]:
    from executorch.exir.schema import DelegateCall, KernelCall, Tensor

    ops = [f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators]
    calls: Dict[str, int] = {}
    n_delegate_calls = 0
    n_instructions = 0
    for chain in plan.chains:
        for ins in chain.instructions:
            n_instructions += 1
            a = ins.instr_args
            if isinstance(a, KernelCall):
                calls[ops[a.op_index]] = calls.get(ops[a.op_index], 0) + 1
            elif isinstance(a, DelegateCall):
                n_delegate_calls += 1
    dyn = {"STATIC": 0, "DYNAMIC_BOUND": 0, "DYNAMIC_UNBOUND": 0}
    mutable = []
    for idx, ev in enumerate(plan.values):
        v = ev.val
        if isinstance(v, Tensor):
            dyn[v.shape_dynamism.name] += 1
            eti = v.extra_tensor_info
            if eti is not None and (eti.fully_qualified_name or eti.mutable_data_segments_idx):
                mutable.append({"value_index": idx, "fqn": eti.fully_qualified_name,
                                "mutable_data_segments_idx": eti.mutable_data_segments_idx,
                                "sizes": list(v.sizes), "data_buffer_idx": v.data_buffer_idx,
                                "memory_planned": v.allocation_info is not None})
    input_vals = []
    for i in plan.inputs:
        v = plan.values[i].val
        if isinstance(v, Tensor):
            input_vals.append({"value_index": i, "sizes": list(v.sizes),
                               "shape_dynamism": v.shape_dynamism.name,
                               "memory_planned": v.allocation_info is not None})
    return {
        "operators": ops,
        "kernel_calls": dict(sorted(calls.items())),
        "delegates": [d.id for d in plan.delegates],
        "delegate_calls": n_delegate_calls,
        "instructions": n_instructions,
        "num_values": len(plan.values),
        "tensor_shape_dynamism": dyn,
        "program_inputs": input_vals,
        "non_const_buffer_sizes": list(plan.non_const_buffer_sizes),
        "tensors_with_extra_info": mutable,
    }


def pte_layout(data: bytes) -> Dict[str, Any]:
    """Where things live in the serialized .pte (read back from the bytes)."""
    from executorch.exir._serialize._program import _flatbuffer_to_program, _get_extended_header

    info: Dict[str, Any] = {"file_identifier": data[4:8].decode("ascii", "replace")}
    eh = _get_extended_header(data)
    size = len(data)
    if eh is not None and eh.is_valid():
        size = eh.program_size
        info["extended_header"] = {"program_size": eh.program_size, "segment_base_offset": eh.segment_base_offset,
                                   "segment_data_size": eh.segment_data_size}
    p = _flatbuffer_to_program(data[:size])
    info["version"] = p.version
    info["segments"] = [{"offset": s.offset, "size": s.size} for s in p.segments]
    info["constant_buffer_inline_entries"] = len(p.constant_buffer)
    info["constant_segment"] = {"segment_index": p.constant_segment.segment_index,
                                "num_offsets": len(p.constant_segment.offsets)}
    info["mutable_data_segments"] = [{"segment_index": m.segment_index, "num_offsets": len(m.offsets)}
                                     for m in (p.mutable_data_segments or [])]
    info["backend_delegate_data_inline"] = len(p.backend_delegate_data)
    info["named_data"] = [n.key for n in (p.named_data or [])]
    info["delegates"] = [{"plan": ep.name, "id": d.id, "processed_location": d.processed.location.name,
                          "processed_index": d.processed.index,
                          "compile_specs": [c.key for c in d.compile_specs]}
                         for ep in p.execution_plan for d in ep.delegates]
    return info


def edge_ops(edge_manager, mname: str) -> List[str]:
    names = set()
    gm = edge_manager.exported_program(mname).graph_module
    for node in gm.graph.nodes:
        if node.op == "call_function":
            schema = getattr(node.target, "_schema", None)
            if schema is not None:  # e.g. "aten::add.Tensor", "aten::addmm.default"
                names.add(f"{schema.name}.{schema.overload_name or 'default'}")
            else:  # operator.getitem and other Python callables
                mod = getattr(node.target, "__module__", "") or ""
                names.add(f"{mod.replace('_operator', 'operator')}.{getattr(node.target, '__name__', node.target)}")
    return sorted(names)


def graph_signature_info(ep) -> Dict[str, Any]:
    sig = ep.graph_signature
    return {
        "buffers_to_mutate": dict(sig.buffers_to_mutate),
        "buffers": list(sig.buffers),
        "user_inputs_to_mutate": dict(sig.user_inputs_to_mutate),
    }


def state_info(sig: Dict[str, Any], plans, mname: str, initialized: bool) -> Dict[str, Any]:
    """How mutable buffers show up in the portable program."""
    from executorch.exir.schema import KernelCall, Tensor

    plan = next(p for p in plans if p.name == mname)
    ops = [f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators]
    written = []
    for chain in plan.chains:
        for ins in chain.instructions:
            a = ins.instr_args
            if isinstance(a, KernelCall) and ops[a.op_index] == "aten::copy_":
                dst = a.args[0]
                t = plan.values[dst].val
                assert isinstance(t, Tensor)
                written.append({
                    "value_index": dst, "copy_args": list(a.args), "sizes": list(t.sizes),
                    "scalar_type": t.scalar_type.name,
                    "allocation": None if t.allocation_info is None else {
                        "memory_id": t.allocation_info.memory_id,
                        "offset": t.allocation_info.memory_offset_low
                        + (t.allocation_info.memory_offset_high << 32)},
                    "data_buffer_idx": t.data_buffer_idx,
                    "is_method_input": dst in plan.inputs,
                })
    return {
        "buffers": sig["buffers"],
        "buffers_to_mutate": sig["buffers_to_mutate"],
        "write_back": written,
        "how": (
            "Each mutated buffer is a memory-planned tensor value (allocation_info set, not a method input). "
            "The graph computes the new value into a temporary and the program ends with "
            "aten::copy_(buffer, new_value, non_blocking=False, out=buffer) kernel calls that write it back, "
            "so the state lives in the planned (non-constant) memory arena and persists across execute() "
            "calls of one loaded method. "
            + ("InitializedMutableBufferPass marked the buffers, so data_buffer_idx > 0 points at their "
               "initial values in the program's mutable-data segment (PTEFile.mutable_data / "
               "program.mutable_data_segments); the runtime copies them into the planned memory at method load."
               if initialized else
               "With the default config ExecuTorch serializes no initial value (data_buffer_idx 0, emitter "
               "warns that the initial state is 'meaningless'); ExecuTorch's Python runtime hands out "
               "zero-filled planned memory, so the buffers start at 0, which is what expected_call*.npz "
               "assume (the eager buffers also start at 0).")
        ),
    }


def run_executorch(pte_path: str, spec: ModelSpec) -> Dict[str, Dict[str, Tuple[torch.Tensor, ...]]]:
    from executorch.runtime import Runtime

    rt = Runtime.get()
    res: Dict[str, Dict[str, Tuple[torch.Tensor, ...]]] = {}
    program = rt.load_program(pte_path)  # fresh program -> fresh mutable state
    for mname, ms in spec.methods.items():
        method = program.load_method(mname)
        res[mname] = {}
        for case in ms.cases:
            outs = method.execute([torch.as_tensor(t).clone() for t in case.inputs])
            res[mname][case.name] = tuple(o.clone() if isinstance(o, torch.Tensor) else torch.as_tensor(o)
                                          for o in outs)
    return res


def max_abs_diff(a: Sequence[Any], b: Sequence[Any]) -> float:
    m = 0.0
    if len(a) != len(b):
        return float("inf")
    for x, y in zip(a, b):
        x, y = to_numpy(x), to_numpy(y)
        if x.shape != y.shape:
            return float("inf")
        if x.dtype == np.bool_ or np.issubdtype(x.dtype, np.integer):
            d = float(np.max(np.abs(x.astype(np.int64) - y.astype(np.int64)))) if x.size else 0.0
        else:
            xf, yf = x.astype(np.float64), y.astype(np.float64)
            both_inf = np.isinf(xf) & np.isinf(yf) & (np.sign(xf) == np.sign(yf))
            diff = np.where(both_inf, 0.0, np.abs(xf - yf))
            diff = np.where(np.isnan(xf) & np.isnan(yf), 0.0, diff)
            d = float(np.max(diff)) if diff.size else 0.0
        m = max(m, d)
    return m


def arrays_close(x: np.ndarray, y: np.ndarray, rtol: float, atol: float) -> bool:
    """allclose for float arrays (inf == inf, nan == nan), exact for bool/int."""
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if not np.issubdtype(x.dtype, np.floating):
        return bool(np.array_equal(x, y))
    return bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))


def suffix(case_name: str) -> str:
    return f"_{case_name}" if case_name else ""


def save_npz(path: str, prefix: str, tensors: Sequence[Any]) -> None:
    # Uncompressed on purpose: a C++ test can read it without zlib.
    np.savez(path, **{f"{prefix}_{i}": to_numpy(t) for i, t in enumerate(tensors)})


@contextlib.contextmanager
def quiet():
    """Silence the exporter's chatter (Python and C-level stdout/stderr)."""
    if os.environ.get("ETRT_EXPORT_VERBOSE"):
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 1)
        os.dup2(devnull.fileno(), 2)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def export_model(spec: ModelSpec, out_root: str) -> Dict[str, Any]:
    from executorch.exir import to_edge, to_edge_transform_and_lower

    d = os.path.join(out_root, spec.name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)

    meta: Dict[str, Any] = {"name": spec.name, "kind": spec.kind, "description": spec.description,
                            "export": {
                                "portable": "torch.export.export -> executorch.exir.to_edge -> to_executorch",
                                "xnnpack": "torch.export.export -> to_edge_transform_and_lower("
                                           "partitioner=[XnnpackPartitioner()]) -> to_executorch",
                                "to_executorch_config": spec.et_config[0] if spec.et_config
                                else "ExecutorchBackendConfig() (default)"}}
    if spec.target_op:
        meta["target_op"] = spec.target_op

    eager = eager_outputs(spec)

    # --- portable --------------------------------------------------------
    with quiet():
        eps = export_methods(spec)
        edge = to_edge(eps)
        edge_op_names = {m: edge_ops(edge, m) for m in spec.methods}
        edge_sigs = {m: graph_signature_info(edge.exported_program(m)) for m in spec.methods}
        et_prog = edge.to_executorch(spec.et_config[1]() if spec.et_config else None)
    with open(os.path.join(d, "portable.pte"), "wb") as f:
        f.write(et_prog.buffer)
    plans = {p.name: plan_info(p) for p in et_prog.executorch_program.execution_plan}
    meta["program"] = pte_layout(et_prog.buffer)

    # --- xnnpack ---------------------------------------------------------
    xnn_plans: Optional[Dict[str, Any]] = None
    meta["xnnpack"] = {"exported": False}
    if spec.xnnpack:
        try:
            from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

            with quiet():
                xeps = export_methods(spec)
                lowered = to_edge_transform_and_lower(xeps, partitioner=[XnnpackPartitioner()])
                xprog = lowered.to_executorch(spec.et_config[1]() if spec.et_config else None)
            with open(os.path.join(d, "xnnpack.pte"), "wb") as f:
                f.write(xprog.buffer)
            xnn_plans = {p.name: plan_info(p) for p in xprog.executorch_program.execution_plan}
            delegates = sorted({i for p in xnn_plans.values() for i in p["delegates"]})
            meta["xnnpack"] = {"exported": True, "delegates": delegates}
            if not delegates:
                meta["xnnpack"]["note"] = "XnnpackPartitioner claimed no node; program is portable-only"
        except Exception as e:  # record why and keep going
            meta["xnnpack"] = {"exported": False, "error": f"{type(e).__name__}: {e}"[:2000]}
    else:
        meta["xnnpack"]["skipped"] = "single-operator programs are exported portable-only"

    # --- run ExecuTorch --------------------------------------------------
    flows = {"portable": os.path.join(d, "portable.pte")}
    if meta["xnnpack"].get("exported"):
        flows["xnnpack"] = os.path.join(d, "xnnpack.pte")
    et_outs = {}
    run_errors = {}
    for flow, path in flows.items():
        try:
            with quiet():
                et_outs[flow] = run_executorch(path, spec)
        except Exception as e:
            run_errors[flow] = f"{type(e).__name__}: {e}"[:2000]

    # --- files -------------------------------------------------------------
    files = ["portable.pte"] + (["xnnpack.pte"] if "xnnpack" in flows else [])
    methods_meta = {}
    max_diff = {flow: 0.0 for flow in flows}
    for mname, ms in spec.methods.items():
        cases_meta = []
        for case in ms.cases:
            sfx = suffix(case.name)
            cm = {"name": case.name, "inputs_file": f"inputs{sfx}.npz", "expected_file": f"expected{sfx}.npz",
                  "inputs": [tensor_desc(t) for t in case.inputs],
                  "outputs": [tensor_desc(t) for t in eager[mname][case.name]]}
            save_npz(os.path.join(d, cm["inputs_file"]), "input", case.inputs)
            save_npz(os.path.join(d, cm["expected_file"]), "output", eager[mname][case.name])
            files += [cm["inputs_file"], cm["expected_file"]]
            cm["executorch"] = {}
            for flow in flows:
                if flow not in et_outs:
                    continue
                fn = f"executorch_{flow}{sfx}.npz"
                outs = et_outs[flow][mname][case.name]
                save_npz(os.path.join(d, fn), "output", outs)
                files.append(fn)
                diff = max_abs_diff(outs, eager[mname][case.name])
                max_diff[flow] = max(max_diff[flow], diff)
                cm["executorch"][flow] = {"file": fn, "max_abs_diff_vs_eager": diff}
            cases_meta.append(cm)
        mm: Dict[str, Any] = {
            "inputs": [tensor_desc(t) for t in ms.example_inputs],
            "outputs": cases_meta[0]["outputs"] if len(ms.cases) == 1 else
            [tensor_desc(t) for t in as_tuple(ms.module(*ms.example_inputs))] if not ms.stateful else cases_meta[0]["outputs"],
            "stateful": ms.stateful,
            "cases": cases_meta,
            "operators": plans[mname]["operators"],
            "edge_ops": edge_op_names[mname],
            "portable_plan": {k: v for k, v in plans[mname].items() if k != "operators"},
        }
        if ms.dynamic_shapes is not None:
            mm["dynamic_shapes"] = [
                {str(dim): {"name": dd.__name__, "min": dd.min, "max": dd.max} for dim, dd in ds.items()}
                if ds else None for ds in ms.dynamic_shapes]
            mm["inputs_note"] = "example input used for torch.export; the program accepts any size within dynamic_shapes bounds"
        if ms.stateful or edge_sigs[mname]["buffers_to_mutate"]:
            mm["state"] = state_info(edge_sigs[mname], et_prog.executorch_program.execution_plan,
                                     mname, spec.et_config is not None)
        if xnn_plans is not None:
            mm["xnnpack_plan"] = xnn_plans[mname]
        methods_meta[mname] = mm
    meta["methods"] = methods_meta
    meta["operators"] = sorted({o for m in methods_meta.values() for o in m["operators"]})
    if run_errors:
        meta["executorch_run_errors"] = run_errors
    meta["max_abs_diff_vs_eager"] = max_diff
    meta["tolerance"] = tolerance_for(spec, max_diff)
    meta["files"] = {}
    for fn in files:
        meta["files"][fn] = os.path.getsize(os.path.join(d, fn))
    files.append("meta.json")
    meta["file_list"] = files
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=False)
        f.write("\n")
    return meta


# Per-model tolerance overrides, with the reason.  Everything else uses
# rtol 1e-4 / atol 1e-5.
TOLERANCE_OVERRIDES: Dict[str, Dict[str, Any]] = {}


def tolerance_for(spec: ModelSpec, max_diff: Dict[str, float]) -> Dict[str, Any]:
    tol: Dict[str, Any] = {"rtol": DEFAULT_RTOL, "atol": DEFAULT_ATOL,
                           "compare": "np.allclose(actual, expected, rtol, atol, equal_nan=True) for floating "
                                      "outputs (+-inf must match exactly); exact equality for bool/int outputs"}
    observed = ", ".join(f"{k} {v:.2g}" for k, v in max_diff.items())
    tol["reason"] = (f"default float32 tolerance; ExecuTorch's own kernels differ from eager by at most "
                     f"{observed}, far inside it, so no op here needs a looser bound. Reductions, matmul/conv "
                     f"accumulation order and libm exp/erf/tanh may still make an independent implementation "
                     f"differ from eager in the last few ulps, which rtol 1e-4 absorbs")
    if spec.name in TOLERANCE_OVERRIDES:
        tol.update(TOLERANCE_OVERRIDES[spec.name])
    return tol


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def all_specs(only: Optional[List[str]]) -> Tuple[List[ModelSpec], List[str]]:
    models = build_models()
    builders = _op_builders()
    op_specs = [build_op_spec(op, nm, fn) for op, (nm, fn) in sorted(builders.items(), key=lambda kv: kv[1][0])]
    specs = models + op_specs
    if only:
        specs = [s for s in specs if s.name in only]
        missing = set(only) - {s.name for s in specs}
        if missing:
            raise SystemExit(f"unknown model(s): {sorted(missing)}")
    return specs, sorted(builders)


def fmt_size(n: Optional[int]) -> str:
    if n is None:
        return "-"
    return f"{n / 1024:.1f}K"


def print_table(metas: List[Dict[str, Any]]) -> None:
    rows = [("model", "ops", "portable.pte", "xnnpack.pte (delegates)", "max|ET-eager| portable", "xnnpack")]
    for m in metas:
        x = m["xnnpack"]
        xs = "-"
        if x.get("exported"):
            xs = f"{fmt_size(m['files'].get('xnnpack.pte'))} ({','.join(x['delegates']) or 'none'})"
        elif x.get("error"):
            xs = "FAILED"
        md = m["max_abs_diff_vs_eager"]
        rows.append((m["name"], str(len(m["operators"])), fmt_size(m["files"]["portable.pte"]), xs,
                     f"{md.get('portable', float('nan')):.3g}",
                     f"{md['xnnpack']:.3g}" if "xnnpack" in md else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def write_index(out: str, metas: List[Dict[str, Any]]) -> None:
    from importlib.metadata import version

    path = os.path.join(out, "index.json")
    existing = {}
    if os.path.exists(path):
        with open(path) as f:
            for e in json.load(f).get("models", []):
                existing[e["name"]] = e
    for m in metas:
        existing[m["name"]] = {
            "name": m["name"], "kind": m["kind"], "dir": m["name"],
            "methods": list(m["methods"]), "files": m["file_list"],
            "operators": m["operators"],
            "xnnpack_delegates": m["xnnpack"].get("delegates", []),
            "tolerance": {k: m["tolerance"][k] for k in ("rtol", "atol")},
        }
    models = sorted(existing.values(), key=lambda e: (e["kind"] != "model", e["name"]))
    # keep the declared order for whole models
    order = [s.name for s in build_models()]
    models.sort(key=lambda e: (e["kind"] != "model", order.index(e["name"]) if e["name"] in order else 0, e["name"]))
    portable_ops = sorted({o for e in models for o in e["operators"]})
    index = {
        "generator": "tests/models/export_models.py",
        "versions": {"torch": torch.__version__, "executorch": version("executorch")},
        "models": models,
        "portable_operators": portable_ops,
    }
    with open(path, "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


def check_op_coverage(metas: List[Dict[str, Any]], builders: List[str]) -> List[str]:
    """Every operator used by a whole model must have a single-op program."""
    used = sorted({o for m in metas if m["kind"] == "model" for o in m["operators"]})
    covered = {o for m in metas if m["kind"] == "op" for o in m["operators"]}
    return [o for o in used if o not in covered]


def compare_with_committed(new_root: str, old_root: str, metas: List[Dict[str, Any]]) -> List[str]:
    problems = []
    for m in metas:
        old_meta_path = os.path.join(old_root, m["name"], "meta.json")
        if not os.path.exists(old_meta_path):
            problems.append(f"{m['name']}: not committed under {old_root}")
            continue
        with open(old_meta_path) as f:
            old = json.load(f)
        tol = old["tolerance"]
        if old["operators"] != m["operators"]:
            problems.append(f"{m['name']}: operator list changed {old['operators']} -> {m['operators']}")
        for mname, mm in m["methods"].items():
            for case in mm["cases"]:
                for kind in ("inputs_file", "expected_file"):
                    fn = case[kind]
                    a = np.load(os.path.join(new_root, m["name"], fn))
                    op = os.path.join(old_root, m["name"], fn)
                    if not os.path.exists(op):
                        problems.append(f"{m['name']}: committed {fn} missing")
                        continue
                    b = np.load(op)
                    if sorted(a.files) != sorted(b.files):
                        problems.append(f"{m['name']}/{fn}: array names differ")
                        continue
                    for k in a.files:
                        if a[k].shape != b[k].shape or a[k].dtype != b[k].dtype:
                            problems.append(f"{m['name']}/{fn}:{k}: shape/dtype differ")
                        elif kind == "inputs_file" and not np.array_equal(a[k], b[k]):
                            problems.append(f"{m['name']}/{fn}:{k}: inputs differ")
                        elif not arrays_close(a[k], b[k], tol["rtol"], tol["atol"]):
                            problems.append(f"{m['name']}/{fn}:{k}: eager outputs differ "
                                            f"(max {max_abs_diff([a[k]], [b[k]]):.3g})")
                # The re-exported programs, run by ExecuTorch, must still match
                # the committed expected outputs.
                for flow, info in case["executorch"].items():
                    et = np.load(os.path.join(new_root, m["name"], info["file"]))
                    exp = np.load(os.path.join(old_root, m["name"], case["expected_file"]))
                    for k in exp.files:
                        if not arrays_close(et[k], exp[k], tol["rtol"], tol["atol"]):
                            problems.append(f"{m['name']}/{info['file']}:{k}: re-exported {flow} program "
                                            f"disagrees with committed expected outputs")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated"))
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--check", action="store_true",
                    help="re-export into a temp dir and compare with the files under --out")
    args = ap.parse_args(argv)

    specs, builders = all_specs(args.only)
    tmp = None
    out = args.out
    if args.check:
        tmp = tempfile.mkdtemp(prefix="etrt_export_check_")
        out = tmp
    os.makedirs(out, exist_ok=True)

    metas, failures = [], []
    for spec in specs:
        print(f"[export] {spec.name}", flush=True)
        try:
            meta = export_model(spec, out)
        except Exception:
            failures.append(spec.name)
            traceback.print_exc()
            continue
        if spec.target_op and not any(o == spec.target_op or o.startswith(spec.target_op + ".")
                                      for o in meta["operators"]):
            failures.append(spec.name)
            print(f"  ERROR: {spec.name} does not call {spec.target_op}: {meta['operators']}")
        if "executorch_run_errors" in meta:
            failures.append(spec.name)
            print(f"  ExecuTorch run failed: {meta['executorch_run_errors']}")
        tol = meta["tolerance"]
        d = os.path.join(out, spec.name)
        for mname, mm in meta["methods"].items():
            for case in mm["cases"]:
                exp = np.load(os.path.join(d, case["expected_file"]))
                for flow, info in case["executorch"].items():
                    got = np.load(os.path.join(d, info["file"]))
                    if sorted(got.files) != sorted(exp.files) or not all(
                            arrays_close(got[k], exp[k], tol["rtol"], tol["atol"]) for k in exp.files):
                        failures.append(spec.name)
                        print(f"  ERROR: {spec.name}/{mname}/{case['name']}: ExecuTorch {flow} outputs differ "
                              f"from eager beyond rtol={tol['rtol']} atol={tol['atol']} "
                              f"(max abs diff {info['max_abs_diff_vs_eager']:.3g})")
        metas.append(meta)

    print()
    print_table(metas)
    if not args.only:
        missing = check_op_coverage(metas, builders)
        if missing:
            print(f"\nWARNING: operators without a single-op program: {missing}")
        all_ops = sorted({o for m in metas if m["kind"] == "model" for o in m["operators"]})
        print(f"\n{len(all_ops)} distinct operators in the model programs:")
        for o in all_ops:
            print(f"  {o}")

    rc = 1 if failures else 0
    if args.check:
        problems = compare_with_committed(out, args.out, metas)
        shutil.rmtree(tmp, ignore_errors=True)
        if problems:
            print("\nCHECK FAILED:")
            for p in problems:
                print(f"  {p}")
            rc = 1
        else:
            print(f"\nCHECK OK: {len(metas)} models re-exported; eager outputs, inputs and operator "
                  f"lists match {args.out}")
    else:
        write_index(out, metas)
        total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(out) for f in fs)
        print(f"\ntotal size of {out}: {total / 1024:.1f} KiB")
    if failures:
        print(f"\nFAILED: {failures}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
