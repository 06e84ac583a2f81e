"""Trains the small tokenizers of the parity test with the reference libraries and writes them in
every format etrt reads: Hugging Face `tokenizers` (byte-level BPE as Llama 3, Qwen and GPT-2 set it
up), `sentencepiece` (BPE as Llama 2, with byte fallback; unigram with the default nmt_nfkc
normalizer), a tiktoken file made from the Llama-3-style ranks, and llama2.c tokenizer.bin files
(pytorch_tokenizers' exporter for ExecuTorch's layout; the original layout written here)."""

import base64
import json
import struct
from pathlib import Path

import sentencepiece as spm
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def llama3_special_tokens() -> list[str]:
    tokens = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
              "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>",
              "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"]
    tokens += [f"<|reserved_special_token_{i}|>" for i in range(2, 2 + 256 - len(tokens))]
    return tokens


def _byte_decoder() -> dict[str, int]:
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def train_hf(kind: str, corpus_file: Path, out: Path) -> Path:
    tokenizer = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    if kind == "llama3":
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False), byte_level])
    elif kind == "qwen":
        tokenizer.normalizer = normalizers.NFC()
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(QWEN_PATTERN), behavior="isolated", invert=False), byte_level])
    elif kind == "gpt2":
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    elif kind == "gpt2_prefix_nfkc":
        tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC()])
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)
    else:
        raise ValueError(kind)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=4000, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train([str(corpus_file)], trainer)
    # Added tokens after the vocabulary, as in the real files.
    if kind == "llama3":
        tokenizer.add_special_tokens(llama3_special_tokens())
    elif kind == "qwen":
        tokenizer.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
        tokenizer.add_tokens([AddedToken("<think>", special=False, normalized=False),
                              AddedToken("</think>", special=False, normalized=False),
                              AddedToken("<mask>", special=False, lstrip=True, rstrip=True, normalized=True),
                              AddedToken("xyzzy", special=False, single_word=True, normalized=False)])
    else:
        tokenizer.add_special_tokens(["<|endoftext|>"])
        tokenizer.add_tokens([AddedToken("<mask>", special=False, lstrip=True, normalized=False)])
    path = out / f"{kind}.json"
    tokenizer.save(str(path))
    if kind == "llama3":  # Llama 3's file takes a whole pre-token that is in the vocabulary as it is
        data = json.loads(path.read_text(encoding="utf-8"))
        data["model"]["ignore_merges"] = True
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def tiktoken_from_hf(hf_json: Path, out: Path) -> tuple[Path, dict[bytes, int]]:
    """The byte-level vocabulary as tiktoken ranks: rank = id (ids are in merge order)."""
    data = json.loads(hf_json.read_text(encoding="utf-8"))
    decoder = _byte_decoder()
    ranks = {bytes(decoder[c] for c in token): rank
             for token, rank in sorted(data["model"]["vocab"].items(), key=lambda item: item[1])}
    path = out / "llama3.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in sorted(ranks.items(), key=lambda i: i[1])))
    return path, ranks


def train_sentencepiece(kind: str, corpus_file: Path, out: Path) -> Path:
    prefix = out / f"sp_{kind}"
    common = dict(input=str(corpus_file), model_prefix=str(prefix), vocab_size=3000, hard_vocab_limit=False,
                  max_sentence_length=1 << 20, unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2,
                  num_threads=2, user_defined_symbols=["<tag>"])
    if kind == "bpe":  # Llama 2's settings
        spm.SentencePieceTrainer.train(model_type="bpe", byte_fallback=True, normalization_rule_name="identity",
                                       add_dummy_prefix=True, remove_extra_whitespaces=False, split_digits=True,
                                       allow_whitespace_only_pieces=True, character_coverage=0.9995, **common)
    else:  # unigram with the default normalizer and no byte fallback: unknown characters fuse
        spm.SentencePieceTrainer.train(model_type="unigram", character_coverage=0.98, **common)
    return Path(f"{prefix}.model")


def llama2c_files(sp_model: Path, out: Path) -> tuple[Path, Path]:
    from pytorch_tokenizers.llama2c import Llama2cTokenizer

    executorch_layout = out / "tokenizer_executorch.bin"
    Llama2cTokenizer(str(sp_model)).export(str(executorch_layout))
    data = executorch_layout.read_bytes()
    vocab_size, bos, eos, _ = struct.unpack("<4i", data[:16])
    assert (bos, eos) == (1, 2), (bos, eos)  # the original layout has no header for them: llama2.c's 1 and 2
    original_layout = out / "tokenizer_original.bin"
    original_layout.write_bytes(data[12:])  # max_token_length, then the same tokens
    return executorch_layout, original_layout
