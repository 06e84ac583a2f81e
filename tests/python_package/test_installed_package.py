"""The installed package as a user meets it: where it is imported from, one
program end to end, the ways to hand a program over, errors as exceptions."""
from pathlib import Path

import numpy as np
import pytest


def test_imported_from_site_packages_not_a_checkout():
    import etrt
    path = Path(etrt.__file__).resolve()
    assert "site-packages" in path.parts, path
    assert not (path.parents[1] / "CMakeLists.txt").exists()


def test_program_from_bytes_and_file_object(models_dir):
    import etrt
    path = models_dir / "mlp" / "portable.pte"
    runtime = etrt.Runtime.get()
    assert runtime.load_program(path.read_bytes()).method_names == {"forward"}
    with open(path, "rb") as f:
        assert runtime.load_program(f).method_names == {"forward"}


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
