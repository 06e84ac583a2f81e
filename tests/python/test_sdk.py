"""The installed package: layout, relocation-free default manifests, and an
out-of-tree plugin and host built against it with find_package(etrt)."""
import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

BUILD = Path(os.environ["ETRT_BUILD_DIR"])
SOURCE = Path(os.environ["ETRT_SOURCE_DIR"])


def run(cmd, **kwargs):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETRT_")}
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, **kwargs)
    assert result.returncode == 0, f"{cmd} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    root = tmp_path_factory.mktemp("etrt_install")
    run(["cmake", "--install", str(BUILD), "--prefix", str(root)])
    return root


def test_installed_layout_and_manifest_hash(prefix):
    lib = prefix / "lib"
    assert (lib / "libetrt.so.1").is_file()
    plugin = lib / "etrt" / "plugins" / "libetrt_kernels_optimized.so.1"
    manifest = json.loads((lib / "etrt" / "manifests" / "kernels_optimized.json").read_text())
    assert (lib / "etrt" / "manifests" / manifest["library"]).resolve() == plugin.resolve()
    assert manifest["sha256"] == hashlib.sha256(plugin.read_bytes()).hexdigest()
    for header in ["plugin_api.h", "plugin.hpp", "kernel.hpp", "kernel_types.hpp", "etrt.h", "etrt.hpp"]:
        assert (prefix / "include" / "etrt" / header).is_file(), header
    assert (lib / "cmake" / "etrt" / "etrtConfig.cmake").is_file()


def test_installed_tool_finds_the_installed_defaults(prefix):
    data = json.loads(run([str(prefix / "bin" / "etrt"), "plugins", "--json", "--load-all"]).stdout)
    assert data["manifests"] == [str((prefix / "lib" / "etrt" / "manifests").resolve())]
    kernels = next(p for p in data["plugins"] if p["name"] == "kernels_optimized")
    assert kernels["state"] == "loaded", kernels["failure"]
    assert kernels["library"].startswith(str(prefix.resolve()))


def test_out_of_tree_plugin_and_host_build_against_the_installed_sdk(prefix, tmp_path):
    build = tmp_path / "example"
    run(["cmake", "-S", str(SOURCE / "examples" / "out_of_tree"), "-B", str(build), "-G", "Ninja",
         f"-DCMAKE_PREFIX_PATH={prefix}"])
    run(["cmake", "--build", str(build)])
    plugin = build / "libetrt_square_op.so.1"
    symbols = run(["nm", "-D", "--defined-only", str(plugin)]).stdout.split()
    assert "et_plugin_entry" in symbols and not any(s.startswith("_Z") for s in symbols)
    needed = [line for line in run(["readelf", "-d", str(plugin)]).stdout.splitlines() if "(NEEDED)" in line]
    assert needed and not any("libetrt" in line for line in needed), needed  # plugins never link libetrt
    out = run([str(build / "square_host"), str(build / "square_op.json")]).stdout
    assert out.splitlines()[0].split() == ["1", "4", "9", "16"]
    assert "loaded: square_op 1.0.0" in out
