"""Inputs whose bytes do not mean what a plain read says (issue 15 #8): big-endian NumPy arrays, and torch
tensors carrying the lazy negative or conjugate bit. etrt converts or materialises them -- it never reads
them as if they were native, positive, real data."""
import numpy as np
import pytest

import etrt

from conftest import MODELS, cases


def first_case(model, method="forward"):
    _, inputs, expected, _ = next(cases(MODELS / model, method))
    return inputs, expected


@pytest.mark.parametrize("model,pte", [("op_add", "portable.pte"), ("mlp", "xnnpack.pte"), ("mlp", "portable.pte")])
def test_big_endian_arrays_are_converted_to_native_order(models_dir, model, pte):
    import etrt
    inputs, _ = first_case(model)
    method = etrt.Runtime.get().load_program(models_dir / model / pte).load_method("forward")
    native = method.execute(inputs)
    swapped = [x.astype(x.dtype.newbyteorder(">")) for x in inputs]
    assert all(not x.dtype.isnative for x in swapped if x.dtype.itemsize > 1)
    for got, want in zip(method.execute(swapped), native):
        np.testing.assert_array_equal(got, want)  # the same numbers, not byte-swapped garbage
    # Non-contiguous big-endian views too.
    wide = [np.repeat(x, 2, axis=-1).astype(x.dtype.newbyteorder(">"))[..., ::2] for x in inputs]
    for got, want in zip(method.execute(wide), native):
        np.testing.assert_array_equal(got, want)


def test_big_endian_integers_are_converted(models_dir):
    import etrt
    program = etrt.Runtime.get().load_program(models_dir / "op_embedding" / "portable.pte")
    method = program.load_method("forward")
    inputs, _ = first_case("op_embedding")
    native = method.execute(inputs)
    swapped = [x.astype(x.dtype.newbyteorder(">")) for x in inputs]
    for got, want in zip(method.execute(swapped), native):
        np.testing.assert_array_equal(got, want)


def test_torch_negative_bit_is_materialised(models_dir):
    torch = pytest.importorskip("torch")
    import etrt
    inputs, _ = first_case("op_add")
    method = etrt.Runtime.get().load_program(models_dir / "op_add" / "portable.pte").load_method("forward")
    a, b = (torch.from_numpy(x) for x in inputs)
    negated = torch.complex(a, a).conj().imag  # -a, held as a view of +a with the negative bit set
    assert negated.is_neg()
    got = method.execute([negated, b])[0]
    want = method.execute([(-a).contiguous(), b])[0]
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_torch_conjugate_bit_is_refused_clearly_or_materialised(models_dir):
    torch = pytest.importorskip("torch")
    import etrt
    inputs, _ = first_case("op_add")
    method = etrt.Runtime.get().load_program(models_dir / "op_add" / "portable.pte").load_method("forward")
    a, b = (torch.from_numpy(x) for x in inputs)
    conjugated = torch.complex(a, a).conj()
    assert conjugated.is_conj()
    with pytest.raises(etrt.Error, match="unsupported dtype complex64"):  # etrt has no complex dtype
        method.execute([conjugated, b])


def test_empty_batch_with_numpy_zero_strides_runs(models_dir):
    # An empty array may carry strides of 0; with no element to misplace it is dense in any order.
    method = etrt.Runtime.get().load_program(models_dir / "dynamic_mlp" / "portable.pte").load_method("forward")
    zero_strides = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(0, 16), strides=(0, 0))
    for x in (np.zeros((0, 16), dtype=np.float32), zero_strides):
        (out,) = method.execute([x])
        assert out.shape == (0, 8)
