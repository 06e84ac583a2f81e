"""Programs exported by ExecuTorch 1.5.1 in bfloat16 and float16 (the reference MLP and transformer layer of
reference_models.py, a scaled-dot-product attention block like the zoo's sdpa model, cast with .to(dtype)),
run by etrt (`etrt run`) against eager PyTorch and ExecuTorch's runtime.

etrt computes each operator in float32 and rounds its result to the half type, as eager PyTorch's CPU kernels
and ExecuTorch's portable kernels do; they differ only where float32 summation order (matmul, reductions)
moves a result across a rounding boundary: one unit in the last place (ulp) of that element, which later
operators carry along. Bound: 2 ulp of the half type at the output's scale (max(1, max |reference|); bfloat16
ulp(1) = 2^-7, float16 ulp(1) = 2^-10), against both references. Measured (torch 2.13, executorch 1.5.1): at
most 0.8 of that unit from eager, 1.25 from ExecuTorch (its bmm and softmax round differently).
Programs and ExecuTorch's outputs are cached in the build directory (keyed by this file and the versions)."""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", HERE.parents[1]))
BUILD = Path(os.environ.get("ETRT_BUILD_DIR", SOURCE / "build"))
CLI = BUILD / "bin" / "etrt"
DTYPES = ("bfloat16", "float16")
MODELS = ("mlp", "transformer", "sdpa")
ULP1 = {"bfloat16": 2.0 ** -7, "float16": 2.0 ** -10}
ULPS_VS_EXECUTORCH, ULPS_VS_EAGER = 2, 2


def build_model(name, dtype):
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, str(HERE))
    import reference_models as rm

    torch.manual_seed(rm.seed_for(name))
    if name == "mlp":
        model, inputs = rm.MLP(), (torch.randn(4, 32),)
    elif name == "transformer":
        model, inputs = rm.TransformerEncoder(), (torch.randint(0, 100, (2, 8)),)
    else:
        class Attention(torch.nn.Module):  # the zoo's sdpa model's shape: q, k, v projections and a causal mask
            def __init__(self, d=32, heads=4):
                super().__init__()
                self.heads, self.qkv, self.o = heads, torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)

            def forward(self, x):
                B, T, D = x.shape
                q, k, v = self.qkv(x).view(B, T, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
                mask = torch.ones(T, T, dtype=torch.bool).tril()
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
                return self.o(y.transpose(1, 2).reshape(B, T, D))
        model, inputs = Attention(), (torch.randn(2, 6, 32),)
    to = getattr(torch, dtype)
    model = model.to(to).eval()
    inputs = tuple(x.to(to) if x.is_floating_point() else x for x in inputs)
    return model, inputs


def export(out: Path):
    """In a child process: every program, its inputs (bfloat16 saved as float32, exact) and eager outputs."""
    import torch
    from executorch.exir import EdgeCompileConfig, to_edge

    def save(path, t):
        np.save(path, (t.float() if t.dtype == torch.bfloat16 else t).detach().numpy())

    for name in MODELS:
        for dtype in DTYPES:
            d = out / f"{name}_{dtype}"
            d.mkdir(parents=True, exist_ok=True)
            model, inputs = build_model(name, dtype)
            ep = torch.export.export(model, inputs, strict=False)
            program = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False)).to_executorch()
            (d / "model.pte").write_bytes(program.buffer)
            for i, x in enumerate(inputs):
                save(d / f"input_{i}.npy", x)
            with torch.no_grad():
                save(d / "eager_0.npy", model(*inputs))
            ops = sorted({o.name + ("." + o.overload if o.overload else "")
                          for plan in program.executorch_program.execution_plan for o in plan.operators})
            (d / "operators.json").write_text(json.dumps(ops))


def run_executorch(out: Path):
    """In a child process: ExecuTorch's runtime on every program."""
    import torch
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    for d in sorted(p for p in out.iterdir() if p.is_dir()):
        dtype = getattr(torch, d.name.split("_")[-1])
        inputs = []
        for p in sorted(d.glob("input_*.npy")):
            x = torch.from_numpy(np.load(p))
            inputs.append(x.to(dtype) if x.is_floating_point() else x)
        y = runtime.load_program(str(d / "model.pte")).load_method("forward").execute(inputs)[0]
        np.save(d / "executorch_0.npy", (y.float() if y.dtype == torch.bfloat16 else y).numpy())


def cache_dir() -> Path:
    import executorch
    import torch
    key = hashlib.sha256(Path(__file__).read_bytes() + (HERE / "reference_models.py").read_bytes() +
                         torch.__version__.encode() + str(getattr(executorch, "__version__", "")).encode())
    return BUILD / "half_programs" / key.hexdigest()[:16]


@pytest.fixture(scope="module")
def programs():
    out = cache_dir()
    if not (out / "done").exists():
        for step in ("export", "executorch"):
            proc = subprocess.run([sys.executable, __file__, step, str(out)], capture_output=True, text=True, timeout=900)
            assert proc.returncode == 0, f"{step} failed:\n{proc.stderr[-3000:]}"
        (out / "done").write_text("")
    return out


def run_etrt(d: Path) -> np.ndarray:
    args = [str(CLI), "run", str(d / "model.pte"), "--output-dir", str(d / "etrt_out")]
    for p in sorted(d.glob("input_*.npy")):
        args += ["--input", str(p)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"etrt run failed: {proc.stderr.strip()}"
    return np.load(d / "etrt_out" / "output_0.npy")


def within_ulps(actual, expected, dtype, ulps):
    scale = max(1.0, float(np.abs(expected).max()))
    diff = float(np.abs(actual.astype(np.float64) - expected.astype(np.float64)).max())
    return diff, diff <= ulps * ULP1[dtype] * scale


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", MODELS)
def test_half_program_matches_executorch_and_eager(programs, name, dtype):
    d = programs / f"{name}_{dtype}"
    ops = json.loads((d / "operators.json").read_text())
    ours = run_etrt(d)
    eager, theirs = np.load(d / "eager_0.npy"), np.load(d / "executorch_0.npy")
    # The program really is half precision: its output has the half dtype (bfloat16 is written as float32).
    expected_dtype = np.float16 if dtype == "float16" else np.float32
    assert ours.dtype == expected_dtype and ours.shape == eager.shape, (ours.dtype, ours.shape, eager.shape)
    if dtype == "bfloat16":  # every value is a bfloat16: its low 16 bits are zero
        assert not (ours.view(np.uint32) & 0xFFFF).any()
    diff, ok = within_ulps(ours, theirs, dtype, ULPS_VS_EXECUTORCH)
    assert ok, f"{name} {dtype}: max |etrt - ExecuTorch| {diff:.3g} ({ops})"
    diff, ok = within_ulps(ours, eager, dtype, ULPS_VS_EAGER)
    assert ok, f"{name} {dtype}: max |etrt - eager| {diff:.3g}"


if __name__ == "__main__":
    {"export": export, "executorch": run_executorch}[sys.argv[1]](Path(sys.argv[2]))
