"""etrt's llm_ops plugin (plugins/llm_ops) against eager definitions of ExecuTorch's
LLM custom operators: torch's scaled_dot_product_attention over the cache rows the
operator reads, with grouped-query heads repeated as ExecuTorch's reference
(extension/llm/custom_ops/test_sdpa_with_kv_cache.py) does."""
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", HERE.parents[3]))
BUILD = Path(os.environ.get("ETRT_BUILD_DIR", SOURCE / "build"))
sys.path.insert(0, str(SOURCE / "tests" / "support"))
import etrt_ctypes  # noqa: E402

_spec = importlib.util.spec_from_file_location("export_llm_ops", HERE / "export_llm_ops.py")
ops = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ops)
PROGRAMS = Path(ops.export_all(str(BUILD / "llm_ops_programs")))


@pytest.fixture(scope="module")
def etrt():
    return etrt_ctypes.Library()


def method(etrt, name):
    return etrt.load_program(PROGRAMS / f"{name}.pte").load_method("forward")


def reference_sdpa(q, k_cache, v_cache, kv_len, mask=None, start_pos=None, scale=None):
    """q [B, S, Hq, D] over the first kv_len rows of caches [B, L, Hkv, D]; causal from start_pos when given."""
    k, v = k_cache[:, :kv_len].transpose(1, 2), v_cache[:, :kv_len].transpose(1, 2)
    reps = q.size(2) // k.size(1)
    k, v = k.repeat_interleave(reps, dim=1), v.repeat_interleave(reps, dim=1)
    if start_pos is not None:
        rows = torch.arange(q.size(1))[:, None] + start_pos
        mask = torch.where(torch.arange(kv_len)[None, :] <= rows, 0.0, float("-inf"))
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k, v, attn_mask=mask, scale=scale)
    return out.transpose(1, 2)


def assert_close(actual, expected, what):
    expected = expected.detach().numpy()
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    diff = np.abs(actual - expected).max()
    assert diff < 2e-5, f"{what}: max |diff| {diff:.3g}"


@pytest.mark.parametrize("start_pos", [0, 2, 7])
def test_custom_sdpa_causal_grouped_query(etrt, start_pos):
    q, k_cache, v_cache, _ = ops.example_inputs("custom_sdpa_causal")
    out = method(etrt, "custom_sdpa_causal").execute(
        [q.numpy(), k_cache.numpy(), v_cache.numpy(), np.array([start_pos], dtype=np.int64)])[0]
    assert_close(out, reference_sdpa(q, k_cache, v_cache, start_pos + q.size(1), start_pos=start_pos),
                 f"custom_sdpa start_pos {start_pos}")


def test_custom_sdpa_start_pos_past_the_cache_is_an_error(etrt):
    q, k_cache, v_cache, _ = ops.example_inputs("custom_sdpa_causal")
    with pytest.raises(etrt_ctypes.EtrtError):
        method(etrt, "custom_sdpa_causal").execute(
            [q.numpy(), k_cache.numpy(), v_cache.numpy(), np.array([8], dtype=np.int64)])


def test_custom_sdpa_additive_mask_and_scale(etrt):
    q, k, v, mask = ops.example_inputs("custom_sdpa_mask")
    out = method(etrt, "custom_sdpa_mask").execute([x.numpy() for x in (q, k, v, mask)])[0]
    assert_close(out, reference_sdpa(q, k, v, k.size(1), mask=mask, scale=0.25), "custom_sdpa with mask")


def test_sdpa_with_kv_cache_prefill_then_decode(etrt):
    """A 2-token prefill then 1-token steps: the cache persists in the method's buffers."""
    m = method(etrt, "sdpa_with_kv_cache")
    g = torch.Generator().manual_seed(1)
    k_cache = torch.zeros(1, ops.CACHE_LEN, ops.KV_HEADS, ops.HEAD_DIM)
    v_cache = torch.zeros_like(k_cache)
    start = 0
    for seq in (2, 1, 1, 3):
        q = torch.randn(1, seq, ops.Q_HEADS, ops.HEAD_DIM, generator=g)
        k = torch.randn(1, seq, ops.KV_HEADS, ops.HEAD_DIM, generator=g)
        v = torch.randn(1, seq, ops.KV_HEADS, ops.HEAD_DIM, generator=g)
        out, cache = m.execute([q.numpy(), k.numpy(), v.numpy(), np.array([start], dtype=np.int64)])
        k_cache[:, start:start + seq], v_cache[:, start:start + seq] = k, v
        assert_close(out, reference_sdpa(q, k_cache, v_cache, start + seq, start_pos=start),
                     f"sdpa_with_kv_cache at {start}")
        assert_close(cache, k_cache, f"key cache after the step at {start}")
        start += seq


def test_update_cache_writes_rows_at_start_pos(etrt):
    m = method(etrt, "update_cache")
    expected = torch.zeros(1, ops.CACHE_LEN, ops.KV_HEADS, ops.HEAD_DIM)
    g = torch.Generator().manual_seed(2)
    for start, seq in ((0, 3), (3, 1), (6, 4)):
        value = torch.randn(1, seq, ops.KV_HEADS, ops.HEAD_DIM, generator=g)
        cache = m.execute([value.numpy(), np.array([start], dtype=np.int64)])[0]
        expected[:, start:start + seq] = value
        assert_close(cache, expected, f"cache after writing {seq} rows at {start}")
    with pytest.raises(etrt_ctypes.EtrtError, match="do not fit"):
        m.execute([np.zeros((1, 2, ops.KV_HEADS, ops.HEAD_DIM), np.float32), np.array([9], dtype=np.int64)])
