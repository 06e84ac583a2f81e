"""ExecuTorch's Llama example from a tiny config (make_tiny_llama.py, committed .pte files):
16 greedy decode steps in etrt give the same tokens as ExecuTorch's runtime, run live in
a subprocess, for the portable, custom-SDPA and XNNPACK exports."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import decode  # noqa: E402

PROGRAMS = decode.PROGRAMS


@pytest.fixture(scope="module")
def executorch_results():
    """ExecuTorch's runtime decoding every program, in one subprocess (one import of torch)."""
    proc = subprocess.run([sys.executable, str(HERE / "decode.py"), "executorch",
                           *[str(HERE / f"{program}.pte") for program in PROGRAMS]],
                          capture_output=True, text=True, timeout=300)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("DECODE:")]
    assert proc.returncode == 0 and len(lines) == len(PROGRAMS), \
        f"ExecuTorch's runtime: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    return {program: json.loads(line[len("DECODE:"):]) for program, line in zip(PROGRAMS, lines)}


@pytest.mark.parametrize("program", PROGRAMS)
def test_greedy_tokens_match_executorch(executorch_results, program):
    ours, _, our_logits = decode.greedy(decode.etrt_method(str(HERE / f"{program}.pte")))
    theirs, their_logits = executorch_results[program]["tokens"], executorch_results[program]["logits"]
    assert len(ours) == decode.STEPS == len(theirs)
    # Random weights: a degenerate model repeating one token would prove little.
    assert len(set(theirs)) > 4, f"ExecuTorch's tokens are degenerate: {theirs}"
    assert ours == theirs, f"{program}: etrt {ours}\nExecuTorch {theirs}"
    diff = np.abs(np.array(our_logits) - np.array(their_logits)).max()
    assert diff < 1e-4, f"{program}: logits differ from ExecuTorch's by up to {diff:.3g}"
