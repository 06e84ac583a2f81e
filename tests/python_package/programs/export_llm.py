"""Exports the LLM program of the etrt.llm package tests (committed in llm/ beside this script):
  llm/tokenizer.model   SentencePiece BPE with byte fallback (Llama 2's settings), trained here
  llm/llama.pte         ExecuTorch's Llama example by its export_llama recipe: KV cache, custom SDPA,
                        XNNPACK, dynamic sequence length; random weights (seed 0), a tiny shape
It reuses the recipe of the runner's C++ tests (tests/extensions/llm/runner/make_runner_models.py)
with a smaller model, so the wheel's tests carry a small file and need no export at test time.
Run from the repository: python3 tests/python_package/programs/export_llm.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "extensions", "llm", "runner"))
import make_runner_models as recipe  # noqa: E402

recipe.PARAMS = {"dim": 32, "n_layers": 1, "n_heads": 4, "n_kv_heads": 2, "multiple_of": 32, "norm_eps": 1e-5}
recipe.VARIANTS = {"llama": (recipe.VOCAB, ["-kv", "--use_sdpa_with_kv_cache", "-X"])}


def main():
    out_dir = os.path.join(HERE, "llm")
    os.makedirs(out_dir, exist_ok=True)
    recipe.train_tokenizer(out_dir)
    os.remove(os.path.join(out_dir, "tokenizer.vocab"))
    recipe.export("llama", out_dir)


if __name__ == "__main__":
    main()
