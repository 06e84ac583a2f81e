"""Shared by the ops_team tests: etrt installed into a temporary prefix (`cmake
--install`) and as a wheel in a new venv, the installed examples copied into a
directory with no access to the source tree, exports cached by content in the
build directory, and the digests of etrt's own files, checked at the end
(test_unchanged.py) to prove nothing of etrt was rebuilt or changed."""
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BUILD = Path(os.environ["ETRT_BUILD_DIR"])
WHEEL_DIR = Path(os.environ["ETRT_OPS_TEAM_WHEEL_DIR"])
CACHE = Path(os.environ["ETRT_OPS_TEAM_CACHE"])
TOLERANCE = dict(rtol=1e-5, atol=1e-5)
INSTALLED = {}  # installation root -> digests of its libetrt and plugins when it was made


def run(cmd, env=None, check=True, cwd=None, timeout=600):
    """Runs cmd without the caller's ETRT_* settings (plus `env`); asserts success unless check=False."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ETRT_")}
    full_env.update(env or {})
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=full_env, cwd=cwd,
                            timeout=timeout)
    if check:
        assert result.returncode == 0, f"{cmd} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


def digests(files):
    return {str(f): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


def shipped_files(root):
    """libetrt and the shipped plugins (with their private libraries) under a build tree, prefix or package."""
    lib = root / "lib"
    return sorted([lib / "libetrt.so.1", *(p for p in (lib / "etrt" / "plugins").rglob("*") if p.is_file())])


def build_example(example, prefix, build_dir, *extra):
    """Configures (no build type: etrt_add_plugin must still optimise) and builds an example."""
    run(["cmake", "-S", example, "-B", build_dir, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}", *extra])
    run(["cmake", "--build", build_dir])
    return build_dir


def assert_matches_eager(output_file, expected_file):
    output, expected = np.load(output_file), np.load(expected_file)
    assert output.shape == expected.shape and output.dtype == expected.dtype, (output.shape, output.dtype)
    np.testing.assert_allclose(output, expected, **TOLERANCE)


# Each example's export: the files its result depends on, and the files it writes.
EXPORTS = {
    "custom_op": (["my_ops.py", "export.py"], ["swish_mlp.pte", "input_0.npy", "expected_0.npy"]),
    "delegate": (["ewchain.py", "export.py"],
                 [f"{m}/{f}" for m in ["ewchain_only", "ewchain_xnnpack"] for f in ["model.pte", "input_0.npy",
                                                                                    "expected_0.npy"]]),
}

# Runs several export scripts in one interpreter (importing ExecuTorch once, most of an export's
# time), each as `python3 export.py OUT_DIR` would, its output to OUT_DIR/export.log.
EXPORT_DRIVER = """
import contextlib, os, runpy, sys
for script, out_dir in zip(sys.argv[1::2], sys.argv[2::2]):
    os.makedirs(out_dir)
    with open(os.path.join(out_dir, "export.log"), "w") as log, contextlib.redirect_stdout(log):
        sys.argv = [script, out_dir]
        runpy.run_path(script, run_name="__main__")
"""


@pytest.fixture(scope="session")
def exported(prefix, work):
    """name -> a copy of that example's export, made once per content of its Python half, torch and executorch."""
    cached, missing = {}, []
    for name, (sources, outputs) in EXPORTS.items():
        example = installed_example(prefix, work, name)
        key = hashlib.sha256()
        for source in sources:
            key.update((example / source).read_bytes())
        for package in ["torch", "executorch"]:
            key.update(importlib.metadata.version(package).encode())
        cached[name] = CACHE / f"{name}-{key.hexdigest()[:16]}"
        if not all((cached[name] / f).is_file() for f in outputs):
            staging = CACHE / (cached[name].name + ".partial")
            shutil.rmtree(staging, ignore_errors=True)
            missing.append((example / "export.py", staging, cached[name]))
    if missing:
        CACHE.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-c", EXPORT_DRIVER, *(str(a) for script, staging, _ in missing for a in (script, staging))],
            cwd=work, timeout=900)
        for _, staging, target in missing:
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)
            for stale in CACHE.glob(target.name.rsplit("-", 1)[0] + "-*"):  # exports of older sources
                if stale != target:
                    shutil.rmtree(stale, ignore_errors=True)
    copies = {}
    for name, directory in cached.items():
        copies[name] = work / f"exported-{name}"
        if not copies[name].exists():
            shutil.copytree(directory, copies[name])
    return copies


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("ops_team")


@pytest.fixture(scope="session")
def build_tree_before():
    return digests(shipped_files(BUILD))


@pytest.fixture(scope="session")
def prefix(work, build_tree_before):
    root = work / "prefix"
    run(["cmake", "--install", BUILD, "--prefix", root])
    INSTALLED[root] = digests(shipped_files(root))
    return root


@pytest.fixture(scope="session")
def venv(work):
    """(python, package dir): a new venv with the etrt wheel (system site packages: numpy, torch, executorch)."""
    wheels = sorted(WHEEL_DIR.glob("etrt-*.whl"))
    assert len(wheels) == 1, f"expected one wheel in {WHEEL_DIR} (ctest fixture etrt_wheel), found {wheels}"
    root = work / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", root])
    python = root / "bin" / "python"
    run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", wheels[0]])
    package = Path(run([python, "-c", "import etrt, os; print(os.path.dirname(etrt.__file__))"],
                       cwd=work).stdout.strip())
    assert package.is_relative_to(root), package
    INSTALLED[package] = digests(shipped_files(package))
    return python, package


def installed_example(prefix, work, name):
    """An example as the installed package ships it, copied into a directory of its own."""
    source = prefix / "share" / "etrt" / "examples" / name
    assert (source / "CMakeLists.txt").is_file(), sorted(p.name for p in source.parent.iterdir())
    copy = work / name
    if not copy.exists():
        shutil.copytree(source, copy)
    return copy
