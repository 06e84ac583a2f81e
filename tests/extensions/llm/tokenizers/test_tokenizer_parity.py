"""etrt's tokenizers against the reference libraries, token for token, on tokenizers trained here
(reference_tokenizers.py) and ~1,500 strings of real and tricky text (corpus.py):

  tokenizer.json  Hugging Face `tokenizers`       (Llama 3, Qwen, GPT-2 and GPT-2 + NFKC set-ups)
  tiktoken        `tiktoken` through pytorch_tokenizers.TiktokenTokenizer (Llama 3's pattern and specials)
  SentencePiece   `sentencepiece`                  (Llama 2's BPE with byte fallback; unigram, nmt_nfkc)
  llama2.c        pytorch_tokenizers' C++ Llama2cTokenizer (ExecuTorch's runner's), both file layouts

For each string: the ids; each id's piece as decode(prev, id) streams it; the decoded text. Then
random id sequences (byte tokens that cut characters among them) decoded both ways. ExecuTorch's C++
tokenizers (pytorch_tokenizers_cpp) are compared too and their differences counted and printed
(ETRT_TOKENIZER_REPORT=path also writes them as JSON).

Needs ETRT_TOKENIZE_TOOL (ctest sets it) or a build in build/."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import corpus  # noqa: E402
import reference_tokenizers as ref  # noqa: E402

pytest.importorskip("tokenizers", reason="the parity test needs Hugging Face tokenizers (scripts/deps.sh)")
import sentencepiece as spm  # noqa: E402
import tiktoken  # noqa: E402
from pytorch_tokenizers.constants import CL100K_PAT_STR  # noqa: E402
from pytorch_tokenizers import pytorch_tokenizers_cpp as et_cpp  # noqa: E402
from pytorch_tokenizers.tiktoken import TiktokenTokenizer  # noqa: E402
from tiktoken.load import load_tiktoken_bpe  # noqa: E402
from tokenizers import Tokenizer as HfTokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parents[4]
TOOL = os.environ.get("ETRT_TOKENIZE_TOOL") or str(ROOT / "build" / "bin" / "tokenize_tool")
INVALID_ARGUMENT = 1  # ET_ERR_INVALID_ARGUMENT
REPORT: dict = {}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    out = tmp_path_factory.mktemp("tokenizers")
    corpus_file = out / "corpus.txt"
    corpus_file.write_text(corpus.training_text(), encoding="utf-8")
    made = {kind: ref.train_hf(kind, corpus_file, out) for kind in ("llama3", "qwen", "gpt2", "gpt2_prefix_nfkc")}
    made["tiktoken"], _ = ref.tiktoken_from_hf(made["llama3"], out)
    made["sp_bpe"] = ref.train_sentencepiece("bpe", corpus_file, out)
    made["sp_unigram"] = ref.train_sentencepiece("unigram", corpus_file, out)
    made["llama2c_executorch"], made["llama2c_original"] = ref.llama2c_files(made["sp_bpe"], out)
    return made


@pytest.fixture(scope="module")
def strings():
    return corpus.test_strings()


def run_tool(path: Path, cases: list[dict]):
    cases_file = path.parent / (path.name + ".cases.jsonl")
    cases_file.write_text("".join(json.dumps(c) + "\n" for c in cases))
    result = subprocess.run([TOOL, str(path), str(cases_file)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == len(cases) + 1
    return lines[0], lines[1:]


def encode_cases(texts, bos=0, eos=0):
    return [{"encode": (t.encode("utf-8") if isinstance(t, str) else t).hex(), "bos": bos, "eos": eos} for t in texts]


def random_id_sequences(vocab_size: int, byte_ids: list[int], count: int = 300):
    rng = random.Random(7)
    sequences = []
    for i in range(count):
        pool = byte_ids if i % 2 else range(vocab_size)
        sequences.append([rng.choice(pool) for _ in range(rng.randint(1, 12))])
    return sequences


def record(name, **numbers):
    REPORT.setdefault(name, {}).update(numbers)
    print(f"\n[parity] {name}: " + ", ".join(f"{k}={v}" for k, v in numbers.items()))


def first_mismatch(label, texts, ours, theirs):
    for text, a, b in zip(texts, ours, theirs):
        if a != b:
            return f"{label}: first difference on {text!r}:\n  etrt      {a}\n  reference {b}"
    return None


@pytest.fixture(scope="module", autouse=True)
def write_report():
    yield
    if os.environ.get("ETRT_TOKENIZER_REPORT"):
        Path(os.environ["ETRT_TOKENIZER_REPORT"]).write_text(json.dumps(REPORT, indent=2))


BOS_EOS = {
    "llama3": ("<|begin_of_text|>", "<|end_of_text|>"),
    "qwen": ("<|endoftext|>", "<|endoftext|>"),
    "gpt2": ("<|endoftext|>", "<|endoftext|>"),
    "gpt2_prefix_nfkc": ("<|endoftext|>", "<|endoftext|>"),
}


@pytest.mark.parametrize("kind", ["llama3", "qwen", "gpt2", "gpt2_prefix_nfkc"])
def test_tokenizer_json_matches_hugging_face(files, strings, kind):
    path = files[kind]
    hf = HfTokenizer.from_file(str(path))
    meta, replies = run_tool(path, encode_cases(strings))
    assert meta["format"] == "tokenizer.json"
    assert meta["vocab_size"] == hf.get_vocab_size(with_added_tokens=True)
    expected = [hf.encode(s, add_special_tokens=False).ids for s in strings]
    ours = [r["ids"] for r in replies]
    assert ours == expected, first_mismatch(f"{kind} ids", strings, ours, expected)
    # The text decoded back, and each piece as decode(prev, id) streams it (a piece that is a whole
    # character sequence on its own decodes as Hugging Face decodes that one id).
    texts = [bytes.fromhex(r["text"]).decode("utf-8") for r in replies]
    assert texts == [hf.decode(ids, skip_special_tokens=False) for ids in expected]
    pieces_checked = 0
    for reply, ids in zip(replies, expected):
        pieces = [bytes.fromhex(p) for p in reply["pieces"]]
        assert b"".join(pieces).decode("utf-8", "replace") == hf.decode(ids, skip_special_tokens=False)
        for piece, token in zip(pieces, ids):
            try:
                alone = piece.decode("utf-8")
            except UnicodeDecodeError:
                continue
            assert alone == hf.decode([token], skip_special_tokens=False), (token, piece)
            pieces_checked += 1
    # Random id sequences: byte tokens that cut characters, decoded lossily as Hugging Face does.
    byte_ids = [hf.token_to_id(c) for c in ref._byte_decoder()]
    sequences = random_id_sequences(meta["vocab_size"], byte_ids)
    _, decoded = run_tool(path, [{"decode": s} for s in sequences])
    ours_text = [bytes.fromhex(r["text"]).decode("utf-8") for r in decoded]
    theirs_text = [hf.decode(s, skip_special_tokens=False) for s in sequences]
    assert ours_text == theirs_text, first_mismatch(f"{kind} decode", sequences, ours_text, theirs_text)
    # BOS and EOS without a tokenizer_config.json: ExecuTorch's rule (the one added token naming
    # bos/begin, eos/end, "text" deciding between several). Its C++ HFTokenizer means that rule but
    # keeps string_views of temporaries, so its EOS is not compared; BOS is.
    bos_text, eos_text = BOS_EOS[kind]
    assert (meta["bos_id"], meta["eos_id"]) == (hf.token_to_id(bos_text), hf.token_to_id(eos_text))
    _, framed = run_tool(path, encode_cases(strings[:50], bos=1, eos=1))
    assert [r["ids"] for r in framed] == [[meta["bos_id"]] + e + [meta["eos_id"]] for e in expected[:50]]
    # Text that is not UTF-8 is refused by name (the reference takes only Unicode strings).
    _, invalid = run_tool(path, encode_cases(corpus.invalid_utf8_strings()))
    assert all(r.get("error") == INVALID_ARGUMENT and "not valid UTF-8" in r["message"] for r in invalid)
    et = et_cpp.HFTokenizer()
    try:
        et.load(str(path))
        et_differs = sum(1 for s, e in zip(strings, expected) if et.encode(s, 0, 0) != e)
        et_bos_eos = (et.bos_tok(), et.eos_tok())
    except RuntimeError as error:
        et_differs, et_bos_eos = f"cannot load: {error}", None
    record(kind, strings=len(strings), identical_ids=len(strings), pieces_checked=pieces_checked,
           decode_sequences=len(sequences), executorch_cpp_differs=et_differs,
           bos_eos=(meta["bos_id"], meta["eos_id"]), executorch_cpp_bos_eos=et_bos_eos)


def test_tiktoken_matches_tiktoken(files, strings):
    path = files["tiktoken"]
    # tiktoken with Llama 3's pattern and special tokens as ExecuTorch's runner and Meta's Llama 3
    # number them. pytorch_tokenizers' Python TiktokenTokenizer puts "<|image|>" at index 11 and so
    # names every special token from id N+11 on differently; its ids are compared on the strings.
    ranks = load_tiktoken_bpe(str(path))
    specials = {token: len(ranks) + i for i, token in enumerate(ref.llama3_special_tokens())}
    model = tiktoken.Encoding(name="llama3", pat_str=CL100K_PAT_STR, mergeable_ranks=ranks, special_tokens=specials)
    bos, eos = specials["<|begin_of_text|>"], specials["<|end_of_text|>"]
    meta, replies = run_tool(path, encode_cases(strings))
    assert meta["format"] == "tiktoken"
    assert (meta["vocab_size"], meta["bos_id"], meta["eos_id"]) == (model.n_vocab, bos, eos)
    expected = [model.encode(s, allowed_special="all") for s in strings]
    ours = [r["ids"] for r in replies]
    assert ours == expected, first_mismatch("tiktoken ids", strings, ours, expected)
    python_reference = TiktokenTokenizer(str(path))
    assert ours == [python_reference.encode(s, bos=False, eos=False, allowed_special="all") for s in strings]
    for reply, ids in zip(replies, expected):
        assert [bytes.fromhex(p) for p in reply["pieces"]] == [model.decode_single_token_bytes(i) for i in ids]
        assert bytes.fromhex(reply["text"]).decode("utf-8") == model.decode(ids)
    byte_ids = [model.encode_single_token(bytes([b])) for b in range(256)]
    sequences = random_id_sequences(meta["vocab_size"], byte_ids)
    _, decoded = run_tool(path, [{"decode": s} for s in sequences])
    ours_text = [bytes.fromhex(r["text"]).decode("utf-8") for r in decoded]
    theirs_text = [model.decode(s) for s in sequences]
    assert ours_text == theirs_text, first_mismatch("tiktoken decode", sequences, ours_text, theirs_text)
    _, framed = run_tool(path, encode_cases(strings[:50], bos=1, eos=1))
    assert [r["ids"] for r in framed] == [[bos] + e + [eos] for e in expected[:50]]
    _, invalid = run_tool(path, encode_cases(corpus.invalid_utf8_strings()))
    assert all(r.get("error") == INVALID_ARGUMENT for r in invalid)
    # ExecuTorch's C++ Tiktoken drops the lookahead \s+(?!\S) from Llama 3's pattern (RE2 has none).
    et = et_cpp.Tiktoken()
    et.load(str(path))
    et_differs = sum(1 for s, e in zip(strings, expected) if et.encode(s, 0, 0) != e)
    record("tiktoken", strings=len(strings), identical_ids=len(strings), decode_sequences=len(sequences),
           executorch_cpp_differs=et_differs)


@pytest.mark.parametrize("kind", ["sp_bpe", "sp_unigram"])
def test_sentencepiece_matches_sentencepiece(files, strings, kind):
    path = files[kind]
    sp = spm.SentencePieceProcessor(model_file=str(path))
    meta, replies = run_tool(path, encode_cases(strings))
    assert meta["format"] == "SentencePiece model"
    assert (meta["vocab_size"], meta["bos_id"], meta["eos_id"]) == (sp.get_piece_size(), sp.bos_id(), sp.eos_id())
    expected = [sp.encode(s) for s in strings]
    ours = [r["ids"] for r in replies]
    assert ours == expected, first_mismatch(f"{kind} ids", strings, ours, expected)
    for reply, ids in zip(replies, expected):
        assert bytes.fromhex(reply["text"]).decode("utf-8") == sp.decode(ids)
        for piece, token in zip(reply["pieces"], ids):
            if not (sp.is_byte(token) or sp.is_control(token) or sp.is_unknown(token)):
                assert bytes.fromhex(piece).decode("utf-8") == sp.id_to_piece(token).replace("\u2581", " ")
    # Bytes that are not UTF-8: sentencepiece reads each bad byte as U+FFFD.
    bad = corpus.invalid_utf8_strings()
    _, invalid = run_tool(path, encode_cases(bad))
    assert [r["ids"] for r in invalid] == [sp.encode(b) for b in bad]
    byte_ids = [i for i in range(sp.get_piece_size()) if sp.is_byte(i)] or list(range(sp.get_piece_size()))
    sequences = random_id_sequences(meta["vocab_size"], byte_ids)
    _, decoded = run_tool(path, [{"decode": s} for s in sequences])
    ours_text = [bytes.fromhex(r["text"]).decode("utf-8") for r in decoded]
    theirs_text = [sp.decode(s) for s in sequences]
    assert ours_text == theirs_text, first_mismatch(f"{kind} decode", sequences, ours_text, theirs_text)
    _, framed = run_tool(path, encode_cases(strings[:50], bos=1, eos=1))
    assert [r["ids"] for r in framed] == [sp.encode(s, add_bos=True, add_eos=True) for s in strings[:50]]
    et = et_cpp.SPTokenizer()
    et.load(str(path))
    et_differs = sum(1 for s, e in zip(strings, expected) if et.encode(s, 0, 0) != e)
    record(kind, strings=len(strings) + len(bad), identical_ids=len(strings) + len(bad),
           decode_sequences=len(sequences), executorch_cpp_differs=et_differs)


@pytest.mark.parametrize("layout", ["llama2c_executorch", "llama2c_original"])
def test_llama2c_matches_executorch(files, strings, layout):
    path = files[layout]
    et = et_cpp.Llama2cTokenizer()
    et.load(str(files["llama2c_executorch"]))  # ExecuTorch reads only its own layout
    meta, replies = run_tool(path, encode_cases(strings))
    assert meta["format"] == "llama2.c tokenizer"
    assert (meta["vocab_size"], meta["bos_id"], meta["eos_id"]) == (et.vocab_size(), et.bos_tok(), et.eos_tok())
    nonempty = [s for s in strings if s]  # ExecuTorch refuses to encode ""
    expected = {s: et.encode(s, 0, 0) for s in nonempty}
    ours = {s: r["ids"] for s, r in zip(strings, replies) if s}
    assert ours == expected, first_mismatch(f"{layout} ids", nonempty, [ours[s] for s in nonempty],
                                            [expected[s] for s in nonempty])
    pieces_checked = 0
    for s, reply in zip(strings, replies):
        for piece, token in zip(reply["pieces"], reply["ids"]):
            try:
                theirs = et.decode(token)  # decode(token, token): prev is never BOS here
            except UnicodeDecodeError:  # a byte token: not a str on its own
                assert len(bytes.fromhex(piece)) == 1
                continue
            assert bytes.fromhex(piece).decode("utf-8") == theirs, token
            pieces_checked += 1
    bad = corpus.invalid_utf8_strings()
    _, invalid = run_tool(path, encode_cases(bad))
    assert [r["ids"] for r in invalid] == [et.encode(b, 0, 0) for b in bad]
    _, framed = run_tool(path, encode_cases(nonempty[:50], bos=1, eos=1))
    assert [r["ids"] for r in framed] == [et.encode(s, 1, 1) for s in nonempty[:50]]
    record(layout, strings=len(nonempty) + len(bad), identical_ids=len(nonempty) + len(bad),
           pieces_checked=pieces_checked)
