"""float16 and bfloat16 across the Python boundary (programs whose output is their input): NumPy where it has the dtype, torch.bfloat16
tensors for bfloat16 (NumPy has none), float32 NumPy for bfloat16 outputs when torch is not in use."""
import json
from pathlib import Path

import numpy as np

import etrt
from conftest import run_python

PROGRAMS = Path(__file__).resolve().parent / "programs"  # written by programs/export_dtypes.py


def forward(name):
    return etrt.Runtime.get().load_program(PROGRAMS / f"{name}.pte").load_method("forward")


def test_float16_numpy_in_and_out():
    x = np.array([[1.5, -2.0, 0.25], [3.0, 0.0, -1.0]], dtype=np.float16)
    (out,) = forward("float16_identity").execute([x])
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, x)


def test_bfloat16_torch_in_and_out():
    import torch
    x = torch.tensor([[1.5, -2.0, 0.25], [3.0, 0.0, -1.0]], dtype=torch.bfloat16)
    (out,) = forward("bfloat16_identity").execute([x])
    assert out.dtype == torch.bfloat16
    assert torch.equal(out, x)
    # A strided view crosses too (copied to contiguous bits on the way in).
    (out,) = forward("bfloat16_identity").execute([torch.cat([x, x], dim=1)[:, ::2]])
    assert torch.equal(out, torch.cat([x, x], dim=1)[:, ::2])


def test_bfloat16_output_without_torch_is_exact_float32(tmp_path):
    out = run_python("import json, sys, numpy as np, etrt\n"
                     "bits = np.array([0x3fc0, 0xc000, 0x7f80, 0x0001], dtype=np.uint16)\n"  # 1.5 -2 inf tiny
                     "values = etrt._bfloat16_output(bits, False)\n"
                     "print(json.dumps([str(values.dtype), [repr(float(v)) for v in values], 'torch' in sys.modules]))\n",
                     tmp_path)
    dtype, values, torch_imported = json.loads(out.stdout)
    assert dtype == "float32" and not torch_imported
    assert values == ["1.5", "-2.0", "inf", repr(float(np.array([0x00010000], dtype=np.uint32).view(np.float32)[0]))]


def test_bfloat16_bits_must_be_two_byte_integers():
    import pytest
    method = forward("bfloat16_identity")
    with pytest.raises(etrt.Error, match="bfloat16 bits"):
        method._method.execute([np.zeros((2, 3), dtype=np.float16)], [0])
