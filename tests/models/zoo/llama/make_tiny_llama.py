"""ExecuTorch's Llama example (executorch.examples.models.llama) from a tiny config,
exported by ExecuTorch's own export_llama with its KV cache, in three variants:

    llama_kv.pte               -kv                                (portable kernels)
    llama_kv_sdpa.pte          -kv --use_sdpa_with_kv_cache       (llama::custom_sdpa, llama::update_cache)
    llama_kv_sdpa_xnnpack.pte  -kv --use_sdpa_with_kv_cache -X    (linears in XNNPACK)

    python3 tests/models/zoo/llama/make_tiny_llama.py [OUT_DIR]   (default: this directory)

Weights are random (torch.manual_seed(0)) and saved as a checkpoint first: without one,
Llama2Model leaves the norms and RoPE tables uninitialised (NaN outputs in both runtimes).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_SEQ_LEN = 32
VARIANTS = {
    "llama_kv": ["-kv"],
    "llama_kv_sdpa": ["-kv", "--use_sdpa_with_kv_cache"],
    "llama_kv_sdpa_xnnpack": ["-kv", "--use_sdpa_with_kv_cache", "-X"],
}


def make_checkpoint(params_path, path):
    import torch
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs
    torch.manual_seed(0)
    params = json.load(open(params_path))
    model = construct_transformer(ModelArgs(max_seq_len=MAX_SEQ_LEN, max_context_len=MAX_SEQ_LEN, **params))
    torch.save(model.state_dict(), path)


def export(name, out_dir, checkpoint, params_path):
    cmd = [sys.executable, "-m", "executorch.examples.models.llama.export_llama", "-c", checkpoint, "-p", params_path,
           *VARIANTS[name], "--max_seq_length", str(MAX_SEQ_LEN), "--max_context_length", str(MAX_SEQ_LEN),
           "-d", "fp32", "--output_name", os.path.join(out_dir, f"{name}.pte")]
    subprocess.run(cmd, check=True, cwd=out_dir, capture_output=True)


def main():
    out_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else HERE)
    params_path = os.path.join(HERE, "params.json")
    checkpoint = os.path.join(out_dir, "tiny_llama.pth")
    make_checkpoint(params_path, checkpoint)
    try:
        for name in VARIANTS:
            export(name, out_dir, checkpoint, params_path)
            print("wrote", os.path.join(out_dir, f"{name}.pte"))
    finally:
        os.remove(checkpoint)


if __name__ == "__main__":
    main()
