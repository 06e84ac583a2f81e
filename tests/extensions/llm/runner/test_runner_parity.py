"""etrt's TextRunner (generate_tool) against ExecuTorch 1.5.1 on the same files (make_runner_models.py):
greedy token ids equal a reference loop over ExecuTorch's runtime (prefill in one call, then one token
per call, argmax), and the streamed text equals what ExecuTorch's TextLLMRunner streams. Each runtime
runs in its own process."""
import json
import os
import re
import subprocess
import sys

import pytest

MODELS = os.environ["ETRT_LLM_RUNNER_MODELS"]
TOOL = os.environ["ETRT_LLM_GENERATE_TOOL"]
TOKENIZER = os.path.join(MODELS, "tokenizer.model")
PROMPTS = ["Once upon a time there was a little robot", "The moon laughed", "count 1 2 3 and the ñ stars"]
MAX_NEW_TOKENS = 20
BOS, EOS = 1, 2
CONTEXT_LEN = 48  # make_runner_models.MAX_SEQ_LEN

REFERENCE = r'''
import json, sys
import numpy as np, torch
import sentencepiece as spm
from executorch.runtime import Runtime
from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (llama::* kernels)
model, tokenizer, prompt, max_new, eos = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
dynamic = sys.argv[6] == "1"
ids = spm.SentencePieceProcessor(model_file=tokenizer).encode(prompt)
max_new = min(max_new, int(sys.argv[7]) - len(ids))  # the context's room, as the runner counts it
method = Runtime.get().load_program(model).load_method("forward")
def step(tokens, pos):
    out = method.execute([torch.tensor([tokens], dtype=torch.long), torch.tensor([pos], dtype=torch.long)])[0]
    return out.reshape(-1, out.shape[-1])[-1]
if dynamic:
    logits = step(ids, 0)
else:
    for i, t in enumerate(ids):
        logits = step([t], i)
pos, out = len(ids), []
token = int(torch.argmax(logits))
out.append(token)
while len(out) < max_new and token != eos:
    logits = step([token], pos)
    pos += 1
    token = int(torch.argmax(logits))
    out.append(token)
print("IDS:" + json.dumps(out))
'''

RUNNER = r'''
import json, sys
from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (llama::* kernels)
from executorch.extension.llm.runner import TextLLMRunner, GenerationConfig
runner = TextLLMRunner(sys.argv[1], sys.argv[2])
config = GenerationConfig()
config.temperature = 0.0
config.echo = False
config.max_new_tokens = int(sys.argv[4])
pieces = []
runner.generate(sys.argv[3], config, lambda piece: pieces.append(piece))
print("PIECES:" + json.dumps(pieces))
'''


def byte_pieces_as_bytes(pieces):
    data = b"".join(bytes([int(p[3:5], 16)]) if re.fullmatch(r"<0x[0-9A-F]{2}>", p) else p.encode() for p in pieces)
    return data.decode("utf-8", errors="replace")


def run_etrt(model, prompt):
    proc = subprocess.run([TOOL, os.path.join(MODELS, model + ".pte"), TOKENIZER, prompt, str(MAX_NEW_TOKENS)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    text = "".join(result["pieces"]).encode("latin-1").decode("utf-8", errors="replace")
    return result["ids"], text


def run_python(script, *args, tag):
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith(tag))
    return json.loads(line[len(tag):])


@pytest.mark.parametrize("model,dynamic", [("llama_dynamic", True), ("llama_static", False)])
@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_ids_match_executorch(model, dynamic, prompt):
    ids, text = run_etrt(model, prompt)
    expected_ids = run_python(REFERENCE, os.path.join(MODELS, model + ".pte"), TOKENIZER, prompt,
                              str(MAX_NEW_TOKENS), str(EOS), "1" if dynamic else "0", str(CONTEXT_LEN), tag="IDS:")
    assert ids == expected_ids
    pieces = run_python(RUNNER, os.path.join(MODELS, model + ".pte"), TOKENIZER, prompt, str(MAX_NEW_TOKENS),
                        tag="PIECES:")
    # ExecuTorch's SentencePiece tokenizer streams a byte-fallback token as its piece's name
    # ("<0x8F>"); etrt's streams the byte itself (the text a whole-sequence decode gives). The
    # streamed text is compared with those names read as the bytes they name.
    assert text == byte_pieces_as_bytes(pieces)
