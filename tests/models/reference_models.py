"""The models of etrt's reference set and how each is specified: its methods, input cases and
tolerances (exported by export_models.py)."""
from __future__ import annotations

import dataclasses
import zlib
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


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

    def one_method(name, module_class, make_inputs, description):
        """A program with one static `forward` and one test case."""
        seeded(name)
        m = module_class().eval()
        x = make_inputs()
        specs.append(ModelSpec(name, description, {"forward": MethodSpec(m, x, [Case("", x)])}))

    one_method("mlp", MLP, lambda: (randn(4, 32),),
               "Linear(32,64)+ReLU, Linear(64,64)+ReLU, Linear(64,10), LogSoftmax(-1)")
    one_method("small_cnn", SmallCNN, lambda: (randn(2, 3, 16, 16),),
               "Conv-BN(eval, random running stats)-ReLU-MaxPool, Conv-ReLU-AvgPool, "
               "AdaptiveAvgPool(1,1), flatten, Linear(16,10)")
    one_method("mobilenet_v2_block", MobileNetV2Blocks, lambda: (randn(1, 16, 16, 16),),
               "Two MobileNetV2 inverted residual blocks (1x1 expand, ReLU6, "
               "3x3 depthwise, ReLU6, 1x1 project; residual on block 1, stride 2 on block 2), "
               "mean over H,W, Linear(24,10)")
    one_method("resnet_basic", ResNetBasic, lambda: (randn(1, 3, 32, 32),),
               "ResNet stem (3x3 conv, BN, ReLU, MaxPool(3,2,1)), two BasicBlocks "
               "(second with stride 2 and 1x1 conv+BN downsample), global avg pool, Linear(16,10)")
    one_method("transformer_encoder", TransformerEncoder, lambda: (torch.randint(0, 100, (2, 8), dtype=torch.int64),),
               "Embedding(100,32) of int64 ids + learned positions, pre-LN "
               "encoder block: explicit 4-head causal self-attention (bmm, masked_fill with "
               "triu(ones) mask, softmax), residual, LayerNorm, GELU MLP(64), residual")

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
