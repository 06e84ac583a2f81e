"""First tests of the installed package: lazy import, one program end to end,
errors as exceptions. Each check that inspects process state runs in a fresh
interpreter so earlier tests cannot load plugins for it."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


def run_python(code, cwd):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_imported_from_site_packages_not_a_checkout():
    import etrt
    path = Path(etrt.__file__).resolve()
    assert "site-packages" in path.parts, path
    assert not (path.parents[1] / "CMakeLists.txt").exists()


def test_import_loads_no_plugin_and_not_torch(tmp_path):
    out = run_python(
        "import sys, etrt\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('libetrt.so.1' in maps, 'libetrt_' in maps, 'torch' in sys.modules,"
        " any(p['state'] == 'loaded' for p in etrt.plugins()))\n", tmp_path)
    assert out.split() == ["True", "False", "False", "False"]


def test_mlp_portable_matches_expected(models_dir):
    import etrt
    model = models_dir / "mlp"
    inputs = np.load(model / "inputs.npz")
    expected = np.load(model / "expected.npz")
    program = etrt.Runtime.get().load_program(model / "portable.pte")
    assert "forward" in program.method_names
    method = program.load_method("forward")
    meta = program.metadata("forward")
    assert meta.num_inputs() == len(inputs.files)
    args = [inputs[k] for k in sorted(inputs.files, key=lambda k: int(k.split("_")[-1]) if k.split("_")[-1].isdigit() else k)]
    outputs = method.execute(args)
    assert len(outputs) == len(expected.files)
    for got, key in zip(outputs, sorted(expected.files, key=lambda k: int(k.split("_")[-1]) if k.split("_")[-1].isdigit() else k)):
        np.testing.assert_allclose(got, expected[key], rtol=1e-5, atol=1e-5)
    assert tuple(meta.input_tensor_meta(0).sizes()) == args[0].shape


def test_program_from_bytes_and_file_object(models_dir):
    import etrt
    path = models_dir / "mlp" / "portable.pte"
    runtime = etrt.Runtime.get()
    assert runtime.load_program(path.read_bytes()).method_names == {"forward"}
    with open(path, "rb") as f:
        assert runtime.load_program(f).method_names == {"forward"}


def test_loading_plain_program_loads_kernels_not_xnnpack(models_dir, tmp_path):
    out = run_python(
        "import etrt\n"
        f"etrt.Runtime.get().load_program({str(models_dir / 'mlp' / 'portable.pte')!r}).load_method('forward')\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('libetrt_kernels_optimized' in maps, 'libetrt_xnnpack' in maps)\n", tmp_path)
    assert out.split() == ["True", "False"]


def test_errors_are_exceptions_with_the_runtime_message(models_dir):
    import etrt
    with pytest.raises(etrt.Error) as info:
        etrt.Runtime.get().load_program(b"not a program at all")
    assert str(info.value) and info.value.code != 0
    method = etrt.Runtime.get().load_program(models_dir / "mlp" / "portable.pte").load_method("forward")
    with pytest.raises(etrt.Error):
        method.execute([np.zeros((1, 1, 1), np.float32)])
    with pytest.raises(etrt.Error):
        method.execute([])


def test_set_num_threads():
    import etrt
    etrt.set_num_threads(1)
    assert etrt.num_threads() == 1
