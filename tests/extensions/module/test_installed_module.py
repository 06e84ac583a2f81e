"""etrt's C++ Module from the installed package: find_package(etrt) gives etrt::module, and a host
written as ExecuTorch's documentation writes one (executorch_style_host/host.cpp, only includes and
namespaces changed) builds with C++17 and runs a program, writing an ETDump ExecuTorch's reader parses."""
import os
import subprocess
from pathlib import Path

import pytest

BUILD = Path(os.environ["ETRT_BUILD_DIR"])
SOURCE = Path(os.environ["ETRT_SOURCE_DIR"])


def run(cmd, **kwargs):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETRT_")}
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, timeout=900, **kwargs)
    assert result.returncode == 0, f"{cmd} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    root = tmp_path_factory.mktemp("etrt_install")
    run(["cmake", "--install", BUILD, "--prefix", root])
    return root


def test_the_module_headers_are_installed(prefix):
    for header in ("module.h", "tensor.h", "evalue.h", "result.h", "method_meta.h", "etdump.h"):
        assert (prefix / "include" / "etrt" / "module" / header).is_file(), header


def test_an_executorch_style_host_builds_and_runs(prefix, tmp_path):
    build = tmp_path / "host"
    run(["cmake", "-S", SOURCE / "tests" / "extensions" / "module" / "executorch_style_host", "-B", build, "-G", "Ninja",
         f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_BUILD_RPATH={prefix / 'lib'}"])
    run(["cmake", "--build", build])
    etdump = tmp_path / "trace.etdump"
    out = run([build / "host", SOURCE / "tests" / "models" / "generated" / "op_add" / "portable.pte", etdump])
    assert out.stdout.strip() == "ok"

    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

    dump = deserialize_from_etdump_flatcc(etdump.read_bytes())
    assert len(dump.run_data) >= 1
