"""Test files of the LLM runner, written into OUT_DIR (the build tree) at test time:

    tokenizer.model       SentencePiece BPE with byte fallback (Llama 2's settings), trained here
    llama_dynamic.pte     ExecuTorch's Llama example, export_llama -kv --use_sdpa_with_kv_cache -X
                          (dynamic sequence length: the prompt is prefilled in one call)
    llama_static.pte      the same with --disable_dynamic_shape (prefilled token by token)
    llama_small_vocab.pte the dynamic one with a vocabulary smaller than the tokenizer's

    python3 make_runner_models.py OUT_DIR

Weights are random (torch.manual_seed(0)), saved as a checkpoint first so export_llama loads
them (the norms and RoPE tables are otherwise left uninitialised).
"""
import json
import os
import subprocess
import sys

MAX_SEQ_LEN = 48
VOCAB = 320
PARAMS = {"dim": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "multiple_of": 32, "norm_eps": 1e-5}
VARIANTS = {
    "llama_dynamic": (VOCAB, ["-kv", "--use_sdpa_with_kv_cache", "-X"]),
    "llama_static": (VOCAB, ["-kv", "--use_sdpa_with_kv_cache", "-X", "--disable_dynamic_shape"]),
    "llama_small_vocab": (256, ["-kv", "--use_sdpa_with_kv_cache", "-X"]),
}
TEXT = ("Once upon a time there was a little robot who liked to count the stars. "
        "Every night it climbed the hill and counted one, two, three, four, five. "
        "The moon laughed and the owls sang songs about rivers, trees and the sea. ")


def train_tokenizer(out_dir):
    import sentencepiece as spm
    corpus = os.path.join(out_dir, "corpus.txt")
    with open(corpus, "w") as f:
        for i in range(200):
            f.write(TEXT[i % 50:] + TEXT[: i % 50] + "\n")
    spm.SentencePieceTrainer.train(
        input=corpus, model_prefix=os.path.join(out_dir, "tokenizer"), model_type="bpe", vocab_size=VOCAB,
        byte_fallback=True, normalization_rule_name="identity", add_dummy_prefix=True,
        remove_extra_whitespaces=False, unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2, num_threads=1)
    os.remove(corpus)


def export(name, out_dir):
    import torch
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs
    vocab, flags = VARIANTS[name]
    params = dict(PARAMS, vocab_size=vocab)
    params_path = os.path.join(out_dir, f"{name}.params.json")
    checkpoint = os.path.join(out_dir, f"{name}.pth")
    partial = os.path.join(out_dir, f"{name}.partial.pte")
    with open(params_path, "w") as f:
        json.dump(params, f)
    torch.manual_seed(0)
    model = construct_transformer(ModelArgs(max_seq_len=MAX_SEQ_LEN, max_context_len=MAX_SEQ_LEN, **params))
    torch.save(model.state_dict(), checkpoint)
    cmd = [sys.executable, "-m", "executorch.examples.models.llama.export_llama", "-c", checkpoint, "-p", params_path,
           *flags, "--max_seq_length", str(MAX_SEQ_LEN), "--max_context_length", str(MAX_SEQ_LEN), "-d", "fp32",
           "--metadata", '{"get_bos_id": 1, "get_eos_ids": [2]}',
           "--output_name", partial]
    try:
        subprocess.run(cmd, check=True, cwd=out_dir, capture_output=True)
        os.replace(partial, os.path.join(out_dir, f"{name}.pte"))
    finally:
        os.remove(checkpoint)
        os.remove(params_path)


def main():
    out_dir = os.path.abspath(sys.argv[1])
    os.makedirs(out_dir, exist_ok=True)
    # Files already there are kept: the build tree caches them between test runs.
    if not os.path.exists(os.path.join(out_dir, "tokenizer.model")):
        train_tokenizer(out_dir)
    for name in VARIANTS:
        if os.path.exists(os.path.join(out_dir, f"{name}.pte")):
            continue
        export(name, out_dir)
        print("wrote", os.path.join(out_dir, f"{name}.pte"))


if __name__ == "__main__":
    main()
