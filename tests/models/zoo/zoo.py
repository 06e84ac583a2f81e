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
# Every model of MODEL_NAME_TO_MODEL (executorch 1.5.1) that builds here without downloads
# (untrained weights) and without torchvision/torchaudio/transformers/timm/torchtune.
DEFAULT_MODELS = ("add", "mul", "linear", "add_mul", "softmax", "conv1d", "sdpa", "lstm",
                  "deep_autoencoder", "ds_cnn", "mobilenet_v1_025", "resnet8")
# The rest, and why they are not exported here. ExecuTorch's Llama example ("llama",
# "llama2") is covered from a tiny config by tests/models/zoo/llama/.
NOT_BUILDABLE = {
    "dl3": "needs torchvision", "mv2": "needs torchvision", "mv2_untrained": "needs torchvision",
    "mv3": "needs torchvision", "vit": "needs torchvision", "ic3": "needs torchvision",
    "resnet18": "needs torchvision", "resnet50": "needs torchvision", "llava": "needs torchvision, transformers",
    "ic4": "needs timm", "deit_tiny": "needs timm", "edsr": "needs torchsr",
    "w2l": "needs torchaudio", "emformer_transcribe": "needs torchaudio", "emformer_predict": "needs torchaudio",
    "emformer_join": "needs torchaudio", "mobilebert": "needs transformers (and a download)",
    "whisper": "needs transformers (and a download)", "llama3_2_vision_encoder": "needs torchtune",
    "efficient_sam": "downloads its checkpoint (huggingface)",
    "qwen2_5_1_5b": "full-size LLM checkpoint download (tiny Llama covers the architecture)",
    "phi_4_mini": "full-size LLM checkpoint download (tiny Llama covers the architecture)",
    "smollm2": "full-size LLM checkpoint download (tiny Llama covers the architecture)",
    "qwen3": "full-size LLM checkpoint download (tiny Llama covers the architecture)",
    "smolvlm": "full-size LLM checkpoint download (tiny Llama covers the architecture)",
    "yolo26": "needs ultralytics and the OpenVINO backend (nncf)",
    "llama": "exported from a tiny config by tests/models/zoo/llama/ (see below)",
    "llama2": "exported from a tiny config by tests/models/zoo/llama/ (see below)",
}


def _numpy(t):
    import torch
    t = t.detach()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


# Why etrt fails where ExecuTorch runs (the gaps left open), shown with the failure.
KNOWN_GAPS: dict = {}


def export(model_name: str, variant: str, out_dir: str, etrecord: bool = False) -> dict:
    """Runs in a child process: writes model.pte, input_*.npy, eager_*.npy (and model.etrecord, for
    ExecuTorch's Inspector, when `etrecord`)."""
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
    edge = to_edge_transform_and_lower(ep, partitioner=partitioners, transform_passes=passes, compile_config=config,
                                       generate_etrecord=etrecord)
    program = edge.to_executorch(config=ExecutorchBackendConfig(extract_delegate_segments=False))
    with open(os.path.join(out_dir, "model.pte"), "wb") as f:
        f.write(program.buffer)
    flat = [x for x in tree_flatten(inputs)[0]]
    if etrecord:
        record = program.get_etrecord()
        record.update_representative_inputs([tuple(flat)])  # what the Inspector's numerical comparison reruns
        record.save(os.path.join(out_dir, "model.etrecord"))
    # NumPy has no bfloat16: such inputs are saved as float32 (exact) and named in bfloat16.json.
    bf16 = [i for i, x in enumerate(flat) if torch.is_tensor(x) and x.dtype == torch.bfloat16]
    with open(os.path.join(out_dir, "bfloat16.json"), "w") as f:
        json.dump(bf16, f)
    for i, x in enumerate(flat):
        np.save(os.path.join(out_dir, f"input_{i}.npy"), _numpy(x) if torch.is_tensor(x) else np.asarray(x))
    with torch.no_grad():
        eager = tree_flatten(ep.module()(*inputs))[0]
    for i, y in enumerate(eager):
        np.save(os.path.join(out_dir, f"eager_{i}.npy"), _numpy(y))
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
    for i in json.load(open(os.path.join(model_dir, "bfloat16.json"))):
        inputs[i] = inputs[i].to(torch.bfloat16)
    method = Runtime.get().load_program(os.path.join(model_dir, "model.pte")).load_method("forward")
    outputs = method.execute(inputs)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        method.execute(inputs)
        times.append(time.perf_counter() - start)
    for i, y in enumerate(outputs):
        np.save(os.path.join(model_dir, f"executorch_{i}.npy"), _numpy(y))
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
    import re
    median = re.search(r"median ([0-9.]+) ms", proc.stdout)
    return {"status": "ran", "median_ms": float(median.group(1)) if median else None}


def export_and_run_many(out_dir: str, keys: list) -> dict:
    """One interpreter for several model/variant keys (the ctest subset): export each into
    out_dir/model/variant and run it once in ExecuTorch's runtime."""
    answers = {}
    for key in keys:
        model_dir = os.path.join(out_dir, *key.split("/"))
        os.makedirs(model_dir, exist_ok=True)
        answers[key] = {"export": export(*key.split("/"), model_dir)}
        if answers[key]["export"]["status"] == "exported":
            answers[key]["executorch"] = run_executorch(model_dir, 0)
    return answers


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


def child(kind: str, *args, script: str = __file__) -> dict:
    """Runs one step of `script` (this file by default) in a fresh interpreter; returns its JSON answer or
    the failure."""
    cmd = [sys.executable, os.path.abspath(script), "--child", kind, *map(str, args)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "detail": f"{kind} timed out"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("ZOO:")]
    if proc.returncode != 0 or not lines:
        stderr = proc.stderr.strip().splitlines()
        tail = (stderr or ["(no output)"])[-1]
        # A tool the failing step ran (flatc, in ExecuTorch's deserializer) says why on a line of its own.
        why = [line.strip() for line in stderr if line.strip().startswith(("error:", "Unable to"))]
        return {"status": "failed", "detail": (" ".join(why[-1:] + [tail]))[:300]}
    return json.loads(lines[-1][4:])


def _ms(entry: dict):
    return entry.get("median_ms") if entry else None


def render(results: dict) -> str:
    rows = ["# ExecuTorch's example models in etrt", "",
            "Made by `python3 tests/models/zoo/zoo.py` (executorch 1.5.1's `MODEL_NAME_TO_MODEL`, untrained",
            "weights, exported as ExecuTorch's scripts do: portable = `to_edge` without partitioner;",
            "xnnpack / xnnpack_q8 = `examples/xnnpack/aot_compiler.py` without / with `--quantize`, q8 only for",
            "the models its `MODEL_NAME_TO_OPTIONS` quantizes). Each runtime runs in a process of its own:",
            "latency is the median of 10 runs after one warm-up (etrt: `etrt run`; ExecuTorch:",
            "`executorch.runtime`), 2 shared cores, so noisy. etrt's time is the C++ call (`etrt run`, 3 decimals);",
            "ExecuTorch's includes its Python binding's per-call cost (about 10 us), so the toy models' rows",
            "compare overheads, not kernels. max diff: largest |etrt - ExecuTorch| over all outputs.",
            "", "| model | variant | etrt | max diff | etrt ms | ExecuTorch ms | note |",
            "|---|---|---|---|---|---|---|"]
    for key in sorted(results):
        r = results[key]
        model, variant = key.split("/")
        diff = r.get("max_diff")
        status = r["export"]["status"]
        if status == "exported":
            et, ours = r.get("executorch", {}).get("status"), r.get("etrt", {}).get("status")
            status = "runs" if ours == "ran" else "FAILS"
            if et != "ran":
                status += " (ExecuTorch fails)"
        fmt = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
        note = r.get("note", "")
        if status.startswith("FAILS") and model in KNOWN_GAPS:
            note = KNOWN_GAPS[model] + ". First error: " + note
        rows.append(f"| {model} | {variant} | {status} | {'-' if diff is None else f'{diff:.3g}'} | "
                    f"{fmt(_ms(r.get('etrt')))} | {fmt(_ms(r.get('executorch')))} | {note.replace('|', '/')} |")
    counted = [r for r in results.values() if r["export"]["status"] == "exported"]
    both = [r for r in counted if r.get("executorch", {}).get("status") == "ran"]
    ours = [r for r in both if r.get("etrt", {}).get("status") == "ran"]
    worst = max((r.get("max_diff", 0.0) for r in ours), default=0.0)
    header = rows.index("| model | variant | etrt | max diff | etrt ms | ExecuTorch ms | note |")
    rows[header:header] = [f"Summary: {len(counted)} programs exported, ExecuTorch's runtime runs {len(both)}, etrt runs "
                 f"{len(ours)} of those with max diff {worst:.3g}; the failures are listed with their reason.", ""]
    rows += ["", "## Not exported here", "", "| model | reason |", "|---|---|"]
    rows += [f"| {m} | {why} |" for m, why in sorted(NOT_BUILDABLE.items())]
    llama = os.path.join(HERE, "llama", "RESULTS.md")
    if os.path.exists(llama):
        rows += ["", open(llama).read().rstrip()]
    return "\n".join(rows) + "\n"


def quantized_by_aot_compiler() -> set:
    """The models examples/xnnpack/aot_compiler.py quantizes (its MODEL_NAME_TO_OPTIONS); a light import."""
    from executorch.examples.xnnpack import MODEL_NAME_TO_OPTIONS
    return set(MODEL_NAME_TO_OPTIONS)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, args = sys.argv[2], sys.argv[3:]
        answer = {"export": lambda: export(args[0], args[1], args[2]),
                  "export_traced": lambda: export(args[0], args[1], args[2], etrecord=True),
                  "executorch": lambda: run_executorch(args[0], int(args[1])),
                  "batch": lambda: export_and_run_many(args[0], args[1:])}[kind]()
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
            if variant == "xnnpack_q8" and model not in quantized_by_aot_compiler():
                entry = {"export": {"status": "n/a"}, "note": "aot_compiler does not quantize this model"}
            else:
                entry = {"export": child("export", model, variant, model_dir)}
            if entry["export"]["status"] == "n/a":
                pass
            elif entry["export"]["status"] == "exported":
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
