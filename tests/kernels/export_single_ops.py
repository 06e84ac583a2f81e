"""Single-operator programs exported by ExecuTorch, for parity tests of the
kernels_optimized operators against eager PyTorch (test_single_op_parity.py).

All cases are exported in ONE process (exports are slow) into a cache directory
keyed by this file's contents and the torch/executorch versions:

    python3 export_single_ops.py OUT_DIR      # writes OUT_DIR/<key>/{index.json, <case>.pte, <case>.npz}

Each case records the operators its program calls, so the parity test can check
that the operator under test really is in the program (the edge dialect
decomposes some operators). <case>.npz holds input_<i> and eager output_<i>.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve()

g = torch.Generator().manual_seed(0)


def rand(*shape, lo=-2.0, hi=2.0, dtype=torch.float32):
    return (torch.rand(*shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


def ints(*shape, lo=-20, hi=20, dtype=torch.int64):
    return torch.randint(lo, hi, shape, generator=g, dtype=dtype)


def q():
    return torch.ops.quantized_decomposed


# name -> (target operator, function, inputs). Functions take tensors only; other
# arguments are constants of the program.
def cases():
    import executorch.exir.passes._quant_patterns_and_replacements  # noqa: F401  (registers embedding_*bit)
    import executorch.kernels.quantized  # noqa: F401  (the out variants of quantized_decomposed::*)
    x = rand(3, 4, 5)
    c = {}
    for name, fn, lo, hi in [("tan", torch.tan, -1.2, 1.2), ("asin", torch.asin, -0.99, 0.99),
                             ("acos", torch.acos, -0.99, 0.99), ("atan", torch.atan, -5, 5),
                             ("sinh", torch.sinh, -3, 3), ("cosh", torch.cosh, -3, 3), ("asinh", torch.asinh, -5, 5),
                             ("acosh", torch.acosh, 1.0, 6), ("atanh", torch.atanh, -0.99, 0.99),
                             ("log2", torch.log2, 0.01, 9), ("log10", torch.log10, 0.01, 9),
                             ("sign", torch.sign, -2, 2)]:
        c[name] = (f"aten::{name}.out", fn, [rand(4, 6, lo=lo, hi=hi)])
    c["sign_int"] = ("aten::sign.out", torch.sign, [ints(7)])
    c["tan_int_input"] = ("aten::tan.out", torch.tan, [ints(2, 3, lo=-3, hi=3, dtype=torch.int32)])
    special = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0, -3.5])
    c["isnan"] = ("aten::isnan.out", torch.isnan, [special])
    c["isinf"] = ("aten::isinf.out", torch.isinf, [special])
    c["logit"] = ("aten::logit.out", lambda a: torch.logit(a, eps=1e-3), [rand(5, 4, lo=0.0, hi=1.0)])
    c["logit_no_eps"] = ("aten::logit.out", torch.logit, [rand(5, 4, lo=0.05, hi=0.95)])
    c["elu"] = ("aten::elu.out", lambda a: F.elu(a, alpha=0.7), [x])
    a32, b32 = ints(4, 5, lo=-100, hi=100, dtype=torch.int32), ints(5, lo=-100, hi=100, dtype=torch.int32)
    c["bitwise_and_scalar"] = ("aten::bitwise_and.Scalar_out", lambda a: torch.bitwise_and(a, 12), [a32])
    c["bitwise_or_scalar"] = ("aten::bitwise_or.Scalar_out", lambda a: torch.bitwise_or(a, 5), [a32])
    c["bitwise_xor_scalar"] = ("aten::bitwise_xor.Scalar_out", lambda a: torch.bitwise_xor(a, 9), [a32])
    c["left_shift"] = ("aten::bitwise_left_shift.Tensor_out", torch.bitwise_left_shift,
                       [a32, ints(5, lo=0, hi=8, dtype=torch.int32)])
    c["right_shift"] = ("aten::bitwise_right_shift.Tensor_out", torch.bitwise_right_shift,
                        [a32, ints(5, lo=0, hi=8, dtype=torch.int32)])
    c["left_shift_scalar"] = ("aten::bitwise_left_shift.Tensor_Scalar_out", lambda a: torch.bitwise_left_shift(a, 3), [a32])
    c["right_shift_scalar"] = ("aten::bitwise_right_shift.Tensor_Scalar_out", lambda a: torch.bitwise_right_shift(a, 2), [a32])
    nonzero_b = torch.where(b32 == 0, torch.ones_like(b32), b32)
    c["floor_divide_int"] = ("aten::floor_divide.out", torch.floor_divide, [a32, nonzero_b])
    c["floor_divide_float"] = ("aten::floor_divide.out", torch.floor_divide, [x, rand(5, lo=0.5, hi=2)])
    c["fmod"] = ("aten::fmod.Tensor_out", torch.fmod, [x * 5, rand(5, lo=0.5, hi=2)])
    c["fmod_int"] = ("aten::fmod.Tensor_out", torch.fmod, [a32, nonzero_b])
    c["fmod_scalar"] = ("aten::fmod.Scalar_out", lambda a: torch.fmod(a, 1.5), [x * 5])
    c["remainder"] = ("aten::remainder.Tensor_out", torch.remainder, [x * 5, rand(5, lo=-2, hi=2)])
    c["remainder_int"] = ("aten::remainder.Tensor_out", torch.remainder, [a32, nonzero_b])
    c["remainder_scalar"] = ("aten::remainder.Scalar_out", lambda a: torch.remainder(a, -1.5), [x * 5])
    c["atan2"] = ("aten::atan2.out", torch.atan2, [x, rand(4, 5)])
    # Tensor-scalar and comparison kernels, prepared for float32 (kernels_optimized's binary_elementwise.cpp) and
    # generic otherwise: NaN, infinities and signed zeros against float and integer scalars.
    cmp_in = torch.cat([special, torch.tensor([-0.0, 0.5, 2.0]), rand(7)]).reshape(4, 4)
    for name, fn in [("gt", torch.gt), ("ge", torch.ge), ("lt", torch.lt), ("le", torch.le), ("eq", torch.eq),
                     ("ne", torch.ne)]:
        c[f"{name}_scalar"] = (f"aten::{name}.Scalar_out", lambda a, f=fn: f(a, 0.5), [cmp_in])
        c[f"{name}_tensor_broadcast"] = (f"aten::{name}.Tensor_out", fn, [cmp_in, torch.tensor([0.5, -0.0, 2.0, 1.0])])
    c["gt_scalar_int_scalar"] = ("aten::gt.Scalar_out", lambda a: a > 0, [cmp_in])
    c["gt_scalar_int_tensor"] = ("aten::gt.Scalar_out", lambda a: a > 2.5, [ints(3, 4)])
    for exponent in (2.0, 0.5, 3.0, -1.0, -0.5, 1.0, 1.7, 0.0):
        c[f"pow_scalar_{exponent}"] = ("aten::pow.Tensor_Scalar_out", lambda a, e=exponent: torch.pow(a, e),
                                       [torch.cat([special, rand(6, lo=0.1, hi=3)])])
    c["pow_scalar_int_tensor"] = ("aten::pow.Tensor_Scalar_out", lambda a: torch.pow(a, 2), [ints(3, 4)])
    mask = rand(3, 4, 5) > 0.5
    c["any_all"] = ("aten::any.all_out", torch.any, [mask])
    c["any_dim"] = ("aten::any.out", lambda a: torch.any(a, dim=1), [mask])
    c["any_dims"] = ("aten::any.dims_out", lambda a: torch.any(a, dim=(0, 2), keepdim=True), [mask])
    c["any_float"] = ("aten::any.out", lambda a: torch.any(a, dim=-1), [torch.relu(x)])
    c["all_dim"] = ("aten::any.out", lambda a: torch.all(a, dim=1), [mask])
    c["prod"] = ("aten::prod.out", torch.prod, [rand(2, 3, lo=0.5, hi=1.5)])
    c["prod_dim_int"] = ("aten::prod.int_out", lambda a: torch.prod(a, 1), [ints(3, 4, lo=-4, hi=4, dtype=torch.int32)])
    c["max_unary"] = ("aten::max.unary_out", torch.max, [x])
    c["min_unary"] = ("aten::min.unary_out", torch.min, [x])
    c["max_dim"] = ("aten::max.dim_max", lambda a: tuple(torch.max(a, dim=1)), [x])
    c["min_dim"] = ("aten::min.dim_min", lambda a: tuple(torch.min(a, dim=-1, keepdim=True)), [x])
    c["var_unbiased"] = ("aten::var.correction_out", lambda a: torch.var(a, dim=1, unbiased=False), [x])
    c["var_mean"] = ("aten::var_mean.correction_out", lambda a: torch.var_mean(a, dim=(0, 2)), [x])
    c["mean_dtype"] = ("aten::mean.dtype_out", lambda a: torch.mean(a, dtype=torch.float64), [x])
    c["topk"] = ("aten::topk.values", lambda a: tuple(torch.topk(a, 3, dim=-1)), [x])
    c["topk_smallest"] = ("aten::topk.values", lambda a: tuple(torch.topk(a, 2, dim=0, largest=False)), [x])
    idx = torch.tensor([[0, 2, 1, 0, 2], [1, 0, 2, 2, 1]])
    c["scatter_src"] = ("aten::scatter.src_out", lambda a, i, s: torch.scatter(a, 0, i, s),
                        [rand(3, 5), torch.tensor([[0, 1, 2, 0, 1], [2, 0, 1, 1, 0]]), rand(2, 5)])
    c["scatter_value"] = ("aten::scatter.value_out", lambda a, i: torch.scatter(a, 1, i, 7.5), [rand(2, 5), idx[:, :2]])
    c["scatter_add"] = ("aten::scatter_add.out", lambda a, i, s: torch.scatter_add(a, 1, i, s), [rand(2, 3), idx, rand(2, 5)])
    cache = rand(1, 2, 8, 4)
    c["index_put_kv_cache"] = ("aten::index_put.out", update_cache, [cache, torch.tensor([3, 4]), rand(1, 2, 2, 4)])
    c["index_put_accumulate"] = ("aten::index_put.out",
                                 lambda a, i, v: torch.index_put(a, (i,), v, accumulate=True),
                                 [rand(5, 3), torch.tensor([0, 4, 0, -1]), rand(4, 3)])
    c["select_scatter"] = ("aten::select_scatter.out", lambda a, s: torch.select_scatter(a, s, 1, -1), [x, rand(3, 5)])
    c["slice_scatter"] = ("aten::slice_scatter.out", lambda a, s: torch.slice_scatter(a, s, 2, 1, 5, 2), [x, rand(3, 4, 2)])
    c["masked_scatter"] = ("aten::masked_scatter.out", lambda a, m, s: a.masked_scatter(m, s), [x, mask, rand(60)])
    img = rand(2, 3, 5, 6)
    c["upsample_nearest_scale"] = ("aten::upsample_nearest2d.vec_out",
                                   lambda a: F.interpolate(a, scale_factor=2, mode="nearest"), [img])
    c["upsample_nearest_size"] = ("aten::upsample_nearest2d.vec_out",
                                  lambda a: F.interpolate(a, size=(7, 4), mode="nearest"), [img])
    c["upsample_bilinear"] = ("aten::upsample_bilinear2d.vec_out",
                              lambda a: F.interpolate(a, scale_factor=2, mode="bilinear"), [img])
    c["upsample_bilinear_corners"] = ("aten::upsample_bilinear2d.vec_out",
                                      lambda a: F.interpolate(a, size=(9, 4), mode="bilinear", align_corners=True), [img])
    c["pixel_shuffle"] = ("aten::pixel_shuffle.out", lambda a: F.pixel_shuffle(a, 2), [rand(2, 8, 3, 4)])
    c["pixel_unshuffle"] = ("aten::pixel_unshuffle.out", lambda a: F.pixel_unshuffle(a, 2), [rand(2, 3, 4, 6)])
    for mode in ("reflect", "replicate"):
        kind = "reflection" if mode == "reflect" else "replication"
        c[f"{kind}_pad1d"] = (f"aten::{kind}_pad1d.out", lambda a, m=mode: F.pad(a, (2, 1), mode=m), [rand(2, 3, 5)])
        c[f"{kind}_pad2d"] = (f"aten::{kind}_pad2d.out", lambda a, m=mode: F.pad(a, (1, 2, 2, 0), mode=m), [img])
        c[f"{kind}_pad3d"] = (f"aten::{kind}_pad3d.out", lambda a, m=mode: F.pad(a, (1, 1, 0, 2, 1, 0), mode=m),
                              [rand(1, 2, 3, 4, 5)])
    c["unbind"] = ("aten::unbind_copy.int_out", lambda a: torch.unbind(a, 1), [x])
    c["narrow_copy"] = ("aten::narrow_copy.out", lambda a: torch.narrow_copy(a, 2, 1, 3), [x])
    c["diagonal"] = ("aten::diagonal_copy.out", lambda a: torch.diagonal(a, offset=1, dim1=0, dim2=2).clone(), [x])
    c["unfold"] = ("aten::unfold_copy.out", lambda a: a.unfold(2, 2, 2).clone(), [x])
    c["fill_tensor"] = ("aten::fill.Tensor_out", lambda a, v: torch.fill(a, v), [x, torch.tensor(2.5)])
    c["group_norm"] = ("aten::native_group_norm.out", torch.nn.GroupNorm(2, 6).eval(), [rand(2, 6, 3, 4)])
    c["batch_norm_batch_stats"] = ("aten::_native_batch_norm_legit.no_stats_out",
                                   lambda a: F.batch_norm(a, None, None, training=True), [rand(4, 3, 5)])
    c["clamp_tensor"] = ("aten::clamp.Tensor_out", lambda a, lo, hi: torch.clamp(a, lo, hi), [x, rand(5, lo=-1, hi=0), rand(4, 1)])
    c["clamp_tensor_min_only"] = ("aten::clamp.Tensor_out", lambda a, lo: torch.clamp(a, min=lo), [x, rand(5)])
    c["glu"] = ("aten::glu.out", lambda a: F.glu(a, dim=1), [rand(3, 6, 2)])
    c["cdist"] = ("aten::_cdist_forward.out", lambda a, b: torch.cdist(a, b, p=2.0), [rand(2, 4, 3), rand(2, 5, 3)])
    c["cdist_p1"] = ("aten::_cdist_forward.out", lambda a, b: torch.cdist(a, b, p=1.0), [rand(4, 3), rand(5, 3)])
    c["pdist"] = ("aten::_pdist_forward.out", lambda a: F.pdist(a, p=3.0), [rand(5, 4)])
    grid = rand(2, 4, 5, 2, lo=-1.2, hi=1.2)
    for interp in ("bilinear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            for corners in (False, True):
                c[f"grid_sample_{interp}_{pad}_{int(corners)}"] = (
                    "aten::grid_sampler_2d.out",
                    lambda a, gr, i=interp, p=pad, k=corners: F.grid_sample(a, gr, mode=i, padding_mode=p, align_corners=k),
                    [img, grid])
    c["upsample_bilinear_aa_down"] = ("aten::_upsample_bilinear2d_aa.out",
                                      lambda a: F.interpolate(a, size=(3, 2), mode="bilinear", antialias=True), [img])
    c["upsample_bilinear_aa_up"] = ("aten::_upsample_bilinear2d_aa.out",
                                    lambda a: F.interpolate(a, scale_factor=2, mode="bilinear", antialias=True), [img])
    xq = rand(4, 6)
    c["quantize_per_tensor"] = ("quantized_decomposed::quantize_per_tensor.out",
                                lambda a: q().quantize_per_tensor(a, 0.02, 3, -128, 127, torch.int8), [xq])
    c["dequantize_per_tensor"] = ("quantized_decomposed::dequantize_per_tensor.out",
                                  lambda a: q().dequantize_per_tensor(a, 0.02, 3, -128, 127, torch.int8),
                                  [ints(4, 6, lo=-128, hi=127, dtype=torch.int8)])
    c["choose_qparams"] = ("quantized_decomposed::choose_qparams.Tensor_out",
                           lambda a: q().choose_qparams.tensor(a, -128, 127, 1e-7, torch.int8), [xq])
    c["quantize_per_channel"] = ("quantized_decomposed::quantize_per_channel.out",
                                 lambda a, s, z: q().quantize_per_channel(a, s, z, 1, -128, 127, torch.int8),
                                 [xq, rand(6, lo=0.01, hi=0.05, dtype=torch.float64), ints(6, lo=-3, hi=3)])
    c["dequantize_per_channel"] = ("quantized_decomposed::dequantize_per_channel.out",
                                   lambda a, s, z: q().dequantize_per_channel(a, s, z, 0, -128, 127, torch.int8),
                                   [ints(4, 6, lo=-128, hi=127, dtype=torch.int8),
                                    rand(4, lo=0.01, hi=0.05, dtype=torch.float64), ints(4, lo=-3, hi=3)])
    c["choose_qparams_per_token"] = ("quantized_decomposed::choose_qparams_per_token_asymmetric.out",
                                     lambda a: q().choose_qparams_per_token_asymmetric(a, torch.int8), [rand(2, 3, 8)])
    c["quantize_per_token"] = ("quantized_decomposed::quantize_per_token.out",
                               lambda a, s, z: q().quantize_per_token(a, s, z, -128, 127, torch.int8),
                               [rand(3, 8), rand(3, 1, lo=0.01, hi=0.05), ints(3, 1, lo=-3, hi=3)])
    c["dequantize_per_token"] = ("quantized_decomposed::dequantize_per_token.out",
                                 lambda a, s, z: q().dequantize_per_token(a, s, z, -128, 127, torch.int8, torch.float32),
                                 [ints(3, 8, lo=-128, hi=127, dtype=torch.int8),
                                  rand(3, 1, lo=0.01, hi=0.05, dtype=torch.float64), ints(3, 1, lo=-3, hi=3)])
    emb_idx = torch.tensor([[0, 3], [5, 1]])
    c["embedding_byte"] = ("quantized_decomposed::embedding_byte.out",
                           lambda w, s, i: q().embedding_byte(w, s, None, -128, 127, i),
                           [ints(6, 8, lo=-128, hi=127, dtype=torch.int8), rand(6, 2, lo=0.01, hi=0.05), emb_idx])
    c["embedding_4bit"] = ("quantized_decomposed::embedding_4bit.out",
                           lambda w, s, z, i: q().embedding_4bit(w, s, z, -8, 7, i),
                           [ints(6, 4, lo=0, hi=255, dtype=torch.uint8), rand(6, lo=0.01, hi=0.05),
                            rand(6, lo=-2, hi=2), emb_idx])
    c["embedding_2bit"] = ("quantized_decomposed::embedding_2bit.out",
                           lambda w, s, i: q().embedding_2bit(w, s, None, -2, 1, i),
                           [ints(6, 2, lo=0, hi=255, dtype=torch.uint8), rand(6, 2, lo=0.01, hi=0.05), emb_idx])
    return c


def update_cache(cache, pos, v):  # a KV cache update: cache[:, :, pos] = v
    cache = cache.clone()
    cache[:, :, pos] = v
    return cache


class Single(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def flatten(outputs):
    if isinstance(outputs, torch.Tensor):
        return [outputs]
    result = []
    for o in outputs:
        result += flatten(o)
    return result


def cache_key():
    import executorch
    version = getattr(executorch, "__version__", "")
    text = HERE.read_bytes() + torch.__version__.encode() + str(version).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def functional_overload(op):
    """torch.ops.aten.pixel_shuffle.default for "aten::pixel_shuffle.out" (None when there is none)."""
    namespace, rest = op.split("::")
    name, _, overload = rest.partition(".")
    overload = "default" if overload in ("out", "all_out") else overload[:-4] if overload.endswith("_out") else overload
    try:
        return getattr(getattr(getattr(torch.ops, namespace), name), overload)
    except AttributeError:
        return None


def to_program(module, inputs, op):
    """The ExecuTorch program of module, keeping `op` from the edge decompositions when it can."""
    from executorch.exir import to_edge, EdgeCompileConfig

    exported = torch.export.export(module, tuple(inputs), strict=False)
    keep = functional_overload(op)
    if keep is not None and op.startswith("aten::"):
        try:
            config = EdgeCompileConfig(_check_ir_validity=False, preserve_ops=[keep])
            return to_edge(exported, compile_config=config).to_executorch()
        except Exception:  # noqa: BLE001  (an op ExecuTorch will not preserve: decomposed as usual)
            pass
    return to_edge(exported, compile_config=EdgeCompileConfig(_check_ir_validity=False)).to_executorch()


def program_operators(program):
    return sorted({f"{o.name}.{o.overload}" if o.overload else o.name
                   for plan in program.executorch_program.execution_plan for o in plan.operators})


def export_all(out_dir: Path) -> Path:
    target = out_dir / cache_key()
    if (target / "index.json").is_file():
        return target
    if out_dir.is_dir():  # programs of an older version of this file
        import shutil
        for old in out_dir.iterdir():
            if old.is_dir() and len(old.name) == 16:
                shutil.rmtree(old)
    target.mkdir(parents=True, exist_ok=True)
    index = {}
    for name, (op, fn, inputs) in cases().items():
        module = Single(fn)
        eager = [t.detach().clone() for t in flatten(module(*[i.clone() for i in inputs]))]
        entry = {"operator": op}
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                program = to_program(module, inputs, op)
            (target / f"{name}.pte").write_bytes(program.buffer)
            entry["operators"] = program_operators(program)
        except Exception as e:  # noqa: BLE001  (recorded; the test reports it)
            entry["export_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        arrays = {f"input_{i}": t.numpy() for i, t in enumerate(inputs)}
        arrays.update({f"output_{i}": t.numpy() for i, t in enumerate(eager)})
        np.savez(target / f"{name}.npz", **arrays)
        index[name] = entry
    (target / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True))
    return target


def run_executorch_cases(target: Path):
    """Runs every program of `target` in ExecuTorch's Python runtime, writing
    <case>.executorch.npz (output_<i>) or recording why it could not, in
    executorch.json. Runs in a child process: ExecuTorch aborts the process on
    some checks, so the case in progress is written down before it runs."""
    from executorch.runtime import Runtime
    import executorch.kernels.quantized  # noqa: F401

    index = json.loads((target / "index.json").read_text())
    results_path = target / "executorch.json"
    results = json.loads(results_path.read_text()) if results_path.is_file() else {}
    runtime = Runtime.get()
    for name in sorted(index):
        if name in results or "export_error" in index[name]:
            continue
        results[name] = "aborted the process (an ExecuTorch runtime check failed)"
        results_path.write_text(json.dumps(results, indent=1, sort_keys=True))
        with np.load(target / f"{name}.npz") as data:
            inputs = [torch.from_numpy(data[f"input_{i}"].copy()) for i in range(len(data.files))
                      if f"input_{i}" in data.files]
        try:
            method = runtime.load_program(str(target / f"{name}.pte")).load_method("forward")
            outputs = method.execute(inputs)
            np.savez(target / f"{name}.executorch.npz", **{f"output_{i}": o.numpy() for i, o in enumerate(outputs)})
            results[name] = "ran"
        except Exception as e:  # noqa: BLE001
            results[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        results_path.write_text(json.dumps(results, indent=1, sort_keys=True))


def executorch_results(target: Path):
    """{case: "ran" or why not}, running the child process until every case has an entry."""
    import subprocess
    index = json.loads((target / "index.json").read_text())
    results_path = target / "executorch.json"
    for _ in range(len(index) + 1):
        results = json.loads(results_path.read_text()) if results_path.is_file() else {}
        if all(name in results or "export_error" in index[name] for name in index):
            return results
        subprocess.run([sys.executable, str(HERE), "--executorch", str(target)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
    raise RuntimeError("ExecuTorch's runtime made no progress on the single-op programs")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--executorch":
        run_executorch_cases(Path(sys.argv[2]))
    else:
        print(export_all(Path(sys.argv[1] if len(sys.argv) > 1 else "single_op_programs")))
