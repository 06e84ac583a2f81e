"""`etrt generate` (tools/generate_command.cpp) on the runner's test programs (make_runner_models.py):
its --json output parsed -- greedy ids and text equal ExecuTorch's (the same references as
test_runner_parity.py) --, the streamed text and the rates it reports, seeded sampling, and usage
and runtime errors that name the problem."""
import json
import os
import re
import subprocess

import pytest

from test_runner_parity import (EOS, MAX_NEW_TOKENS, MODELS, PROMPTS, REFERENCE, RUNNER, TOKENIZER, TOOL, CONTEXT_LEN,
                                byte_pieces_as_bytes, run_python)

ETRT = os.environ["ETRT_CLI"]
MODEL = os.path.join(MODELS, "llama_dynamic.pte")


def generate(*args, model=MODEL, tokenizer=TOKENIZER):
    command = [ETRT, "generate", model, *(["--tokenizer", tokenizer] if tokenizer else []), *args]
    return subprocess.run(command, capture_output=True, timeout=300)


def generate_json(prompt, *args):
    proc = generate("--prompt", prompt, "--json", *args)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1, lines  # --json: the object alone on stdout
    return json.loads(lines[0])


@pytest.mark.parametrize("prompt", PROMPTS)
def test_json_greedy_ids_and_text_equal_executorchs(prompt):
    result = generate_json(prompt, "--temperature", "0", "--max-new-tokens", str(MAX_NEW_TOKENS))
    expected_ids = run_python(REFERENCE, MODEL, TOKENIZER, prompt, str(MAX_NEW_TOKENS), str(EOS), "1",
                              str(CONTEXT_LEN), tag="IDS:")
    assert result["tokens"] == expected_ids
    assert result["generated_tokens"] == len(expected_ids)
    pieces = run_python(RUNNER, MODEL, TOKENIZER, prompt, str(MAX_NEW_TOKENS), tag="PIECES:")
    assert result["text"] == byte_pieces_as_bytes(pieces)
    assert result["prompt"] == prompt and result["prompt_tokens"] > 0
    for key in ("time_to_first_token_ms", "prefill_tokens_per_second", "decode_tokens_per_second", "load_ms"):
        assert isinstance(result[key], (int, float)) and result[key] > 0, (key, result)


def test_streams_the_text_then_reports_the_rates():
    prompt = PROMPTS[0]
    expected = generate_json(prompt, "--temperature", "0", "--max-new-tokens", "12")
    proc = generate("--prompt", prompt, "--temperature", "0", "--max-new-tokens", "12", "--threads", "1")
    assert proc.returncode == 0, proc.stderr
    # The bytes streamed are the TextRunner's pieces (generate_tool prints them as latin-1 code points).
    tool = subprocess.run([TOOL, MODEL, TOKENIZER, prompt, "12"], capture_output=True, text=True, check=True)
    runner_result = json.loads(tool.stdout.strip().splitlines()[-1])
    assert runner_result["ids"] == expected["tokens"]
    assert proc.stdout == prompt.encode() + "".join(runner_result["pieces"]).encode("latin-1") + b"\n"
    stderr = proc.stderr.decode()
    assert re.search(r"loading .*llama_dynamic\.pte \([0-9.]+ MB\) \.\.\. loaded in [0-9.]+ s", stderr), stderr
    match = re.search(r"prompt (\d+) tokens, generated (\d+) \| prefill ([0-9.]+) tokens/s, decode ([0-9.]+) "
                      r"tokens/s \| time to first token ([0-9.]+) ms", stderr)
    assert match, stderr
    assert int(match.group(1)) == expected["prompt_tokens"] and int(match.group(2)) == 12
    assert float(match.group(3)) > 0 and float(match.group(4)) > 0 and float(match.group(5)) > 0


def test_seeded_sampling_repeats():
    args = ("--temperature", "1.0", "--top-p", "0.9", "--max-new-tokens", "20")
    first = generate_json(PROMPTS[1], *args, "--seed", "5")
    again = generate_json(PROMPTS[1], *args, "--seed", "5")
    other = generate_json(PROMPTS[1], *args, "--seed", "6")
    assert first["tokens"] == again["tokens"]
    assert first["tokens"] != other["tokens"]


@pytest.mark.parametrize("args,message", [
    (("--prompt", "x", "--top-p", "2"), "--top-p '2' is not a number in (0, 1]"),
    (("--prompt", "x", "--max-new-tokens", "0"), "--max-new-tokens '0' is not a positive integer"),
    (("--prompt", "x", "--temperature", "warm"), "--temperature 'warm' is not a number >= 0"),
    (("--prompt", "x", "--frobnicate", "1"), "unknown option '--frobnicate'"),
    (("--prompt",), "--prompt needs a value"),
    ((), "--prompt TEXT is required"),
])
def test_usage_errors_name_the_option(args, message):
    proc = generate(*args)
    assert proc.returncode == 2
    assert message in proc.stderr.decode(), proc.stderr
    assert proc.stdout == b""


def test_a_missing_tokenizer_option_is_a_usage_error():
    proc = generate("--prompt", "x", tokenizer=None)
    assert proc.returncode == 2 and "--tokenizer FILE is required" in proc.stderr.decode()


def test_runtime_errors_are_named(tmp_path):
    long_prompt = " ".join([PROMPTS[0]] * 10)
    proc = generate("--prompt", long_prompt)
    assert proc.returncode == 1 and "the context has room for 47" in proc.stderr.decode(), proc.stderr
    assert proc.stdout == b""  # nothing streamed for a refused prompt
    truncated = tmp_path / "truncated.model"
    truncated.write_bytes(open(TOKENIZER, "rb").read()[:300])
    proc = generate("--prompt", "x", tokenizer=str(truncated))
    assert proc.returncode == 1 and "truncated.model: SentencePiece model" in proc.stderr.decode(), proc.stderr
    proc = generate("--prompt", "x", model=str(tmp_path / "missing.pte"))
    assert proc.returncode == 1 and "missing.pte" in proc.stderr.decode(), proc.stderr
