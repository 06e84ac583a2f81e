"""`etrt plugins` and the shipped manifests, checked from outside the process."""
import json
import os
import subprocess
from pathlib import Path

import jsonschema

BUILD = Path(os.environ["ETRT_BUILD_DIR"])
SOURCE = Path(os.environ["ETRT_SOURCE_DIR"])
TEST_MANIFESTS = Path(os.environ["ETRT_TEST_MANIFEST_DIR"])
ETRT = BUILD / "bin" / "etrt"


def run(*args, env_extra=None, timeout=60):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETRT_")}
    env.update(env_extra or {})
    return subprocess.run([str(ETRT), *args], capture_output=True, text=True, env=env, timeout=timeout)


def report(*args, env_extra=None):
    result = run("plugins", "--json", *args, env_extra=env_extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_default_manifests_are_found_beside_libetrt_and_nothing_is_loaded():
    data = report()
    assert data["manifests"] == [str(BUILD / "lib" / "etrt" / "manifests")]
    kernels = [p for p in data["plugins"] if p["name"] == "kernels_optimized"]
    assert len(kernels) == 1
    assert kernels[0]["state"] == "declared"
    assert kernels[0]["load_count"] == 0
    assert "aten::add.out" in kernels[0]["declares"]["operators"]
    assert data["operators"] == []  # nothing registered until something is loaded


def test_load_all_registers_what_the_manifest_declares_without_warnings():
    data = report("--load-all")
    kernels = next(p for p in data["plugins"] if p["name"] == "kernels_optimized")
    assert kernels["state"] == "loaded"
    assert kernels["abi"] == f"{data['host_abi']['major']}.{data['host_abi']['max_minor']}"
    assert kernels["warnings"] == []  # manifest and registrations agree
    registered = sorted(o["name"] for o in data["operators"] if o["plugin"] == "kernels_optimized")
    assert registered == sorted(kernels["declares"]["operators"])
    assert data["rejected"] == []


def test_text_output_explains_losers_and_rejections():
    result = run("plugins", "--load-all", "--manifest", str(TEST_MANIFESTS))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Manifests searched (in order):" in out
    assert str(TEST_MANIFESTS) in out
    assert "test::dup_op from 'test_dup_low': priority 10 is lower than 50 of plugin 'test_dup_high'" in out
    assert "Rejected:" in out
    assert "plugin speaks ABI 2.0" in out
    assert "does not export the entry symbol" in out
    assert "simulated failure" in out


def test_json_lists_every_rejection_with_its_reason():
    data = report("--load-all", "--manifest", str(TEST_MANIFESTS))
    reasons = {Path(r["path"]).name: r["reason"] for r in data["rejected"]}
    assert "ABI 2.0" in reasons["libetrt_test_newer_major.so.1"]
    assert "init failed" in reasons["libetrt_test_init_fails.so.1"]
    losers = [o for o in data["operators"] if not o["selected"]]
    assert [(o["name"], o["plugin"]) for o in losers] == [("test::dup_op", "test_dup_low")]


def test_environment_plugin_path_is_searched_before_defaults():
    data = report(env_extra={"ETRT_PLUGIN_PATH": str(TEST_MANIFESTS)})
    assert data["manifests"] == [str(TEST_MANIFESTS), str(BUILD / "lib" / "etrt" / "manifests")]


def test_a_fifo_named_like_a_drop_in_plugin_is_refused_without_blocking(tmp_path):
    # A FIFO "*.so" in a directory ETRT_PLUGIN_PATH names is a drop-in to inspect when plugins are loaded
    # (as an operator miss does); opening it once blocked the loader for good (run() gives up after 60 s).
    os.mkfifo(tmp_path / "libfifo.so")
    data = report("--load-all", env_extra={"ETRT_PLUGIN_PATH": str(tmp_path)})
    reasons = {Path(r["path"]).name: r["reason"] for r in data["rejected"]}
    assert "not a regular file" in reasons.get("libfifo.so", ""), data["rejected"]
    assert next(p for p in data["plugins"] if p["name"] == "kernels_optimized")["state"] == "loaded"


def test_log_level_from_environment():
    quiet = run("plugins", "--load-all")
    assert "loaded plugin" not in quiet.stderr
    loud = run("plugins", "--load-all", env_extra={"ETRT_LOG_LEVEL": "info"})
    assert "loaded plugin 'kernels_optimized'" in loud.stderr


def test_unknown_command_and_option_fail_with_usage():
    assert run("frobnicate").returncode == 2
    bad = run("plugins", "--frobnicate")
    assert bad.returncode == 2 and "unknown option" in bad.stderr


def test_manifests_validate_against_the_schema_with_an_independent_validator():
    schema = json.loads((SOURCE / "manifests" / "schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    manifests = list((BUILD / "lib" / "etrt" / "manifests").glob("*.json"))
    manifests += [m for m in TEST_MANIFESTS.glob("*.json")]
    assert len(manifests) > 10
    for manifest in manifests:
        jsonschema.validate(json.loads(manifest.read_text()), schema)


MODELS = SOURCE / "tests" / "models" / "generated"


def test_inspect_names_the_plugin_serving_each_operator_without_loading_it():
    result = run("inspect", str(MODELS / "op_add" / "portable.pte"))
    assert result.returncode == 0, result.stderr
    assert "method 'broadcast'" in result.stdout and "method 'rank0'" in result.stdout
    assert "input 1: float32 [3, 1], static" in result.stdout
    line = next(l for l in result.stdout.splitlines() if "aten::add.out" in l)
    assert line.split()[-1] == "kernels_optimized"  # declared, not "(loaded)": inspect loads nothing


def test_inspect_flags_missing_providers():
    result = run("inspect", str(SOURCE / "tests" / "program" / "corrupt" / "unknown_operator.pte"))
    assert result.returncode == 1
    line = next(l for l in result.stdout.splitlines() if "custom::nope.out" in l)
    assert "MISSING: no plugin provides it" in line
    assert "loading this program will fail" in result.stdout


def test_run_reports_outputs_latency_and_plugins(tmp_path):
    import numpy as np
    with np.load(MODELS / "op_add" / "inputs_forward.npz") as data:
        np.save(tmp_path / "a.npy", data["input_0"])
        np.save(tmp_path / "b.npy", data["input_1"])
    result = run("run", str(MODELS / "op_add" / "portable.pte"), "--input", str(tmp_path / "a.npy"),
                 "--input", str(tmp_path / "b.npy"), "--iterations", "5", "--output-dir", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "output 0: float32 [3, 5]" in result.stdout
    assert "latency over 5 runs: min" in result.stdout
    assert "plugins loaded: kernels_optimized" in result.stdout
    with np.load(MODELS / "op_add" / "expected_forward.npz") as expected:
        assert np.allclose(np.load(tmp_path / "out" / "output_0.npy"), expected["output_0"], rtol=1e-4, atol=1e-5)


def test_run_rejects_wrong_inputs_with_a_clear_message(tmp_path):
    import numpy as np
    np.save(tmp_path / "wrong.npy", np.zeros((4, 5), np.float32))
    np.save(tmp_path / "ok.npy", np.zeros((3, 5), np.float32))
    result = run("run", str(MODELS / "op_add" / "portable.pte"), "--input", str(tmp_path / "wrong.npy"),
                 "--input", str(tmp_path / "ok.npy"))
    assert result.returncode == 1
    assert "input 0: shape [4, 5] does not fit the program's static shape [3, 5]" in result.stderr
    one = run("run", str(MODELS / "op_add" / "portable.pte"), "--input", str(tmp_path / "ok.npy"))
    assert one.returncode == 1 and "takes 2 inputs, 1 given" in one.stderr
    missing = run("run", str(tmp_path / "nothing.pte"))
    assert missing.returncode == 1 and "cannot open" in missing.stderr


def test_layout_ops_on_constants_run_once_at_load(tmp_path):
    # nn.Linear exports as permute_copy(weight) + addmm: the three weight transposes of the MLP are
    # computed when the method loads, and every run still matches eager PyTorch.
    import numpy as np
    with np.load(MODELS / "mlp" / "inputs.npz") as data:
        np.save(tmp_path / "x.npy", data["input_0"])
    result = run("run", str(MODELS / "mlp" / "portable.pte"), "--input", str(tmp_path / "x.npy"),
                 "--iterations", "3", "--output-dir", str(tmp_path / "out"), env_extra={"ETRT_LOG_LEVEL": "debug"})
    assert result.returncode == 0, result.stderr
    logs = result.stdout + result.stderr
    assert "method 'forward': computed 3 instruction(s) on constants at load" in logs, logs
    with np.load(MODELS / "mlp" / "expected.npz") as expected:
        assert np.allclose(np.load(tmp_path / "out" / "output_0.npy"), expected["output_0"], rtol=1e-4, atol=1e-5)
    # The delegated program has no such instruction left outside XNNPACK.
    delegated = run("run", str(MODELS / "mlp" / "xnnpack.pte"), "--input", str(tmp_path / "x.npy"),
                    env_extra={"ETRT_LOG_LEVEL": "debug"})
    assert delegated.returncode == 0, delegated.stderr
    assert "on constants at load" not in delegated.stdout + delegated.stderr


def npy_bytes(header, data=b"", version=1):
    """A .npy file with the given header text, padded as NumPy pads it."""
    text = header.encode("latin1")
    prefix = 10 if version == 1 else 12
    text += b" " * ((64 - (prefix + len(text) + 1) % 64) % 64) + b"\n"
    size = len(text).to_bytes(2 if version == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([version, 0]) + size + text + data


def test_inspect_and_run_name_the_same_provider_the_priority_chose():
    # A plugin declaring aten::relu.out at priority 200 (test_relu_200; its kernel only reports a tag, so a
    # float program's relu fails in it, naming it) outranks kernels_optimized (100). mlp loads
    # kernels_optimized for permute_copy and addmm before it reaches relu: run once took kernels_optimized's
    # relu then, while inspect named test_relu_200. The manifest's priority decides both.
    env = {"ETRT_PLUGIN_PATH": os.environ["ETRT_TEST_RELU_MANIFEST_DIR"]}
    program = str(MODELS / "mlp" / "portable.pte")
    inspected = run("inspect", program, env_extra=env)
    assert inspected.returncode == 0, inspected.stderr
    providers = dict(line.split() for line in inspected.stdout.splitlines() if line.strip().startswith("aten::"))
    assert providers["aten::relu.out"] == "test_relu_200", inspected.stdout
    assert providers["aten::addmm.out"] == "kernels_optimized", inspected.stdout
    ran = run("run", program, env_extra=env)
    assert ran.returncode != 0
    assert "(aten::relu.out, served by 'test_relu_200'): test kernel: last argument must be an int64 tensor" \
        in ran.stderr, ran.stderr


def test_run_refuses_malformed_npy_headers_with_a_clear_message(tmp_path):
    # Each once aborted (uncaught std::stoll), looped forever growing memory, or misreported the size.
    cases = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 32 }": "expected ',' or ')' in the shape",
        "{'descr': '<f4', 'fortran_order': False, 'shape': 45}": "expected '('",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -128), }": "negative dimension",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }": "dimension too large",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }": "element count overflows",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (3074457345618258603,), }": "byte size overflows",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (" + "1," * 17 + "), }": "more than 16 dimensions",
        "{'descr': '<f4', 'fortran_order': False, }": "header lacks 'shape'",
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }": "'descr' given twice",
        "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3, 5), }": "expected True or False",
        "{'descr': '<f4, 'fortran_order': False, 'shape': (3, 5), }": "expected ',' or '}'",
        "{'descr': '<c8', 'fortran_order': False, 'shape': (3, 5), }": "unsupported dtype '<c8'",
        "{'descr': '|f4', 'fortran_order': False, 'shape': (3, 5), }": "unsupported dtype '|f4'",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), } trailing": "unexpected text after",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), 'extra': 1}": "unexpected key 'extra'",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }": "has 0 data bytes, shape needs 60",
    }
    for index, (header, message) in enumerate(cases.items()):
        path = tmp_path / f"bad{index}.npy"
        path.write_bytes(npy_bytes(header))
        result = run("run", str(MODELS / "op_add" / "portable.pte"), "--input", str(path), "--input", str(path),
                     timeout=20)
        assert result.returncode == 1, (header, result.returncode, result.stderr)
        assert f"{path}: " in result.stderr and message in result.stderr, (header, result.stderr)
    truncated = tmp_path / "truncated.npy"
    truncated.write_bytes(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }")[:40])
    result = run("run", str(MODELS / "op_add" / "portable.pte"), "--input", str(truncated), "--input", str(truncated))
    assert result.returncode == 1 and "truncated header" in result.stderr, result.stderr
    folder = tmp_path / "folder.npy"
    folder.mkdir()
    result = run("run", str(MODELS / "op_add" / "portable.pte"), "--input", str(folder), "--input", str(folder))
    assert result.returncode == 1 and "not a regular file" in result.stderr, result.stderr


def test_run_reads_big_endian_and_version_2_npy_files(tmp_path):
    import numpy as np
    with np.load(MODELS / "op_add" / "inputs_forward.npz") as data:
        a, b = data["input_0"], data["input_1"]
    np.save(tmp_path / "a.npy", a.astype(">f4"))
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (tuple(b.shape),)
    (tmp_path / "b.npy").write_bytes(npy_bytes(header, b.astype("<f4").tobytes(), version=2))
    result = run("run", str(MODELS / "op_add" / "portable.pte"), "--input", str(tmp_path / "a.npy"),
                 "--input", str(tmp_path / "b.npy"), "--iterations", "1", "--output-dir", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    with np.load(MODELS / "op_add" / "expected_forward.npz") as expected:
        assert np.allclose(np.load(tmp_path / "out" / "output_0.npy"), expected["output_0"], rtol=1e-4, atol=1e-5)


def test_run_reports_an_output_dir_it_cannot_create(tmp_path):
    # A file where the directory should be, or on its path: once an uncaught filesystem_error (abort).
    (tmp_path / "afile").write_text("x")
    for target, message in [(tmp_path / "afile", "exists and is not a directory"),
                            (tmp_path / "afile" / "sub", "cannot create the directory")]:
        result = run("run", str(MODELS / "op_add" / "portable.pte"), "--iterations", "1", "--output-dir", str(target))
        assert result.returncode == 1, (target, result.returncode, result.stderr)
        assert f"--output-dir {target}: {message}" in result.stderr, result.stderr
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        result = run("run", str(MODELS / "op_add" / "portable.pte"), "--iterations", "1",
                     "--output-dir", str(locked / "out"))
        assert result.returncode == 1 and "cannot create the directory" in result.stderr, result.stderr


def test_run_with_weights_in_a_data_file():
    data = SOURCE / "tests" / "data_file" / "generated"
    missing = run("run", str(data / "linear_portable.pte"))
    assert missing.returncode != 0
    assert "external tensor 'l1.weight' not found" in missing.stderr
    for name in ("linear_portable", "linear_xnnpack"):
        result = run("run", str(data / f"{name}.pte"), "--data", str(data / f"{name}.ptd"),
                     "--input", str(data / "input.npy"))
        assert result.returncode == 0, result.stderr
        assert "float32 [2, 4]" in result.stdout


def test_memory_and_file_limits_are_configurable():
    mlp = SOURCE / "tests" / "models" / "generated" / "mlp" / "portable.pte"
    result = run("run", str(mlp), env_extra={"ETRT_MAX_PLANNED_MEMORY": "1K"})
    assert result.returncode != 0
    assert "more than the 1 KiB limit (raise it with ETRT_MAX_PLANNED_MEMORY)" in result.stderr
    result = run("run", str(mlp), env_extra={"ETRT_MAX_FILE_SIZE": "1k"})
    assert result.returncode != 0
    assert "larger than the 1 KiB limit (raise it with ETRT_MAX_FILE_SIZE)" in result.stderr
    # Raised, or malformed (a warning, then the default): the program runs.
    assert run("run", str(mlp), env_extra={"ETRT_MAX_PLANNED_MEMORY": "1.5G"}).returncode == 0
    result = run("run", str(mlp), env_extra={"ETRT_MAX_FILE_SIZE": "lots", "ETRT_LOG_LEVEL": "warn"})
    assert result.returncode == 0, result.stderr
    assert "ETRT_MAX_FILE_SIZE='lots' is not a byte size" in result.stderr


def test_run_takes_and_writes_bfloat16_as_float32(tmp_path):
    # NumPy has no bfloat16 (the zoo's sdpa model takes bfloat16 inputs): the command takes them
    # as float32 .npy, rounded to nearest even, and writes bfloat16 outputs as float32 (exact).
    import numpy as np
    x = np.array([[1.5, -2.0, 0.25], [3.0, 1.0 + 2.0 ** -8, -1.0 - 3 * 2.0 ** -8]], np.float32)
    np.save(tmp_path / "x.npy", x)
    result = run("run", str(SOURCE / "tests" / "python_package" / "programs" / "bfloat16_identity.pte"),
                 "--input", str(tmp_path / "x.npy"), "--output-dir", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "output 0: bfloat16 [2, 3]" in result.stdout
    out = np.load(tmp_path / "out" / "output_0.npy")
    assert out.dtype == np.float32
    # bfloat16 steps by 2^-7 above 1: 1 + 2^-8 ties between 1 and 1 + 2^-7 and goes to the even 1;
    # 1 + 3*2^-8 ties between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
    assert out.tolist() == [[1.5, -2.0, 0.25], [3.0, 1.0, -1.0 - 2.0 ** -6]]


def test_plugins_shows_the_cpu_level_chosen_and_why():
    forced = run("plugins", env_extra={"ETRT_CPU_LEVEL": "x86-64"})
    assert forced.returncode == 0, forced.stderr
    manifest = json.loads((BUILD / "lib" / "etrt" / "manifests" / "kernels_optimized.json").read_text())
    levels = ", ".join([manifest["cpu_level"], *(v["cpu_level"] for v in manifest.get("variants", []))])
    assert f"CPU level: x86-64 — chosen from {levels}; ETRT_CPU_LEVEL=x86-64" in forced.stdout, forced.stdout
    data = report()
    kernels = next(p for p in data["plugins"] if p["name"] == "kernels_optimized")
    assert kernels["cpu_level"] in levels.split(", ")
    assert kernels["cpu_level_reason"].startswith(f"chosen from {levels}; this CPU runs up to ")


def test_a_bad_cpu_level_setting_is_rejected_naming_the_variable():
    result = run("plugins", env_extra={"ETRT_CPU_LEVEL": "x86-64-v9"})
    assert result.returncode == 0, result.stderr
    assert "ETRT_CPU_LEVEL=x86-64-v9: unknown CPU level" in result.stdout, result.stdout
    assert "FAILED" in result.stdout


def patched_program(tmp_path, source, replacements, name="patched.pte"):
    """A copy of a reference program with strings replaced by others of the same length (the flatbuffer's
    offsets stay valid: only the names' bytes change)."""
    data = source.read_bytes()
    for old, new in replacements:
        assert len(old) == len(new) and old in data, (old, new)
        data = data.replace(old, new)
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_names_from_a_program_reach_the_terminal_escaped(tmp_path):
    # A method or operator name is bytes the program's author chose: inspect and run once printed them
    # raw, so a name could clear the screen, retitle the terminal or reverse the text around it.
    program = patched_program(tmp_path, MODELS / "op_add" / "portable.pte", [
        (b"rank0", b"\x1b[31m"),                                 # an escape sequence (ESC)
        (b"broadcast", b"\xe2\x80\xaebr\xff\xc2\x9b\x07"),       # U+202E, invalid UTF-8, C1 CSI, BEL
        (b"aten::add", b"aten\x1b]0;X"),                         # an operator: OSC "set the title"
    ])
    inspected = run("inspect", str(program))
    assert inspected.returncode == 1, inspected.stderr  # the renamed operator has no provider
    out = inspected.stdout
    assert "method '\\x1b[31m': 1 instruction," in out, out
    assert "method '\\u202ebr\\xff\\u009b\\x07': 1 instruction," in out, out
    assert "    aten\\x1b]0;X.out " in out and "MISSING: no plugin provides it" in out, out
    ran = run("run", str(program), "--method", "forward")
    assert ran.returncode == 1
    assert "operator 'aten\\x1b]0;X.out' is not provided by any plugin" in ran.stderr, ran.stderr
    for text in (out, ran.stdout, ran.stderr):
        assert not any(c in text for c in "\x1b\x07\x9b\u202e\ufffd"), repr(text)
    # A multi-line message keeps its lines; a backslash in a name is doubled, so escapes stay unambiguous.
    assert ":\n  operator 'aten\\x1b]0;X.out'" in ran.stderr, ran.stderr
    backslash = patched_program(tmp_path, MODELS / "op_add" / "portable.pte", [(b"rank0", b"ra\\k0")], "b.pte")
    assert "method 'ra\\\\k0'" in run("inspect", str(backslash)).stdout


def test_a_delegate_id_from_a_program_reaches_the_terminal_escaped(tmp_path):
    program = patched_program(tmp_path, MODELS / "mlp" / "xnnpack.pte", [(b"XnnpackBackend", b"Xnn\x1b[2Jckend\r\n")])
    inspected = run("inspect", str(program))
    assert inspected.returncode == 1
    line = next(l for l in inspected.stdout.splitlines() if l.startswith("    Xnn"))
    assert line.split()[0] == "Xnn\\x1b[2Jckend\\r\\n" and "MISSING" in line, inspected.stdout
    assert "\x1b" not in inspected.stdout and "\r" not in inspected.stdout


def op_add_run(out_dir, *extra, **kwargs):
    return run("run", str(MODELS / "op_add" / "portable.pte"), "--iterations", "1", "--output-dir", str(out_dir),
               *extra, **kwargs)


def op_add_run_with_file_size_limit(out_dir, limit):
    """op_add_run with RLIMIT_FSIZE set in the child (Python's subprocess restores SIGXFSZ's default there)."""
    def set_limit():
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETRT_")}
    return subprocess.run([str(ETRT), "run", str(MODELS / "op_add" / "portable.pte"), "--iterations", "1",
                           "--output-dir", str(out_dir)], capture_output=True, text=True, env=env, timeout=60,
                          preexec_fn=set_limit)


def test_an_output_that_does_not_fit_leaves_no_truncated_file(tmp_path):
    # The file size limit (ulimit -f) fails the write part way: once SIGXFSZ killed the command and a
    # 100-byte output_0.npy stayed behind.
    out = tmp_path / "out"
    out.mkdir()
    result = op_add_run_with_file_size_limit(out, 100)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert f"{out}/output_0.npy: cannot write: File too large (nothing written: no file left behind)" in result.stderr
    assert list(out.iterdir()) == []  # neither the output nor a temporary file
    # An earlier complete output stays as it was when a new one cannot be written.
    assert op_add_run(out).returncode == 0
    before = (out / "output_0.npy").read_bytes()
    result = op_add_run_with_file_size_limit(out, 100)
    assert result.returncode == 1 and "its old contents are kept" in result.stderr, result.stderr
    assert (out / "output_0.npy").read_bytes() == before
    assert [p.name for p in out.iterdir()] == ["output_0.npy"]


def test_a_full_disk_is_reported_and_leaves_no_truncated_file(tmp_path):
    # A real full file system: a 4 KiB tmpfs, filled, mounted in a mount namespace of the command's own.
    # The command once wrote an empty output_0.npy and exited 0 (the stream's error was never checked).
    if os.geteuid() != 0 or subprocess.run(["unshare", "--mount", "true"], capture_output=True).returncode != 0:
        import pytest
        pytest.skip("mounting a tmpfs needs root and a mount namespace")
    disk = tmp_path / "disk"
    disk.mkdir()
    script = ('mount -t tmpfs -o size=4k tmpfs "$1" && mkdir "$1/out" && head -c 4096 /dev/zero > "$1/filler"; '
              'shift; "$@"; status=$?; echo LISTING; ls -A "$DISK/out"; exit $status')
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETRT_")}
    env["DISK"] = str(disk)
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(disk),
                             str(ETRT), "run", str(MODELS / "mlp" / "portable.pte"), "--iterations", "1",
                             "--output-dir", str(disk / "out")], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert f"{disk}/out/output_0.npy: cannot write: No space left on device" in result.stderr, result.stderr
    assert result.stdout.split("LISTING\n")[1] == "", result.stdout  # nothing left in the directory
    assert "outputs written" not in result.stdout


def test_a_symbolic_link_planted_in_the_output_dir_is_not_followed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (out / "output_0.npy").symlink_to(victim)
    result = op_add_run(out)
    assert result.returncode == 1
    assert f"{out}/output_0.npy: is a symbolic link; refusing to write through it" in result.stderr, result.stderr
    assert victim.read_text() == "precious"
    assert (out / "output_0.npy").is_symlink() and sorted(p.name for p in out.iterdir()) == ["output_0.npy"]
    # The same for the tracer's files, and for a link to nothing (which writing would create).
    (tmp_path / "trace.json").symlink_to(tmp_path / "nowhere")
    traced = run("run", str(MODELS / "op_add" / "portable.pte"), "--iterations", "1", "--trace", str(tmp_path / "trace.json"))
    assert traced.returncode == 1 and f"{tmp_path}/trace.json: is a symbolic link" in traced.stderr, traced.stderr
    assert not (tmp_path / "nowhere").exists()
    # Something else at the name is refused too, not replaced.
    (out / "output_0.npy").unlink()
    (out / "output_0.npy").mkdir()
    result = op_add_run(out)
    assert result.returncode == 1 and f"{out}/output_0.npy: exists and is not a regular file" in result.stderr


def test_an_output_dir_that_is_another_users_link_is_refused(tmp_path):
    # A link as --output-dir itself: followed when this user (or root) owns it, refused when someone else
    # planted it, say in a shared directory, to send the files into a directory of their choosing.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    mine = tmp_path / "mine"
    mine.symlink_to(elsewhere)
    assert op_add_run(mine).returncode == 0 and (elsewhere / "output_0.npy").is_file()
    if os.geteuid() != 0:
        import pytest
        pytest.skip("giving a link to another user needs root")
    (elsewhere / "output_0.npy").unlink()
    planted = tmp_path / "planted"
    planted.symlink_to(elsewhere)
    os.lchown(planted, 54321, 54321)
    for spelling in (str(planted), f"{planted}/", f"{planted}//.", f"{planted}/./"):  # a trailing / follows a link
        result = op_add_run(spelling)
        assert result.returncode == 1, spelling
        assert f"--output-dir {planted}: is a symbolic link owned by another user (uid 54321)" in result.stderr, \
            result.stderr
    assert list(elsewhere.iterdir()) == []


def test_outputs_are_written_whole_and_replace_older_ones(tmp_path):
    import numpy as np
    out = tmp_path / "out"
    out.mkdir()
    (out / "output_0.npy").write_bytes(b"stale" * 1000)
    result = op_add_run(out, "--etdump", str(tmp_path / "run.etdp"))
    assert result.returncode == 0, result.stderr
    assert np.load(out / "output_0.npy").shape == (3, 5)
    assert (tmp_path / "run.etdp").stat().st_size > 0
    assert sorted(p.name for p in out.iterdir()) == ["output_0.npy"]  # no temporary file left
