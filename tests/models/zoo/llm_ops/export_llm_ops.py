"""Small programs calling ExecuTorch's LLM custom operators (llama::custom_sdpa,
llama::sdpa_with_kv_cache, llama::update_cache; executorch/extension/llm/custom_ops),
exported with ExecuTorch and cached in a directory: <name>.pte for each.

    python3 export_llm_ops.py OUT_DIR
"""
import os
import sys

import torch

HEAD_DIM, Q_HEADS, KV_HEADS, CACHE_LEN = 8, 4, 2, 10  # grouped-query: 2 query heads per cache head


def _start(pos, seq, cache_len):
    start = pos[0].item()
    torch._check_is_size(start)
    torch._check(start + seq <= cache_len)
    return start


class CustomSdpaCausal(torch.nn.Module):
    """custom_sdpa over caches given as inputs, causal from a start position."""
    def forward(self, q, k_cache, v_cache, pos):
        start = _start(pos, q.size(1), k_cache.size(1))
        return torch.ops.llama.custom_sdpa(q, k_cache, v_cache, start, None, 0.0, True)


class CustomSdpaMask(torch.nn.Module):
    """custom_sdpa with an additive mask (no causal flag), as SDPACustom(use_attention_mask=True)."""
    def forward(self, q, k, v, mask):
        return torch.ops.llama.custom_sdpa(q, k, v, 0, mask, 0.0, False, 0.25)


class SdpaWithKvCache(torch.nn.Module):
    """sdpa_with_kv_cache on caches kept as mutable buffers across calls."""
    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, CACHE_LEN, KV_HEADS, HEAD_DIM))
        self.register_buffer("v_cache", torch.zeros(1, CACHE_LEN, KV_HEADS, HEAD_DIM))

    def forward(self, q, k, v, pos):
        start = _start(pos, q.size(1), CACHE_LEN)
        out = torch.ops.llama.sdpa_with_kv_cache(q, k, v, self.k_cache, self.v_cache, start, q.size(1), None, 0.0, True)
        return out, self.k_cache.clone()


class UpdateCache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, CACHE_LEN, KV_HEADS, HEAD_DIM))

    def forward(self, value, pos):
        start = _start(pos, value.size(1), CACHE_LEN)
        torch.ops.llama.update_cache(value, self.cache, start)
        return self.cache.clone()


def example_inputs(name):
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)
    if name == "custom_sdpa_causal":
        return (r(1, 3, Q_HEADS, HEAD_DIM), r(1, CACHE_LEN, KV_HEADS, HEAD_DIM), r(1, CACHE_LEN, KV_HEADS, HEAD_DIM),
                torch.tensor([2]))
    if name == "custom_sdpa_mask":
        mask = torch.where(torch.rand(3, 6, generator=g) < 0.3, float("-inf"), 0.0)
        mask[:, 0] = 0.0  # every query sees at least one key
        return r(1, 3, Q_HEADS, HEAD_DIM), r(1, 6, KV_HEADS, HEAD_DIM), r(1, 6, KV_HEADS, HEAD_DIM), mask
    if name == "sdpa_with_kv_cache":
        return r(1, 2, Q_HEADS, HEAD_DIM), r(1, 2, KV_HEADS, HEAD_DIM), r(1, 2, KV_HEADS, HEAD_DIM), torch.tensor([0])
    if name == "update_cache":
        return r(1, 2, KV_HEADS, HEAD_DIM), torch.tensor([0])
    raise KeyError(name)


MODULES = {"custom_sdpa_causal": CustomSdpaCausal, "custom_sdpa_mask": CustomSdpaMask,
           "sdpa_with_kv_cache": SdpaWithKvCache, "update_cache": UpdateCache}
# Programs whose sequence length varies between calls (a decode step after a prefill).
DYNAMIC_SEQ = {"sdpa_with_kv_cache", "update_cache"}


def export(name, path):
    from executorch.exir import EdgeCompileConfig, to_edge
    from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (registers llama::*)
    inputs = example_inputs(name)
    dynamic = None
    if name in DYNAMIC_SEQ:
        seq = torch.export.Dim("seq", min=1, max=4)
        dynamic = tuple({1: seq} if x.dim() == 4 else None for x in inputs)
    ep = torch.export.export(MODULES[name]().eval(), inputs, dynamic_shapes=dynamic, strict=False)
    program = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False)).to_executorch()
    with open(path, "wb") as f:
        f.write(program.buffer)


def export_all(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name in MODULES:
        path = os.path.join(out_dir, f"{name}.pte")
        if not os.path.exists(path):
            export(name, path + ".tmp")
            os.replace(path + ".tmp", path)
    return out_dir


if __name__ == "__main__":
    export_all(sys.argv[1])
