"""The xnnpack plugin (backend XnnpackBackend) on the reference programs:
outputs against eager PyTorch and ExecuTorch's XNNPACK runtime, dynamic
shapes, proof the delegate ran in this plugin, thread-pool changes, and
corrupted delegate blobs failing method load with a clear error."""
import ctypes
import json
import os
import re
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "tests" / "models" / "generated"
sys.path.insert(0, str(SOURCE / "tests" / "support"))
import etrt_ctypes  # noqa: E402

INDEX = json.loads((MODELS / "index.json").read_text())
XNNPACK_MODELS = [m for m in INDEX["models"] if (MODELS / m["dir"] / "xnnpack.pte").exists()]
ENTRY_BACKEND = 1
# A sanitizer runtime in the process (scripts/lsan_suite.sh preloads ASan) refuses RTLD_DEEPBIND, so the
# plugin opens its XNNPACK without it there (plugin_api/etrt/private_library.hpp, deep_bind_allowed).
SANITIZED = any(hasattr(ctypes.CDLL(None), name) for name in ("__asan_init", "__tsan_init", "__msan_init"))
# Built with ETRT_XNNPACK_FROM_SOURCE: XNNPACK is linked into the plugin (hidden), nothing is opened.
XNNPACK_STATIC = os.environ.get("ETRT_XNNPACK_STATIC") == "1"


class RegistryEntry(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("kind", ctypes.c_int32), ("is_winner", ctypes.c_int32),
                ("name", ctypes.c_char_p), ("variant", ctypes.c_char_p), ("plugin", ctypes.c_char_p),
                ("plugin_path", ctypes.c_char_p), ("priority", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("reason", ctypes.c_char_p)]


@pytest.fixture(scope="module")
def etrt():
    lib = etrt_ctypes.Library()
    L = lib.lib
    L.et_registry_count.argtypes = [ctypes.c_int32]
    L.et_registry_count.restype = ctypes.c_size_t
    L.et_registry_at.argtypes = [ctypes.c_int32, ctypes.c_size_t, ctypes.POINTER(RegistryEntry)]
    L.et_program_operator_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    L.et_program_operator_name.restype = ctypes.c_char_p
    L.et_program_delegate_id.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    L.et_program_delegate_id.restype = ctypes.c_char_p
    return lib


# `stats`: conftest.py.


def arrays(path):
    with np.load(path) as data:
        return [data[f"{p}_{i}"] for p in ("input", "output") for i in range(len(data.files)) if f"{p}_{i}" in data.files]


def assert_close(actual, expected, tol, what):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, expected {expected.dtype}"
    if np.issubdtype(expected.dtype, np.floating):
        bad = ~np.isclose(actual, expected, rtol=tol["rtol"], atol=tol["atol"], equal_nan=True)
        assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} elements differ; max |diff| "
                               f"{np.nanmax(np.abs(actual.astype(np.float64) - expected)):.3g}")
    else:
        assert np.array_equal(actual, expected), f"{what}: values differ"


def delegates_of(etrt, program, method):
    ids, i = [], 0
    while (name := etrt.lib.et_program_delegate_id(program.handle, method.encode(), i)) is not None:
        ids.append(name.decode())
        i += 1
    return ids


def operators_of(etrt, program, method):
    ops, i = [], 0
    while (name := etrt.lib.et_program_operator_name(program.handle, method.encode(), i)) is not None:
        ops.append(name.decode())
        i += 1
    return ops


# ----------------------------------------------------------- reference programs


@pytest.mark.parametrize("model", XNNPACK_MODELS, ids=[m["name"] for m in XNNPACK_MODELS])
def test_xnnpack_program_matches_eager_and_executorch(etrt, model, stats):
    meta = json.loads((MODELS / model["dir"] / "meta.json").read_text())
    program = etrt.load_program(MODELS / model["dir"] / "xnnpack.pte")
    checked = 0
    for method_name, spec in meta["methods"].items():
        assert set(delegates_of(etrt, program, method_name)) == {"XnnpackBackend"}
        method = program.load_method(method_name)  # one method for all cases: state and resizing carry over
        for case in spec["cases"]:
            outputs = method.execute(arrays(MODELS / model["dir"] / case["inputs_file"]))
            expected = arrays(MODELS / model["dir"] / case["expected_file"])
            theirs = arrays(MODELS / model["dir"] / case["executorch"]["xnnpack"]["file"])
            assert len(outputs) == len(expected)
            for i, (actual, want, ref) in enumerate(zip(outputs, expected, theirs)):
                label = f"{model['name']}.{method_name}[{case['name']}] output {i}"
                assert_close(actual, want, meta["tolerance"], label + " vs eager")
                assert_close(actual, ref, meta["tolerance"], label + " vs ExecuTorch XNNPACK")
                checked += 1
        del method
    del program
    assert checked > 0
    reports = stats()
    delegate_calls = sum(spec["xnnpack_plan"]["delegate_calls"] * len(spec["cases"]) for spec in meta["methods"].values())
    assert sum(r["executes"] for r in reports) == delegate_calls, reports
    deep_bind = not SANITIZED and not XNNPACK_STATIC
    assert all(r["plugin"] == "xnnpack" and r["deep_bind"] == deep_bind for r in reports), reports


# ------------------------------------------------------------- dynamic shapes


def test_dynamic_batch_reuses_runtimes_per_shape(etrt, stats):
    d = MODELS / "dynamic_mlp"
    program = etrt.load_program(d / "xnnpack.pte")
    method = program.load_method("forward")
    order = ["b1", "b5", "b16", "b16", "b1", "b5", "b1"]
    for case in order:
        out = method.execute(arrays(d / f"inputs_{case}.npz"))
        assert_close(out[0], arrays(d / f"expected_{case}.npz")[0], {"rtol": 1e-4, "atol": 1e-5}, case)
        assert_close(out[0], arrays(d / f"executorch_xnnpack_{case}.npz")[0], {"rtol": 1e-4, "atol": 1e-5}, case)
        assert out[0].shape[0] == int(case[1:])
    del method, program
    [report] = stats()
    assert report["executes"] == len(order)
    # One set of runtimes per distinct shape (the declared [16, 16] is built at load), each reused.
    assert report["plans_built"] == 3, report
    assert report["xnnpack_invocations"] == len(order)


def test_input_that_does_not_fit_the_graph_is_an_error(etrt):
    program = etrt.load_program(MODELS / "dynamic_mlp" / "xnnpack.pte")
    method = program.load_method("forward")
    with pytest.raises(etrt_ctypes.EtrtError):
        method.execute([np.zeros((4, 15), np.float32)])
    out = method.execute(arrays(MODELS / "dynamic_mlp" / "inputs_b5.npz"))  # still usable
    assert out[0].shape == (5, 8)


# ----------------------------------------------------------- delegate identity


def test_the_delegate_runs_in_the_xnnpack_plugin(etrt, stats):
    program = etrt.load_program(MODELS / "dynamic_mlp" / "xnnpack.pte")
    # Nothing but the delegate computes: the method calls no operator at all.
    assert operators_of(etrt, program, "forward") == []
    assert delegates_of(etrt, program, "forward") == ["XnnpackBackend"]
    method = program.load_method("forward")
    out = method.execute(arrays(MODELS / "dynamic_mlp" / "inputs_b5.npz"))
    assert_close(out[0], arrays(MODELS / "dynamic_mlp" / "expected_b5.npz")[0], {"rtol": 1e-4, "atol": 1e-5}, "b5")
    winners = []
    for i in range(etrt.lib.et_registry_count(ENTRY_BACKEND)):
        entry = RegistryEntry(struct_size=ctypes.sizeof(RegistryEntry))
        assert etrt.lib.et_registry_at(ENTRY_BACKEND, i, ctypes.byref(entry)) == 0
        if entry.name == b"XnnpackBackend" and entry.is_winner:
            winners.append(entry.plugin.decode())
    assert winners == ["xnnpack"]
    del method, program
    [report] = stats()
    assert report["executes"] == 1 and report["xnnpack_invocations"] == 1
    if XNNPACK_STATIC:  # XNNPACK linked into the plugin, running on etrt's pool through the shim linked with it.
        assert report["xnnpack_library"] == "(linked statically)"
    else:  # The plugin's private copy of Debian's libXNNPACK, running on etrt's pool through the shim.
        assert report["xnnpack_library"].endswith("/xnnpack_private/libXNNPACK.so.0.etrt")


def test_plugin_nodes_and_segments(etrt, stats):
    """The transformer's attention delegate mixes XNNPACK runtimes with nodes
    Debian's XNNPACK lacks (transpose, batch matmul) run by the plugin."""
    program = etrt.load_program(MODELS / "transformer_encoder" / "xnnpack.pte")
    method = program.load_method("forward")
    method.execute(arrays(MODELS / "transformer_encoder" / "inputs.npz"))
    del method, program
    reports = stats()
    assert len(reports) == 4
    assert sum(r["plugin_node_runs"] for r in reports) > 0
    assert all(r["xnnpack_invocations"] > 0 for r in reports)


# ------------------------------------------------------------------ threads


def test_thread_pool_changes_rebuild_runtimes(etrt, stats):
    d = MODELS / "resnet_basic"
    program = etrt.load_program(d / "xnnpack.pte")
    method = program.load_method("forward")
    inputs = arrays(d / "inputs.npz")
    expected = arrays(d / "expected.npz")[0]
    before = etrt.lib.et_threadpool_size()
    try:
        results = []
        for threads in (1, 2, 1):
            etrt.set_num_threads(threads)
            results.append(method.execute(inputs)[0])
            results.append(method.execute(inputs)[0])
    finally:
        etrt.set_num_threads(before)
    for r in results:
        assert_close(r, expected, {"rtol": 1e-4, "atol": 1e-5}, "resnet_basic")
    del method, program
    [report] = stats()
    assert report["executes"] == 6
    assert report["plans_built"] == 4  # at load, then once per new pool


# ------------------------------------------------------------ corrupt blobs


def blob_offset(data):
    at = data.find(b"XH00")
    assert at >= 4, "no XNNPACK header in the program"
    return at - 4


def load_error(etrt, tmp_path, data, name="corrupt.pte"):
    path = tmp_path / name
    path.write_bytes(bytes(data))
    program = etrt.load_program(path)
    try:
        program.load_method("forward")
    except etrt_ctypes.EtrtError as e:
        return str(e)
    return None


def patched(data, at, fmt, value):
    out = bytearray(data)
    struct.pack_into(fmt, out, at, value)
    return out


CORRUPTIONS = {
    "flatbuffer offset past the end": (lambda d, b: patched(d, b + 10, "<I", 0xFFFFFF00), "flatbuffer offset"),
    "flatbuffer size past the end": (lambda d, b: patched(d, b + 14, "<I", 0x7FFFFFFF), "flatbuffer size"),
    "constant region inside the flatbuffer": (lambda d, b: patched(d, b + 18, "<I", 40), "constant data offset"),
    "constant region past the end": (lambda d, b: patched(d, b + 22, "<Q", 1 << 40), "constant data size"),
    "wrong identifier": (lambda d, b: patched(d, b + 36, "<4s", b"ZZ99"), "identifier is 'ZZ99'"),
    "flatbuffer root offset": (lambda d, b: patched(d, b + 32, "<I", 0x7FFFFF00), "flatbuffer verification failed"),
}


@pytest.mark.parametrize("case", list(CORRUPTIONS))
def test_corrupt_blob_fails_method_load(etrt, tmp_path, case):
    data = (MODELS / "mlp" / "xnnpack.pte").read_bytes()
    mutate, message = CORRUPTIONS[case]
    error = load_error(etrt, tmp_path, mutate(data, blob_offset(data)))
    assert error is not None, f"{case}: method loaded"
    assert "XnnpackBackend" in error and message in error, error
    assert "invalid XNNPACK delegate blob" in error, error
    # The process stays usable: the intact program loads and runs.
    good = etrt.load_program(MODELS / "mlp" / "xnnpack.pte").load_method("forward")
    out = good.execute(arrays(MODELS / "mlp" / "inputs.npz"))
    assert_close(out[0], arrays(MODELS / "mlp" / "expected.npz")[0], {"rtol": 1e-4, "atol": 1e-5}, "mlp after " + case)


def test_missing_named_data_key_fails_method_load(etrt, tmp_path):
    data = bytearray((MODELS / "mlp" / "xnnpack.pte").read_bytes())
    b = blob_offset(data)
    m = re.search(rb"[0-9a-f]{64}", bytes(data[b:]))
    assert m, "no named-data key in the blob"
    key = m.group(0).decode()
    at = b + m.start()
    data[at] = ord("0") if data[at] != ord("0") else ord("1")
    error = load_error(etrt, tmp_path, data)
    assert error is not None and "is not in the program" in error, error
    assert key[1:] in error  # the message names the key
    assert "the host has no such key" not in error and "' not found" in error, error  # the host's own words


def test_tensor_larger_than_its_named_data_fails_method_load(etrt, tmp_path):
    data = bytearray((MODELS / "mlp" / "xnnpack.pte").read_bytes())
    b = blob_offset(data)
    dims = struct.pack("<III", 2, 64, 32)  # the first Linear's weight [64, 32]
    at = bytes(data).find(dims, b)
    assert at > 0
    struct.pack_into("<I", data, at + 4, 65)
    error = load_error(etrt, tmp_path, data)
    assert error is not None and "needs" in error and "[65, 32]" in error, error


def test_random_blob_damage_never_crashes(etrt, tmp_path):
    data = (MODELS / "mlp" / "xnnpack.pte").read_bytes()
    b = blob_offset(data)
    size = struct.unpack_from("<I", data, b + 14)[0] + 32
    rng = np.random.default_rng(7)
    failed = 0
    for trial in range(150):
        damaged = bytearray(data)
        for _ in range(int(rng.integers(1, 4))):
            damaged[b + int(rng.integers(0, size))] ^= 1 << int(rng.integers(0, 8))
        path = tmp_path / "damaged.pte"
        path.write_bytes(bytes(damaged))
        try:
            method = etrt.load_program(path).load_method("forward")
            method.execute(arrays(MODELS / "mlp" / "inputs.npz"))
        except etrt_ctypes.EtrtError:
            failed += 1
    assert failed > 0
    good = etrt.load_program(MODELS / "mlp" / "xnnpack.pte").load_method("forward")
    assert good.execute(arrays(MODELS / "mlp" / "inputs.npz"))[0].shape == (4, 10)


# ------------------------------------------------- NaN, Inf and empty inputs


def float_cases(model):
    """(method name, inputs of its first case) for the methods of a model."""
    meta = json.loads((MODELS / model["dir"] / "meta.json").read_text())
    for method_name, spec in meta["methods"].items():
        yield method_name, arrays(MODELS / model["dir"] / spec["cases"][0]["inputs_file"])


def assert_same_non_finite(actual, expected, what):
    """Same NaN and +-Inf positions as the portable result, finite values close."""
    assert actual.shape == expected.shape, what
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=what + ": NaN positions")
    np.testing.assert_array_equal(np.isposinf(actual), np.isposinf(expected), err_msg=what + ": +Inf positions")
    np.testing.assert_array_equal(np.isneginf(actual), np.isneginf(expected), err_msg=what + ": -Inf positions")
    finite = np.isfinite(expected)
    np.testing.assert_allclose(actual[finite], expected[finite], rtol=1e-4, atol=1e-5, err_msg=what)


@pytest.mark.parametrize("model", XNNPACK_MODELS, ids=[m["name"] for m in XNNPACK_MODELS])
def test_nan_and_inf_inputs_give_what_the_portable_path_gives(etrt, model):
    # Debian's XNNPACK clamps NaN to a finite bound (an MLP on all-NaN input returned finite numbers): runs
    # with non-finite inputs take the plugin's reference code.
    checked = 0
    for method_name, inputs in float_cases(model):
        if not any(x.dtype == np.float32 for x in inputs):
            continue
        one_nan = [x.copy() for x in inputs]
        for x in one_nan:
            if x.dtype == np.float32:
                x.reshape(-1)[x.size // 2] = np.nan
        variants = {"one NaN": one_nan}
        for name, fill in (("all NaN", np.nan), ("all +Inf", np.inf), ("all -Inf", -np.inf)):
            variants[name] = [np.full_like(x, fill) if x.dtype == np.float32 else x for x in inputs]
        for name, values in variants.items():
            results = []
            for pte in ("portable.pte", "xnnpack.pte"):  # fresh methods: stateful programs start alike
                method = etrt.load_program(MODELS / model["dir"] / pte).load_method(method_name)
                results.append(method.execute(values))
                del method
            for i, (want, got) in enumerate(zip(*results)):
                assert_same_non_finite(got, want, f"{model['name']}.{method_name} {name} output {i}")
                checked += 1
    if model["name"] == "mlp":
        assert checked == 4
    # The same method still runs finite inputs on XNNPACK and matches eager.
    method = etrt.load_program(MODELS / model["dir"] / "xnnpack.pte").load_method(next(float_cases(model))[0])
    method.execute(next(float_cases(model))[1])


def test_all_nan_mlp_is_nan_not_finite(etrt):
    program = etrt.load_program(MODELS / "mlp" / "xnnpack.pte")
    out = program.load_method("forward").execute([np.full((4, 32), np.nan, np.float32)])[0]
    assert np.isnan(out).all(), out


def test_zero_sized_batch_runs_like_the_portable_path(etrt, stats):
    d = MODELS / "dynamic_mlp"
    # NumPy gives an empty array strides (0, 0), which the runtime's density check refuses; give real ones.
    empty = np.lib.stride_tricks.as_strided(np.zeros(16, np.float32), shape=(0, 16), strides=(64, 4))
    portable = etrt.load_program(d / "portable.pte").load_method("forward").execute([empty])[0]
    assert portable.shape == (0, 8)
    method = etrt.load_program(d / "xnnpack.pte").load_method("forward")
    out = method.execute([empty])[0]
    assert out.shape == portable.shape and out.dtype == portable.dtype
    # And the method still runs real batches on XNNPACK afterwards.
    out = method.execute(arrays(d / "inputs_b5.npz"))
    assert_close(out[0], arrays(d / "expected_b5.npz")[0], {"rtol": 1e-4, "atol": 1e-5}, "b5 after b0")
    del method
    [report] = stats()
    assert report["executes"] == 2 and report["xnnpack_invocations"] == 1, report
