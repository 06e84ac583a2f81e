"""The files scripts/build_wheel.sh hands to a package index: the repaired wheel
(its manylinux tag, auditwheel's own verdict, what it ships and needs) and the
sdist it was built from. ETRT_WHEEL_DIST names the directory holding both."""
import os
import platform
import re
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

DIST = Path(os.environ.get("ETRT_WHEEL_DIST", "dist"))
# What every manylinux policy lets a wheel take from the system (PEP 600 / auditwheel's policies).
SYSTEM_SONAMES = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2",
                  "librt.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
# The Debian libraries the wheel must never need by name.
FORBIDDEN = re.compile(r"lib(spdlog|fmt|XNNPACK|pthreadpool|cpuinfo)\.so(\.[0-9.]+)?$")
PRIVATE_FILES = ("etrt/lib/etrt/private/libcpuinfo.so.0.etrt",
                 "etrt/lib/etrt/plugins/xnnpack_private/libcpuinfo.so.0.etrt",
                 "etrt/lib/etrt/plugins/xnnpack_private/libXNNPACK.so.0.etrt",
                 "etrt/lib/etrt/plugins/xnnpack_private/libetrt_pthreadpool_shim.so.1")


def single(pattern):
    found = sorted(DIST.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {DIST}, found {found}"
    return found[0]


@pytest.fixture(scope="module")
def wheel():
    return single("etrt-*.whl")


@pytest.fixture(scope="module")
def unpacked(wheel, tmp_path_factory):
    root = tmp_path_factory.mktemp("wheel")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(root)
    return root


def wheel_platform_tag(wheel):
    # name-version-python-abi-platform.whl
    return wheel.name[:-len(".whl")].split("-")[4]


def needed(path):
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out)


def test_the_wheel_is_tagged_manylinux(wheel):
    tag = wheel_platform_tag(wheel)
    assert re.fullmatch(rf"manylinux_2_\d+_{platform.machine()}", tag), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/WHEEL"))).decode()
    tags = re.findall(r"^Tag: (\S+)$", metadata, re.M)
    assert tags and all(t.endswith("-" + tag) for t in tags), metadata
    assert "Root-Is-Purelib: false" in metadata


def test_auditwheel_agrees_with_the_tag(wheel):
    out = subprocess.run(["auditwheel", "show", str(wheel)], capture_output=True, text=True, check=True).stdout
    text = " ".join(out.split())
    match = re.search(r'is consistent with the following platform tag: "([^"]+)"', text)
    assert match, out
    assert match.group(1) == wheel_platform_tag(wheel), out


def test_nothing_was_grafted_and_nothing_external_is_needed(unpacked):
    # auditwheel copies in (grafts) any library a wheel needs beyond its policy; every one etrt needs is its own.
    assert not [p for p in unpacked.iterdir() if p.name.endswith(".libs")], sorted(os.listdir(unpacked))
    shipped = set()
    elves = []
    for path in unpacked.rglob("*"):
        if path.is_file() and path.read_bytes()[:4] == b"\x7fELF":
            elves.append(path)
            shipped.add(path.name)
    assert len(elves) >= 8, elves
    for path in elves:
        for name in needed(path):
            assert not FORBIDDEN.search(name), f"{path.relative_to(unpacked)} needs {name}"
            assert name in SYSTEM_SONAMES or name in shipped, f"{path.relative_to(unpacked)} needs {name}"


def test_private_libraries_are_shipped(unpacked):
    for name in PRIVATE_FILES:
        assert (unpacked / name).is_file(), name
    xnnpack = needed(unpacked / PRIVATE_FILES[2])
    assert "libetrt_pthreadpool_shim.so.1" in xnnpack and "libcpuinfo.so.0.etrt" in xnnpack, xnnpack
    libetrt = needed(unpacked / "etrt/lib/libetrt.so.1")
    assert set(libetrt) <= SYSTEM_SONAMES, libetrt


def test_the_sdist_holds_the_sources_and_no_build_output():
    sdist = single("etrt-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    for required in ("pyproject.toml", "CMakeLists.txt", "core/CMakeLists.txt", "python/etrt/__init__.py",
                     "plugins/xnnpack/xnn_library.cpp", "cmake/EtrtPrivateLibraries.cmake", "PKG-INFO"):
        assert required in names, required
    assert not [n for n in names if n.startswith(("build/", "dist/"))]
