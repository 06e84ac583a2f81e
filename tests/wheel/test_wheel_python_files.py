"""The Python side of the repaired wheel (ETRT_WHEEL_DIST): type stubs and the PEP 561 marker are in it,
and no byte code -- not beside the package's modules, not under share/etrt/examples (pip compiles what
it installs on the user's machine; a wheel carrying .pyc files would ship this machine's)."""
import os
import zipfile
from pathlib import Path

DIST = Path(os.environ.get("ETRT_WHEEL_DIST", "dist"))


def wheel_names():
    (wheel,) = sorted(DIST.glob("etrt-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheel_holds_no_byte_code():
    names = wheel_names()
    assert any(n.startswith("etrt/share/etrt/examples/custom_op/") for n in names), "the examples are missing"
    compiled = [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".pyo"))]
    assert compiled == [], compiled


def test_the_wheel_ships_type_stubs():
    names = set(wheel_names())
    assert {"etrt/py.typed", "etrt/_etrt.pyi", "etrt/_devtools.pyi"} <= names, sorted(n for n in names if "pyi" in n)
