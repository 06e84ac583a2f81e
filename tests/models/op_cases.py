"""Single-operator programs of etrt's reference set: one builder per operator ExecuTorch's exporter
emits (exported by export_models.py)."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from reference_models import Case, MethodSpec, ModelSpec, randn, seed_for



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


def op_builders() -> Dict[str, Tuple[str, OpBuilder]]:
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
