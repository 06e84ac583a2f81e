"""Names are bytes a program's (or a plugin's, or a file's) author chose, and nothing makes them UTF-8
(issue 32): a method named with other bytes once raised UnicodeDecodeError from method_names, which
every load_method consults, so none of the program's methods could be loaded. Names now cross as
os.fsdecode carries file names (surrogateescape) and are accepted back; messages quoting them are
decoded with backslashreplace."""
import os

import numpy as np
import pytest

import etrt
from etrt import devtools

from conftest import cases, run_python

BAD_NAME = "enc\udcffde"  # the bytes b"enc\xffde"


def renamed(models_dir, tmp_path, replacements, name="renamed.pte"):
    data = (models_dir / "two_methods" / "portable.pte").read_bytes()
    for old, new in replacements:
        assert len(old) == len(new) and old in data, old
        data = data.replace(old, new)
    path = tmp_path / name
    path.write_bytes(data)
    return path


def check_runs(method, models_dir, name):
    for case, inputs, expected, tolerance in cases(models_dir / "two_methods", name):
        for got, want in zip(method.execute(inputs), expected):
            np.testing.assert_allclose(got, want, rtol=tolerance["rtol"], atol=tolerance["atol"], err_msg=case)


def test_a_method_name_that_is_not_utf8_leaves_the_program_usable(models_dir, tmp_path):
    program = etrt.Runtime.get().load_program(renamed(models_dir, tmp_path, [(b"encode", b"enc\xffde")]))
    assert program.method_names == {"forward", BAD_NAME}
    check_runs(program.load_method("forward"), models_dir, "forward")
    # The odd name is reachable as method_names gives it, and as its bytes.
    encode = program.load_method(BAD_NAME)
    check_runs(encode, models_dir, "encode")
    assert program.load_method(b"enc\xffde") is encode
    assert program.metadata(b"enc\xffde").num_inputs() == 1
    assert program.metadata(BAD_NAME).input_tensor_meta(0).sizes() == (3, 16)
    assert "aten::tanh.out" in program.operators(BAD_NAME)
    # A name the program lacks: KeyError from load_method (as executorch), and a readable error that shows the byte.
    with pytest.raises(KeyError) as missing:
        program.load_method("enc\udcfede")
    assert missing.value.args[0].startswith("'enc\\udcfede': the program has no such method"), missing.value
    with pytest.raises(etrt.Error, match=r"no method named 'enc\\xfede'"):
        program.metadata("enc\udcfede")


def test_names_that_cannot_name_a_method_are_refused_clearly(models_dir, tmp_path):
    program = etrt.Runtime.get().load_program(models_dir / "two_methods" / "portable.pte")
    with pytest.raises(etrt.Error, match="contains a NUL character"):
        program.metadata("forward\x00encode")
    with pytest.raises(etrt.Error, match="has a lone surrogate"):
        program.metadata("forward\ud800")  # no byte decodes to it
    with pytest.raises(etrt.Error, match="must be a str or bytes, got int"):
        program.metadata(7)


def test_operator_and_method_names_that_are_not_utf8_reach_devtools(models_dir, tmp_path):
    path = renamed(models_dir, tmp_path, [(b"encode", b"\xfe\xffcode"), (b"aten::tanh", b"aten::t\xe9nh")])
    plan = devtools.program_plan(path)
    assert set(plan) == {"forward", "\udcfe\udcffcode"}
    names = {entry["name"] for entry in plan["\udcfe\udcffcode"]}
    assert "aten::t\udce9nh.out" in names, names
    assert devtools.provider_of("aten::t\udce9nh.out")["plugin"] is None
    assert devtools.missing_providers(path) == ["aten::t\udce9nh.out"]
    program = etrt.Runtime.get().load_program(path)
    assert "aten::t\udce9nh.out" in program.operators("\udcfe\udcffcode")
    with pytest.raises(etrt.Error, match=r"aten::t\\xe9nh\.out"):  # no plugin provides it: named readably
        program.load_method("forward")


def test_plugin_file_names_that_are_not_utf8_are_reported(tmp_path):
    # A drop-in whose file name is not UTF-8 in a directory of ETRT_PLUGIN_PATH: the loader's reports
    # (plugins, rejections, the JSON report) once raised UnicodeDecodeError.
    directory = tmp_path / "plugins"
    directory.mkdir()
    with open(bytes(directory) + b"/libodd\xff.so", "wb") as drop_in:
        drop_in.write(b"not an ELF file")
    code = r"""
import json, os, etrt
problems = etrt._etrt.load_all_plugins()
assert "libodd\\xff.so: " in problems, problems  # the message shows the byte
paths = [path for path, reason in etrt.rejections() if "libodd" in path]
assert paths and all(os.fsencode(path).endswith(b"/libodd\xff.so") for path in paths), etrt.rejections()
report = json.loads(etrt.report())
assert any(os.fsencode(r["path"]).endswith(b"/libodd\xff.so") for r in report["rejected"]), report["rejected"]
assert all(isinstance(p["library_path"], str) for p in etrt.plugins())
print("reported")
"""
    result = run_python(code, cwd=tmp_path, env={"ETRT_PLUGIN_PATH": str(directory), "ETRT_LOG_LEVEL": "off"})
    assert "reported" in result.stdout
