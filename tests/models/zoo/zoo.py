"""ExecuTorch's own example models (executorch.examples.models), exported the way
ExecuTorch's scripts export them, run in ExecuTorch's runtime and in etrt.

    python3 tests/models/zoo/zoo.py [--models a,b] [--variants portable,xnnpack,xnnpack_q8] [--out DIR]

Each export and each run happens in a process of its own (a model that hangs or
crashes one runtime cannot take the table down). Results go to DIR/results.json
and, rendered, to tests/models/ZOO.md. Needs a built etrt (build/bin/etrt).
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
VARIANTS = ("portable", "xnnpack", "xnnpack_q8")
# Small enough to export and run here without downloads (untrained weights).
DEFAULT_MODELS = ("add", "mul", "linear", "add_mul", "softmax", "conv1d", "sdpa", "lstm", "w2l",
                  "mv2_untrained", "mv3", "resnet18", "ds_cnn", "resnet8", "mobilenet_v1_025",
                  "deep_autoencoder", "mobilebert", "emformer_join", "emformer_predict", "edsr")


def export(model_name: str, variant: str, out_dir: str) -> dict:
    """Runs in a child process: writes model.pte, input_*.npy, eager_*.npy."""
    import numpy as np
    import torch
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.examples.models import MODEL_NAME_TO_MODEL
    from executorch.examples.models.model_factory import EagerModelFactory
    from torch.utils._pytree import tree_flatten

    torch.manual_seed(0)
    model, inputs, _, dynamic_shapes = EagerModelFactory.create_model(*MODEL_NAME_TO_MODEL[model_name])
    model = model.eval()
    ep = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes, strict=False)
    partitioners, passes = [], None
    config = EdgeCompileConfig(_check_ir_validity=False)
    if variant.startswith("xnnpack"):
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.backends.xnnpack.utils.configs import get_transform_passes
        partitioners, passes = [XnnpackPartitioner()], get_transform_passes()
        config = EdgeCompileConfig(_check_ir_validity=variant != "xnnpack_q8", _skip_dim_order=True)
    if variant == "xnnpack_q8":
        from executorch.examples.xnnpack import MODEL_NAME_TO_OPTIONS
        from executorch.examples.xnnpack.quantization.utils import quantize
        if model_name not in MODEL_NAME_TO_OPTIONS:
            return {"status": "n/a", "detail": "ExecuTorch's aot_compiler does not quantize this model"}
        quantized = quantize(ep.module(), inputs, MODEL_NAME_TO_OPTIONS[model_name].quantization)
        ep = torch.export.export(quantized, inputs, strict=False)
    edge = to_edge_transform_and_lower(ep, partitioner=partitioners, transform_passes=passes, compile_config=config)
    program = edge.to_executorch(config=ExecutorchBackendConfig(extract_delegate_segments=False))
    with open(os.path.join(out_dir, "model.pte"), "wb") as f:
        f.write(program.buffer)
    flat = [x for x in tree_flatten(inputs)[0]]
    for i, x in enumerate(flat):
        np.save(os.path.join(out_dir, f"input_{i}.npy"), x.detach().numpy() if torch.is_tensor(x) else np.asarray(x))
    with torch.no_grad():
        eager = tree_flatten(ep.module()(*inputs))[0]
    for i, y in enumerate(eager):
        np.save(os.path.join(out_dir, f"eager_{i}.npy"), y.detach().numpy())
    ops = sorted({op.name + ("." + op.overload if op.overload else "")
                  for plan in program.executorch_program.execution_plan for op in plan.operators})
    return {"status": "exported", "operators": ops, "inputs": len(flat), "outputs": len(eager)}


def run_executorch(model_dir: str, iterations: int) -> dict:
    """Runs in a child process: ExecuTorch's runtime on model.pte."""
    import glob
    import numpy as np
    import torch
    from executorch.runtime import Runtime
    from executorch.kernels import quantized  # noqa: F401  (quantized kernels, as aot_compiler's test does)

    inputs = [torch.from_numpy(np.load(p)) for p in sorted(glob.glob(os.path.join(model_dir, "input_*.npy")))]
    method = Runtime.get().load_program(os.path.join(model_dir, "model.pte")).load_method("forward")
    outputs = method.execute(inputs)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        method.execute(inputs)
        times.append(time.perf_counter() - start)
    for i, y in enumerate(outputs):
        np.save(os.path.join(model_dir, f"executorch_{i}.npy"), y.numpy())
    return {"status": "ran", "median_ms": 1e3 * sorted(times)[len(times) // 2] if times else None}


def run_etrt(model_dir: str, iterations: int) -> dict:
    import glob
    cli = os.path.join(ROOT, "build", "bin", "etrt")
    inputs = sorted(glob.glob(os.path.join(model_dir, "input_*.npy")))
    out = os.path.join(model_dir, "etrt_out")
    args = [cli, "run", os.path.join(model_dir, "model.pte"), "--iterations", str(max(iterations, 1)),
            "--output-dir", out]
    for p in inputs:
        args += ["--input", p]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return {"status": "failed", "detail": (proc.stderr or proc.stdout).strip().splitlines()[-1][:300]}
    median = None
    for line in proc.stdout.splitlines():
        if "median" in line:
            median = line.strip()
    return {"status": "ran", "timing": median}


def compare(model_dir: str, prefix: str, reference: str) -> float:
    import glob
    import numpy as np
    worst = 0.0
    refs = sorted(glob.glob(os.path.join(model_dir, f"{reference}_*.npy")))
    for ref in refs:
        i = ref.rsplit("_", 1)[1]
        actual = os.path.join(model_dir, prefix, f"output_{i}") if prefix == "etrt_out" else None
        path = actual if actual else os.path.join(model_dir, f"{prefix}_{i}")
        a, b = np.load(path), np.load(ref)
        if a.shape != b.shape:
            return float("inf")
        worst = max(worst, float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.size else 0.0)
    return worst


def child(kind: str, *args) -> dict:
    """Runs one step in a fresh interpreter; returns its JSON answer or the failure."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, *map(str, args)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "detail": f"{kind} timed out"}
    lines = [l for l in proc.stdout.splitlines() if l.startswith("ZOO:")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"status": "failed", "detail": tail[:300]}
    return json.loads(lines[-1][4:])


def render(results: dict) -> str:
    rows = ["# ExecuTorch's example models in etrt", "",
            "Made by `python3 tests/models/zoo/zoo.py` (exported with executorch 1.5.1, untrained weights).",
            "max diff: largest |etrt - ExecuTorch runtime| over all outputs.", "",
            "| model | variant | export | ExecuTorch | etrt | max diff | note |", "|---|---|---|---|---|---|---|"]
    for key in sorted(results):
        r = results[key]
        model, variant = key.split("/")
        diff = r.get("max_diff")
        rows.append(f"| {model} | {variant} | {r['export']['status']} | {r.get('executorch', {}).get('status', '-')} | "
                    f"{r.get('etrt', {}).get('status', '-')} | {'-' if diff is None else f'{diff:.3g}'} | "
                    f"{r.get('note', '')} |")
    return "\n".join(rows) + "\n"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, args = sys.argv[2], sys.argv[3:]
        answer = {"export": lambda: export(args[0], args[1], args[2]),
                  "executorch": lambda: run_executorch(args[0], int(args[1]))}[kind]()
        print("ZOO:" + json.dumps(answer))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--out", default="/tmp/etrt_zoo")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--markdown", default=os.path.join(ROOT, "tests", "models", "ZOO.md"))
    args = parser.parse_args()
    results_path = os.path.join(args.out, "results.json")
    results = json.load(open(results_path)) if os.path.exists(results_path) else {}
    for model in args.models.split(","):
        for variant in args.variants.split(","):
            key = f"{model}/{variant}"
            model_dir = os.path.join(args.out, model, variant)
            os.makedirs(model_dir, exist_ok=True)
            entry = {"export": child("export", model, variant, model_dir)}
            if entry["export"]["status"] == "exported":
                entry["executorch"] = child("executorch", model_dir, args.iterations)
                entry["etrt"] = run_etrt(model_dir, args.iterations)
                if entry["etrt"]["status"] == "ran" and entry["executorch"]["status"] == "ran":
                    entry["max_diff"] = compare(model_dir, "etrt_out", "executorch")
                entry["note"] = entry["etrt"].get("detail", "") or entry["executorch"].get("detail", "")
            else:
                entry["note"] = entry["export"].get("detail", "")
            results[key] = entry
            print(key, json.dumps(entry)[:400], flush=True)
            with open(results_path, "w") as f:
                json.dump(results, f, indent=1)
            with open(args.markdown, "w") as f:
                f.write(render(results))


if __name__ == "__main__":
    main()
