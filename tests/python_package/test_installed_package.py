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
    assert "(program bytes)" in str(info.value) and info.value.code != 0 and info.value.status
    with pytest.raises(etrt.Error, match="no_such.pte"):
        etrt.Runtime.get().load_program(models_dir / "no_such.pte")
    truncated = (models_dir / "mlp" / "portable.pte").read_bytes()[:200]
    with pytest.raises(etrt.Error):
        etrt.Runtime.get().load_program(truncated)

    method = etrt.Runtime.get().load_program(models_dir / "mlp" / "portable.pte").load_method("forward")
    x = np.load(models_dir / "mlp" / "inputs.npz")["input_0"]
    with pytest.raises(etrt.Error, match=r"input 0: expected rank 2 \[4, 32\], got rank 3 \[1, 1, 1\]"):
        method.execute([np.zeros((1, 1, 1), np.float32)])
    with pytest.raises(etrt.Error, match="expected dtype float32, got float64"):
        method.execute([x.astype(np.float64)])
    with pytest.raises(etrt.Error, match="method takes 1 inputs, got 0"):
        method.execute([])
    with pytest.raises(etrt.Error, match="input 0: unsupported dtype <U12"):
        method.execute(["not a tensor"])
    with pytest.raises(etrt.Error, match="input 0: unsupported dtype object"):
        method.execute([object()])
    # The process and the method stay usable.
    expected = np.load(models_dir / "mlp" / "expected.npz")["output_0"]
    np.testing.assert_allclose(method.execute([x])[0], expected, rtol=1e-4, atol=1e-5)


def test_console_script_runs_the_packaged_command(package_dir, models_dir, tmp_path):
    import json
    import subprocess
    import sys
    script = Path(sys.executable).parent / "etrt"
    assert script.is_file(), "pip did not install the etrt console script"
    listing = json.loads(subprocess.run([str(script), "plugins", "--json"], capture_output=True, text=True,
                                        check=True).stdout)
    paths = {p["library"] for p in listing["plugins"]}
    assert paths and all(Path(p).resolve().is_relative_to(package_dir) for p in paths), paths
    run = subprocess.run([str(script), "run", str(models_dir / "mlp" / "portable.pte"), "--iterations", "2"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr


def test_cmake_package_points_into_the_wheel(package_dir, tmp_path):
    import shutil
    import subprocess
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.22)\nproject(probe LANGUAGES C CXX)\n"
        "find_package(etrt REQUIRED)\n"
        "get_target_property(location etrt::etrt IMPORTED_LOCATION_RELEASE)\n"
        "message(STATUS \"etrt-location=${location}\")\n")
    out = subprocess.run([cmake, "-S", str(tmp_path), "-B", str(tmp_path / "build"),
                          f"-DCMAKE_PREFIX_PATH={package_dir}"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    location = out.stdout.split("etrt-location=")[1].split()[0]
    assert Path(location).resolve() == (package_dir / "lib" / "libetrt.so.1").resolve()



def test_set_num_threads():
    import etrt
    etrt.set_num_threads(1)
    assert etrt.num_threads() == 1
