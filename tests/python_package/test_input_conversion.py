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


def test_out_of_range_integers_are_refused_naming_the_input(models_dir):
    # 2**70 once escaped as pybind11's RuntimeError ("Unable to cast Python instance"), not etrt.Error.
    method = etrt.Runtime.get().load_program(models_dir / "op_add" / "portable.pte").load_method("forward")
    inputs, _ = first_case("op_add")
    for value in (2 ** 70, -(2 ** 70), 2 ** 63, -(2 ** 63) - 1, 10 ** 5000):
        with pytest.raises(etrt.Error) as raised:
            method.execute([inputs[0], value])
        assert raised.type is etrt.Error and raised.value.status == "invalid argument", raised.value
        assert "input 1: " in str(raised.value) and "is out of range: integer inputs are int64" in str(raised.value)
    with pytest.raises(etrt.Error, match=r"input 1: 1180591620717411303424 is out of range"):
        method.execute([inputs[0], 2 ** 70])
    with pytest.raises(etrt.Error, match=r"input 1: an integer of 16610 bits is out of range"):
        method.execute([inputs[0], 10 ** 5000])  # too long for str(): named by its size
    # In range, the value reaches the program, which says what the input is.
    with pytest.raises(etrt.Error, match="method 'forward', input 1: expected a tensor"):
        method.execute([inputs[0], 2 ** 63 - 1])
    np.testing.assert_array_equal(method.execute(inputs)[0], method.execute(inputs)[0])  # still usable


# The other ways an input can fail to fit its declaration (issue 32 asked): each already gave etrt.Error
# naming the input, or the kernel's own check; kept so they stay that way.
@pytest.mark.parametrize("model,index,value,message", [
    ("op_logical_and", 0, 2, "input 0: expected a tensor"),                     # a bool input given 2
    ("op_logical_and", 0, np.array(2), "input 0: expected dtype bool, got int64"),
    ("op_embedding", 0, np.array([[2 ** 40] * 3] * 2, np.int64), "index 1099511627776 .* out of range"),
    ("op_embedding", 0, np.zeros((2, 3), np.int32), "input 0: expected dtype int64, got int32"),
    ("op_embedding", 0, np.array([[2 ** 70] * 3] * 2, object), "input 0: unsupported dtype object"),
    ("op_embedding", 0, np.zeros((2, 3), np.uint64), "input 0: unsupported dtype uint64"),
    ("op_embedding", 0, [[1, 2], [3]], "input 0: expected an array, a number or None, got list"),
    ("op_embedding", 0, "text", "input 0: unsupported dtype <U4"),
])
def test_inputs_that_do_not_fit_raise_etrt_errors_naming_the_problem(models_dir, model, index, value, message):
    method = etrt.Runtime.get().load_program(models_dir / model / "portable.pte").load_method("forward")
    inputs, _ = first_case(model)
    inputs = list(inputs)
    inputs[index] = value
    with pytest.raises(etrt.Error, match=message) as raised:
        method.execute(inputs)
    assert raised.type is etrt.Error
