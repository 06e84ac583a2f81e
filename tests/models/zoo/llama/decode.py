"""Greedy decoding of the tiny Llama programs (make_tiny_llama.py): a 3-token prompt
as one prefill call, then one token per call, each at its position (the KV cache
lives in the program's mutable buffers).

    python3 decode.py executorch|etrt PROGRAM.pte...   prints a line DECODE:{"tokens", "step_ms", "logits"} each
    python3 decode.py report     runs both on the committed programs, each runtime in its own
                                 process (median of 3 processes), and writes RESULTS.md (read by zoo.py)
"""
import json
import os
import sys
import time

import numpy as np

PROMPT = [7, 99, 3]
STEPS = 16


def greedy(execute, steps=STEPS):
    """execute(tokens [1, n] int64, input_pos [1] int64) -> logits [1, vocab].
    Returns the tokens, the median decode step in ms, and every call's logits."""
    logits = execute(np.array([PROMPT], dtype=np.int64), np.array([0], dtype=np.int64))
    tokens, times, pos, all_logits = [], [], len(PROMPT), [logits.reshape(-1).tolist()]
    for _ in range(steps):
        token = int(np.argmax(logits.reshape(-1)))
        tokens.append(token)
        start = time.perf_counter()
        logits = execute(np.array([[token]], dtype=np.int64), np.array([pos], dtype=np.int64))
        times.append(time.perf_counter() - start)
        all_logits.append(logits.reshape(-1).tolist())
        pos += 1
    return tokens, 1e3 * sorted(times)[len(times) // 2], all_logits


def executorch_method(path):
    import torch
    from executorch.runtime import Runtime
    from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (llama::* kernels)
    method = Runtime.get().load_program(path).load_method("forward")
    return lambda tokens, pos: method.execute([torch.from_numpy(tokens), torch.from_numpy(pos)])[0].numpy()


def etrt_method(path):
    source = os.environ.get("ETRT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
    sys.path.insert(0, os.path.join(source, "tests", "support"))
    import etrt_ctypes
    method = etrt_ctypes.Library().load_program(path).load_method("forward")
    return lambda tokens, pos: method.execute([tokens, pos])[0]


PROGRAMS = ("llama_kv", "llama_kv_sdpa", "llama_kv_sdpa_xnnpack")


def run(runtime, paths):
    import subprocess
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), runtime, *paths], capture_output=True,
                          text=True, check=True)
    return [json.loads(line[len("DECODE:"):]) for line in proc.stdout.splitlines() if line.startswith("DECODE:")]


def report():
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.join(here, f"{p}.pte") for p in PROGRAMS]
    runs = {runtime: [run(runtime, paths) for _ in range(3)] for runtime in ("etrt", "executorch")}
    rows = ["## ExecuTorch's Llama example, tiny config (tests/models/zoo/llama)", "",
            "params.json (dim 64, 2 layers, 4 query / 2 KV heads, vocab 256, max_seq_len 32), random weights,",
            "exported by ExecuTorch's export_llama (make_tiny_llama.py). Prompt of 3 tokens as one prefill, then 16",
            "greedy decode steps; step = median decode call, median over 3 processes per runtime",
            "(`python3 tests/models/zoo/llama/decode.py report`). ctest `tiny_llama` checks the tokens live.", "",
            "| program | export flags | tokens equal | max logit diff | etrt step ms | ExecuTorch step ms |",
            "|---|---|---|---|---|---|"]
    flags = {"llama_kv": "-kv", "llama_kv_sdpa": "-kv --use_sdpa_with_kv_cache",
             "llama_kv_sdpa_xnnpack": "-kv --use_sdpa_with_kv_cache -X"}
    for i, program in enumerate(PROGRAMS):
        ours, theirs = runs["etrt"][0][i], runs["executorch"][0][i]
        diff = float(np.abs(np.array(ours["logits"]) - np.array(theirs["logits"])).max())
        step = {r: sorted(x[i]["step_ms"] for x in runs[r])[1] for r in runs}
        rows.append(f"| {program} | `{flags[program]}` | {'yes' if ours['tokens'] == theirs['tokens'] else 'NO'} "
                    f"| {diff:.3g} | {step['etrt']:.3f} | {step['executorch']:.3f} |")
    rows.append("")
    rows.append(f"Tokens (both runtimes): {runs['executorch'][0][0]['tokens']}")
    with open(os.path.join(here, "RESULTS.md"), "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "report":
        report()
        sys.exit(0)
    runtime = sys.argv[1]
    for path in sys.argv[2:]:
        execute = {"executorch": executorch_method, "etrt": etrt_method}[runtime](os.path.abspath(path))
        tokens, step_ms, logits = greedy(execute)
        print("DECODE:" + json.dumps({"tokens": tokens, "step_ms": step_ms, "logits": logits}), flush=True)
