"""`etrt run` and `etrt inspect` options (tools/run_options.cpp, run_command.cpp, inspect_command.cpp):
help on every command, --version, a reason for every usage error, --json, --warmup, --threads, percentiles,
executor_runner's flags, and tracing that keeps what it can when the debug buffer is too small."""
import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

BUILD = Path(os.environ["ETRT_BUILD_DIR"])
SOURCE = Path(os.environ["ETRT_SOURCE_DIR"])
ETRT = BUILD / "bin" / "etrt"
MODELS = SOURCE / "tests" / "models" / "generated"
OP_ADD = MODELS / "op_add" / "portable.pte"
MLP = MODELS / "mlp" / "portable.pte"

RUN_FLAGS = ["--model_path", "--data", "--data_path", "--method", "--method_name", "--input", "--inputs",
             "--iterations", "--num_executions", "--warmup", "--threads", "--cpu_threads", "--output-dir",
             "--output-file", "--output_file", "--print-output", "--print_output", "--json", "--profile", "--etdump",
             "--etdump_path", "--debug-buffer", "--debug-buffer-size", "--trace"]


def run(*args, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETRT_")}
    return subprocess.run([str(ETRT), *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout)


def run_json(*args):
    result = run(*args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def op_add_inputs(tmp_path):
    with np.load(MODELS / "op_add" / "inputs_forward.npz") as data:
        a, b = data["input_0"], data["input_1"]
    with np.load(MODELS / "op_add" / "expected_forward.npz") as expected:
        return a, b, expected["output_0"]


def option_names(help_text):
    """Every --option (and -h) the help text names."""
    return set(re.findall(r"(?<![\w-])--?[a-z][\w-]*", help_text))


def test_help_on_every_command_exits_0_and_describes_it():
    for command, expected in [("run", set(RUN_FLAGS)), ("inspect", {"--data", "--data_path", "--json"}),
                              ("plugins", {"--json", "--load-all", "--manifest"}), ("version", set())]:
        for spelling in ("--help", "-h"):
            result = run(command, spelling)
            assert result.returncode == 0, (command, result.stderr)
            assert result.stdout.startswith(f"usage: etrt {command}"), result.stdout
            assert expected <= option_names(result.stdout), (command, expected - option_names(result.stdout))
    # The help is asked for even after other options, and is not an error.
    assert run("run", str(OP_ADD), "--iterations", "3", "--help").returncode == 0


def test_top_level_help_lists_every_option_of_every_command():
    result = run("--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: etrt <command>")
    assert set(RUN_FLAGS) <= option_names(result.stdout), set(RUN_FLAGS) - option_names(result.stdout)
    for command in ("run MODEL.pte", "inspect MODEL.pte", "plugins [--json]", "--version"):
        assert command in result.stdout
    bare = run()
    assert bare.returncode == 2 and bare.stderr.startswith("etrt: no command given\n\nusage: etrt <command>")


def test_version_flag_and_command_agree():
    flag, command = run("--version"), run("version")
    assert flag.returncode == 0 and command.returncode == 0
    assert re.fullmatch(r"etrt \d+\.\d+\.\d+, plugin ABI 1\.\d+-1\.\d+\n", flag.stdout), flag.stdout
    assert flag.stdout == command.stdout
    extra = run("version", "now")
    assert extra.returncode == 2 and "unexpected argument 'now'" in extra.stderr


@pytest.mark.parametrize("args, reason", [
    (["--iterations", "0"], "--iterations takes a whole number of runs, 1 or more, not '0'"),
    (["--iterations", "abc"], "--iterations takes a whole number of runs, 1 or more, not 'abc'"),
    (["--iterations", "3x"], "not '3x'"),
    (["--iterations", "99999999999999999999"], "not '99999999999999999999'"),
    (["--num_executions=0"], "--num_executions takes a whole number of runs, 1 or more, not '0'"),
    (["--iterations"], "--iterations needs a value (N)"),
    (["--warmup", "-1"], "--warmup takes a whole number of runs, 0 or more, not '-1'"),
    (["--threads", "0"], "--threads takes a number of threads from 1 to 4096, not '0'"),
    (["--cpu_threads", "-2"], "--cpu_threads takes a number of threads from 1 to 4096, or -1 for the default"),
    (["--print-output", "some"], "--print-output takes none, summary or all, not 'some'"),
    (["--frobnicate"], "unknown option '--frobnicate' (etrt run --help lists the options)"),
    (["--json=yes"], "--json takes no value"),
    (["--inputs", "a.npy,,b.npy"], "--inputs takes file names separated by commas; 'a.npy,,b.npy' has an empty one"),
    (["--method", ""], "--method takes a method name, not an empty one"),
    (["--debug-buffer", "x.bin"], "--debug-buffer needs --etdump"),
    (["--etdump", "x.etdp", "--debug-buffer-size", "100"], "--debug-buffer-size needs --debug-buffer FILE"),
    (["--debug-buffer-size", "-5", "--etdump", "a", "--debug-buffer", "b"], "a number of bytes, 1 or more, not '-5'"),
    (["other.pte"], "unexpected argument 'other.pte': the program is already given"),
    (["--model_path", "other.pte"], "--model_path 'other.pte': the program is already given"),
])
def test_every_usage_error_says_why(args, reason):
    result = run("run", str(OP_ADD), *args)
    assert result.returncode == 2, (args, result.stdout, result.stderr)
    assert result.stderr.startswith("etrt run: ") and reason in result.stderr.splitlines()[0], result.stderr
    assert "etrt run --help" in result.stderr


def test_usage_errors_of_inspect_and_plugins_say_why():
    none = run("inspect")
    assert none.returncode == 2 and "etrt inspect: no program given (MODEL.pte)" in none.stderr
    wrong = run("inspect", str(OP_ADD), "--iterations", "3")  # a run option: inspect runs nothing
    assert wrong.returncode == 2 and "unknown option '--iterations'" in wrong.stderr
    manifest = run("plugins", "--manifest")
    assert manifest.returncode == 2 and "--manifest needs a value (PATH)" in manifest.stderr


def test_run_json_reports_outputs_latency_percentiles_and_plugins(tmp_path):
    a, b, expected = op_add_inputs(tmp_path)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    data = run_json("run", OP_ADD, "--input", tmp_path / "a.npy", "--input", tmp_path / "b.npy", "--iterations", 7)
    assert data["method"] == "forward" and data["inputs"] == "files"
    [output] = data["outputs"]
    assert (output["dtype"], output["shape"]) == ("float32", [3, 5])
    assert np.isclose(output["min"], expected.min(), rtol=1e-5) and np.isclose(output["max"], expected.max(), rtol=1e-5)
    latency = data["latency_ms"]
    assert latency["runs"] == 7 and latency["warmup_runs"] == 0
    assert 0 < latency["min"] <= latency["p50"] <= latency["p90"] <= latency["p99"] <= latency["max"]
    assert latency["min"] <= latency["mean"] <= latency["max"]
    assert data["threads"] >= 1 and data["complete"] is True
    assert [p["name"] for p in data["plugins_loaded"]] == ["kernels_optimized"]


def test_run_text_gives_percentiles_and_singular_words():
    result = run("run", OP_ADD, "--iterations", "1", "--threads", "1")
    assert result.returncode == 0, result.stderr
    assert "method 'forward': 1 output\n" in result.stdout
    line = next(l for l in result.stdout.splitlines() if l.startswith("latency over"))
    assert re.fullmatch(r"latency over 1 run: min [\d.]+ ms, median [\d.]+ ms, p90 [\d.]+ ms, p99 [\d.]+ ms, "
                        r"max [\d.]+ ms \(first [\d.]+ ms; method load [\d.]+ ms; 1 thread\)", line), line
    several = run("run", OP_ADD, "--iterations", "4", "--warmup", "2", "--threads", "2")
    assert "latency over 4 runs, after 2 warm-up runs: min" in several.stdout and "; 2 threads)" in several.stdout
    inspected = run("inspect", OP_ADD)
    assert "method 'forward': 1 instruction, 1 planned buffer, 192 bytes planned" in inspected.stdout


def test_threads_set_the_pool_and_warmup_runs_are_not_traced():
    assert run_json("run", MLP, "--threads", "1")["threads"] == 1
    assert run_json("run", MLP, "--cpu_threads", "3")["threads"] == 3
    default = run_json("run", MLP)["threads"]
    assert run_json("run", MLP, "--cpu_threads", "-1")["threads"] == default
    data = run_json("run", MLP, "--warmup", "3", "--iterations", "2", "--profile")
    assert data["latency_ms"]["warmup_runs"] == 3
    assert data["profile"]["traced_runs"] == 2  # the warm-up runs are neither timed nor traced
    calls = {row["name"]: row["calls"] for row in data["profile"]["operators"]}
    assert calls["aten::addmm.out"] == 2 * 3  # three linear layers, two runs


def test_inspect_groups_identical_delegates_and_has_json():
    program = MODELS / "transformer_encoder" / "xnnpack.pte"
    text = run("inspect", program)
    assert text.returncode == 0, text.stderr
    lines = [l for l in text.stdout.splitlines() if "XnnpackBackend" in l]
    assert len(lines) == 1 and "4 subgraphs" in lines[0] and lines[0].split()[-1] == "xnnpack", text.stdout
    assert "  delegates (4):" in text.stdout
    data = run_json("inspect", program)
    [method] = data["methods"]
    assert method["delegates"] == [{"backend": "XnnpackBackend", "subgraphs": 4, "provider": "xnnpack",
                                    "missing": False}]
    assert data["missing_providers"] is False
    ops = run_json("inspect", OP_ADD)
    forward = next(m for m in ops["methods"] if m["name"] == "forward")
    assert forward["inputs"][1] == {"index": 1, "kind": "tensor", "dtype": "float32", "shape": [3, 5],
                                    "shape_dynamism": "static", "nbytes": 60}
    assert forward["operators"] == [{"name": "aten::add.out", "provider": "kernels_optimized", "missing": False}]


def test_inspect_json_flags_a_missing_provider():
    result = run("inspect", SOURCE / "tests" / "program" / "corrupt" / "unknown_operator.pte", "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["missing_providers"] is True
    missing = [op for m in data["methods"] for op in m["operators"] if op["missing"]]
    assert missing == [{"name": "custom::nope.out", "provider": None, "missing": True}]


def test_executor_runner_command_lines_run_unchanged(tmp_path):
    # executor_runner reads --inputs as raw bytes of each input, comma-separated, and writes each tensor
    # output's bytes to <--output_file>-<i>.bin; gflags also takes --flag=value and -flag value.
    a, b, expected = op_add_inputs(tmp_path)
    a.tofile(tmp_path / "a.bin")
    b.tofile(tmp_path / "b.bin")
    result = run("run", f"--model_path={OP_ADD}", "--method_name", "forward", "--inputs",
                 f"{tmp_path / 'a.bin'},{tmp_path / 'b.bin'}", "--num_executions=2", "--cpu_threads", "1",
                 f"--output_file={tmp_path / 'out'}", "--print_output", "all", f"--etdump_path={tmp_path / 'd.etdp'}")
    assert result.returncode == 0, result.stderr
    out = np.fromfile(tmp_path / "out-0.bin", dtype=np.float32).reshape(3, 5)
    assert np.allclose(out, expected, rtol=1e-5, atol=1e-6)
    printed = next(l for l in result.stdout.splitlines() if l.startswith("  output 0:"))
    values = [float(v) for v in printed.split(":", 2)[2].split()]
    assert np.allclose(values, expected.ravel(), rtol=1e-5, atol=1e-6)
    assert "latency over 2 runs" in result.stdout and "; 1 thread)" in result.stdout
    assert (tmp_path / "d.etdp").stat().st_size > 0
    single_dash = run("run", "-model_path", OP_ADD, "-inputs", f"{tmp_path / 'a.bin'},{tmp_path / 'b.bin'}",
                      "-print_output=none")
    assert single_dash.returncode == 0, single_dash.stderr
    assert "output 0" not in single_dash.stdout and "latency over 10 runs" in single_dash.stdout
    data = SOURCE / "tests" / "data_file" / "generated"
    with_data = run("run", "--model_path", data / "linear_portable.pte", "--data_path", data / "linear_portable.ptd",
                    "--inputs", data / "input.npy", "--output_file", tmp_path / "linear")
    assert with_data.returncode == 0, with_data.stderr
    assert np.allclose(np.fromfile(tmp_path / "linear-0.bin", np.float32).reshape(2, 4), np.load(data / "expected.npy"),
                       rtol=1e-4, atol=1e-5)


def test_a_raw_input_of_the_wrong_size_is_refused_naming_it(tmp_path):
    np.zeros(14, np.float32).tofile(tmp_path / "short.bin")
    np.zeros(15, np.float32).tofile(tmp_path / "ok.bin")
    result = run("run", OP_ADD, "--inputs", f"{tmp_path / 'short.bin'},{tmp_path / 'ok.bin'}")
    assert result.returncode == 1
    assert f"{tmp_path / 'short.bin'}: neither a .npy file nor the input's raw bytes: 56 bytes, the input takes 60" \
        in result.stderr, result.stderr


def test_without_a_forward_method_the_first_method_runs(tmp_path):
    data = OP_ADD.read_bytes()
    assert data.count(b"forward") == 1
    program = tmp_path / "no_forward.pte"
    program.write_bytes(data.replace(b"forward", b"forwarx"))
    result = run_json("run", program)
    assert result["method"] == "broadcast"  # the first method, as executor_runner picks
    assert result["outputs"][0]["shape"] == [2, 3, 4]


def test_a_debug_buffer_too_small_still_writes_the_trace_and_names_the_flag(tmp_path):
    files = {"etdump": tmp_path / "run.etdp", "buffer": tmp_path / "run.bin", "trace": tmp_path / "run.json"}
    args = ["run", MLP, "--iterations", "3", "--profile", "--etdump", files["etdump"], "--debug-buffer",
            files["buffer"], "--trace", files["trace"]]
    small = run(*args, "--debug-buffer-size", "64")
    assert small.returncode == 1
    assert "profile of method 'forward' over 3 traced runs" in small.stdout  # the table is printed
    events = json.loads(files["trace"].read_text())  # and the trace written, whole
    assert any(e.get("name") == "aten::addmm.out" for e in events["traceEvents"]), events
    match = re.search(r"--etdump \S+ not written: the debug buffer of 64 bytes \(--debug-buffer-size\) is too small: "
                      r"the 3 traced runs needed (\d+) bytes, about (\d+) per run; give --debug-buffer-size (\d+) or "
                      r"more, or trace fewer runs \(--iterations\)", small.stderr)
    assert match, small.stderr
    assert "debug_buffer_size" not in small.stderr  # the Python keyword is not what the user typed
    assert f"--debug-buffer {files['buffer']} not written (the same reason)" in small.stderr
    needed, per_run = int(match.group(1)), int(match.group(2))
    assert match.group(3) == match.group(1) and per_run * 3 >= needed > per_run * 2
    assert not files["etdump"].exists() and not files["buffer"].exists()
    # The number given is enough, and one run needs a third of it.
    files["trace"].unlink()
    enough = run(*args, "--debug-buffer-size", str(needed))
    assert enough.returncode == 0, enough.stderr
    assert all(path.stat().st_size > 0 for path in files.values())
    assert files["buffer"].stat().st_size == needed
    one_run = run(*args[:2], "--iterations", "1", *args[4:], "--debug-buffer-size", str(per_run))
    assert one_run.returncode == 0, one_run.stderr


def test_json_reports_which_trace_files_were_written(tmp_path):
    result = run("run", MLP, "--iterations", "2", "--etdump", tmp_path / "a.etdp", "--debug-buffer", tmp_path / "a.bin",
                 "--debug-buffer-size", "64", "--trace", tmp_path / "a.json", "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["complete"] is False
    written = {f["kind"]: f["written"] for f in data["files"]}
    assert written == {"chrome_trace": True, "etdump": False, "debug_buffer": False}
    assert "--debug-buffer-size" in next(f["error"] for f in data["files"] if f["kind"] == "etdump")


def test_names_in_json_are_escaped_ascii_that_parses(tmp_path):
    # A method named with an escape sequence and a byte that is not UTF-8: the JSON stays ASCII (a terminal
    # showing it acts on nothing), parses, and gives the control as itself and the bad byte as U+FFFD.
    data = OP_ADD.read_bytes()
    program = tmp_path / "names.pte"
    program.write_bytes(data.replace(b"rank0", b"\x1b[1m\xff").replace(b"broadcast", b"br\xc3\xa9\xe2\x80\xaeas"))
    result = run("inspect", program, "--json")
    assert result.returncode == 0, result.stderr
    assert result.stdout.isascii(), result.stdout
    names = sorted(m["name"] for m in json.loads(result.stdout)["methods"])
    assert names == ["\x1b[1m\ufffd", "br\u00e9\u202eas", "forward"], names


def test_inspect_says_when_a_program_keeps_its_weights_in_a_ptd():
    data = SOURCE / "tests" / "data_file" / "generated"
    text = run("inspect", data / "linear_portable.pte")
    assert text.returncode == 0, text.stderr
    assert "  weights in a .ptd file (4): l1.weight l1.bias l2.weight l2.bias\n" in text.stdout, text.stdout
    assert "This program keeps weights outside it: give their .ptd file with --data to run it." in text.stdout
    given = run("inspect", data / "linear_portable.pte", "--data", data / "linear_portable.ptd")
    assert "weights in a .ptd file (4)" in given.stdout and "give their .ptd file" not in given.stdout
    data_json = run_json("inspect", data / "linear_portable.pte")
    assert data_json["needs_data_file"] is True
    assert data_json["methods"][0]["external_tensors"] == ["l1.weight", "l1.bias", "l2.weight", "l2.bias"]
    plain = run_json("inspect", OP_ADD)
    assert plain["needs_data_file"] is False and all(m["external_tensors"] == [] for m in plain["methods"])
    assert "weights in a .ptd" not in run("inspect", OP_ADD).stdout
