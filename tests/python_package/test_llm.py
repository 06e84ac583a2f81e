"""etrt.llm's TextLLMRunner on a program of ExecuTorch's export_llama recipe (programs/llm,
export_llm.py): greedy text equal to ExecuTorch's TextLLMRunner on the same files (in its own
process), streaming, stats, stop(), seeded sampling, prefill, and named errors that leave the
runner usable."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import etrt
import etrt.llm
from etrt.llm import GenerationConfig, TextLLMRunner

PROGRAMS = Path(__file__).resolve().parent / "programs" / "llm"
MODEL = str(PROGRAMS / "llama.pte")
TOKENIZER = str(PROGRAMS / "tokenizer.model")
PROMPTS = ["Once upon a time there was a little robot", "The moon laughed", "count 1 2 3 and the ñ stars"]

EXECUTORCH_RUNNER = r"""
import json, sys
from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (llama::* kernels)
from executorch.extension.llm.runner import TextLLMRunner, GenerationConfig
runner = TextLLMRunner(sys.argv[1], sys.argv[2])
texts = []
for prompt in json.loads(sys.argv[3]):
    config = GenerationConfig()
    config.temperature = 0.0
    config.echo = False
    config.max_new_tokens = 16
    pieces = []
    runner.generate(prompt, config, pieces.append)
    runner.reset()
    texts.append(pieces)
print("PIECES:" + json.dumps(texts))
"""


def greedy(max_new_tokens, **kwargs):
    return GenerationConfig(temperature=0.0, max_new_tokens=max_new_tokens, echo=False, **kwargs)


def executorch_text(pieces):
    """ExecuTorch streams a byte-fallback token as its piece "<0xNN>": the bytes joined, decoded."""
    data = b"".join(bytes([int(p[3:5], 16)]) if re.fullmatch(r"<0x[0-9A-F]{2}>", p) else p.encode() for p in pieces)
    return data.decode("utf-8", errors="replace")


def test_greedy_text_equals_executorchs_runner():
    pytest.importorskip("executorch")
    proc = subprocess.run([sys.executable, "-c", EXECUTORCH_RUNNER, MODEL, TOKENIZER, json.dumps(PROMPTS)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith("PIECES:")][-1]
    expected = [executorch_text(pieces) for pieces in json.loads(line[len("PIECES:"):])]
    runner = TextLLMRunner(MODEL, TOKENIZER)
    for prompt, want in zip(PROMPTS, expected):
        got = etrt.llm.generate_text(runner, prompt, greedy(16))
        assert got == want, (prompt, got, want)
        assert len(runner.generated_tokens) == 16
        runner.reset()


def test_streaming_stats_and_echo():
    runner = TextLLMRunner(MODEL, TOKENIZER)
    assert runner.get_vocab_size() == 320
    assert runner.metadata["enable_dynamic_shape"] and runner.metadata["use_kv_cache"]
    pieces, stats = [], []
    runner.generate(PROMPTS[0], GenerationConfig(temperature=0.0, max_new_tokens=5), pieces.append, stats.append)
    assert pieces[0] == PROMPTS[0]  # echo
    assert all(isinstance(p, str) and p for p in pieces)
    assert len(stats) == 1 and isinstance(stats[0], etrt.llm.Stats)
    s = stats[0]
    assert s.num_prompt_tokens == len(runner.encode(PROMPTS[0])) and s.num_generated_tokens == 4
    assert s.model_load_start_ms <= s.model_load_end_ms <= s.inference_start_ms <= s.first_token_ms <= s.inference_end_ms
    assert json.loads(s.to_json_string())["num_generated_tokens"] == 4
    assert runner.position == s.num_prompt_tokens + 4
    s.reset()
    assert s.num_generated_tokens == 0 and s.model_load_end_ms > 0  # load times kept
    s.reset(all_stats=True)
    assert s.model_load_end_ms == 0


def test_stop_from_the_token_callback():
    full = TextLLMRunner(MODEL, TOKENIZER)
    full.generate(PROMPTS[0], greedy(20))
    runner = TextLLMRunner(MODEL, TOKENIZER)
    pieces = []

    def on_token(piece):
        pieces.append(piece)
        if len(pieces) == 3:
            runner.stop()

    runner.generate(PROMPTS[0], greedy(20), on_token)
    # Pieces are whole characters (a character's bytes may come in several tokens): the stop comes
    # after the token that completed the third piece.
    stopped = runner.generated_tokens
    assert 3 <= len(stopped) < 20 and len(pieces) == 3
    assert stopped == full.generated_tokens[:len(stopped)]


def test_a_callback_that_raises_reaches_the_caller_and_the_runner_stays_usable():
    runner = TextLLMRunner(MODEL, TOKENIZER)

    def on_token(piece):
        raise ValueError("from the callback")

    with pytest.raises(ValueError, match="from the callback"):
        runner.generate(PROMPTS[0], greedy(5), on_token)
    assert runner.position == 0
    runner.generate(PROMPTS[0], greedy(5))
    assert len(runner.generated_tokens) == 5


def test_seeded_sampling_repeats():
    runner = TextLLMRunner(MODEL, TOKENIZER)
    runs = []
    for seed in (7, 7, 8):
        runner.generate(PROMPTS[1], GenerationConfig(temperature=1.0, top_p=0.9, seed=seed, max_new_tokens=20, echo=False))
        runs.append(runner.generated_tokens)
        runner.reset()
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_prefill_then_generate_continues_the_cache():
    prefilled, generated = TextLLMRunner(MODEL, TOKENIZER), TextLLMRunner(MODEL, TOKENIZER)
    prefilled.prefill(PROMPTS[0], GenerationConfig())
    generated.generate(PROMPTS[0], greedy(1))
    assert prefilled.position == generated.position == len(prefilled.encode(PROMPTS[0]))
    for runner in (prefilled, generated):
        runner.generate(" and the", greedy(-1))
    assert prefilled.generated_tokens == generated.generated_tokens


def test_named_errors_leave_the_runner_usable(tmp_path):
    with pytest.raises(etrt.Error, match="truncated.model: SentencePiece model"):
        truncated = tmp_path / "truncated.model"
        truncated.write_bytes(Path(TOKENIZER).read_bytes()[:300])
        TextLLMRunner(MODEL, str(truncated))
    with pytest.raises(etrt.Error, match="missing.pte"):
        TextLLMRunner(str(tmp_path / "missing.pte"), TOKENIZER)
    runner = TextLLMRunner(MODEL, TOKENIZER)
    with pytest.raises(etrt.Error, match="the context has room for"):
        runner.generate(PROMPTS[0] * 20, greedy(5))
    with pytest.raises(etrt.Error, match="the prompt is empty"):
        runner.generate("", greedy(5))
    assert isinstance(etrt.Error("x"), RuntimeError)  # as ExecuTorch's runner raises RuntimeError
    runner.generate(PROMPTS[0], greedy(5))
    assert len(runner.generated_tokens) == 5


def test_type_stub_matches_the_compiled_module():
    import ast
    import importlib
    import inspect

    from test_python_api import public_members, stub_names

    stub = Path(etrt.__file__).resolve().parent / "_llm.pyi"
    names = stub_names(ast.parse(stub.read_text()))
    module = importlib.import_module("etrt._llm")
    assert set(names) == public_members(module), set(names) ^ public_members(module)
    for name, members in names.items():
        if inspect.isclass(getattr(module, name)):
            assert members == public_members(getattr(module, name)) - public_members(object), name


def test_calls_from_two_threads_run_one_at_a_time():
    import threading
    import time

    alone = TextLLMRunner(MODEL, TOKENIZER)
    alone.generate(PROMPTS[0], greedy(10))
    first = alone.generated_tokens
    alone.reset()
    alone.generate(PROMPTS[2], greedy(10))
    expected = alone.generated_tokens
    assert expected != first  # the two generations are told apart by their tokens

    runner = TextLLMRunner(MODEL, TOKENIZER)
    started = threading.Event()

    def slow(piece):
        started.set()
        time.sleep(0.01)

    def second():
        started.wait()
        runner.reset()  # waits for the first generation to end
        runner.generate(PROMPTS[2], greedy(10))

    other = threading.Thread(target=second)
    other.start()
    runner.generate(PROMPTS[0], greedy(10), slow)
    other.join()
    assert runner.generated_tokens == expected


def test_a_call_from_the_runners_own_callback_is_refused_by_name():
    runner = TextLLMRunner(MODEL, TOKENIZER)
    seen = {}

    def reenter(piece):
        seen["position"] = runner.position  # reading is allowed
        runner.reset()

    with pytest.raises(etrt.Error, match=r"TextLLMRunner.reset\(\) was called from this runner's own callback"):
        runner.generate(PROMPTS[0], greedy(5), reenter)
    assert seen["position"] == 0  # the position moves only once the generation ends
    runner.generate(PROMPTS[0], greedy(5))
    assert len(runner.generated_tokens) == 5
