"""The ops team's path for a delegate (issue 12): examples/delegate's EwChainBackend
(fused elementwise chains) lowered by its own Partitioner and BackendDetails,
its runtime half built out of tree as a backend plugin against the installed
SDK, and the programs run from the CLI and Python against eager PyTorch: one
lowered to EwChainBackend alone, one to EwChainBackend and XNNPACK. A corrupt
blob is refused at method load with a clear error, and the process stays usable."""
import json
import struct

import pytest
from conftest import assert_matches_eager, build_example, installed_example, run

BACKEND = "EwChainBackend"


@pytest.fixture(scope="module")
def example(prefix, work):
    return installed_example(prefix, work, "delegate")


@pytest.fixture(scope="module")
def exported(exported):
    directory = exported["delegate"]
    log = (directory / "export.log").read_text()
    assert f"ewchain_only/model.pte delegates: {BACKEND}; operators: -" in log, log
    assert f"ewchain_xnnpack/model.pte delegates: XnnpackBackend, {BACKEND}, XnnpackBackend; operators: -" in log, log
    return directory


@pytest.fixture(scope="module")
def built(example, prefix, work):
    directory = build_example(example, prefix, work / "delegate-build")
    manifest = json.loads((directory / "ewchain.json").read_text())
    assert manifest["provides"] == {"backends": [BACKEND]}, manifest
    return directory


def inputs_of(model_dir):
    return [arg for path in sorted(model_dir.glob("input_*.npy")) for arg in ["--input", path]]


def run_cli(prefix, built, model_dir, out_dir, check=True):
    return run([prefix / "bin" / "etrt", "run", model_dir / "model.pte", *inputs_of(model_dir), "--output-dir", out_dir],
               env={"ETRT_PLUGIN_PATH": str(built)}, check=check)


def served_by(prefix, built, model_dir):
    """Sorted (delegate id, plugin) of each delegate call of `forward`, as `etrt inspect --json` reports them
    (identical calls come grouped, with their number of subgraphs)."""
    text = run([prefix / "bin" / "etrt", "inspect", "--json", model_dir / "model.pte"],
               env={"ETRT_PLUGIN_PATH": str(built)}).stdout
    (method,) = [m for m in json.loads(text)["methods"] if m["name"] == "forward"]
    return sorted((d["backend"], d["provider"]) for d in method["delegates"] for _ in range(d["subgraphs"]))


def test_a_model_lowered_to_the_backend_runs_from_the_cli(prefix, built, exported, work):
    model = exported / "ewchain_only"
    result = run_cli(prefix, built, model, work / "ewchain_only-out")
    assert "ewchain 1.0.0" in result.stdout and "kernels_optimized" not in result.stdout, result.stdout
    assert_matches_eager(work / "ewchain_only-out" / "output_0.npy", model / "expected_0.npy")
    assert served_by(prefix, built, model) == [(BACKEND, "ewchain")]


def test_the_report_shows_which_plugin_serves_each_delegate_call(prefix, built, exported):
    assert served_by(prefix, built, exported / "ewchain_xnnpack") == sorted([
        ("XnnpackBackend", "xnnpack"), (BACKEND, "ewchain"), ("XnnpackBackend", "xnnpack")])


def test_a_model_lowered_to_the_backend_and_xnnpack_runs_from_the_cli(prefix, built, exported, work):
    model = exported / "ewchain_xnnpack"
    result = run_cli(prefix, built, model, work / "ewchain_xnnpack-out")
    assert "ewchain 1.0.0" in result.stdout and "xnnpack 0.1.0" in result.stdout, result.stdout
    assert_matches_eager(work / "ewchain_xnnpack-out" / "output_0.npy", model / "expected_0.npy")


PYTHON_RUN = """
import json, sys
from pathlib import Path
import numpy as np
import etrt
manifest, model_dir, out = sys.argv[1:]
etrt.load_plugin(manifest)
method = etrt.Runtime.get().load_program(model_dir + "/model.pte").load_method("forward")
output = method.execute([np.load(p) for p in sorted(Path(model_dir).glob("input_*.npy"))])[0]
np.save(out, np.asarray(output))
print(json.dumps({b["name"]: b["plugin"] for b in json.loads(etrt.report())["backends"]}))
"""


def run_python(venv, built, model_dir, out, check=True):
    python, _ = venv
    result = run([python, "-c", PYTHON_RUN, built / "ewchain.json", model_dir, out], cwd=out.parent, check=check)
    return json.loads(result.stdout.splitlines()[-1])


def test_python_runs_the_lowered_model_with_load_plugin(venv, built, exported, work):
    model = exported / "ewchain_only"
    backends = run_python(venv, built, model, work / "python-ewchain_only.npy")
    assert backends[BACKEND] == "ewchain", backends
    assert_matches_eager(work / "python-ewchain_only.npy", model / "expected_0.npy")


def test_python_runs_the_model_lowered_to_the_backend_and_xnnpack(venv, built, exported, work):
    model = exported / "ewchain_xnnpack"
    backends = run_python(venv, built, model, work / "python-ewchain_xnnpack.npy")
    assert backends[BACKEND] == "ewchain" and backends["XnnpackBackend"] == "xnnpack", backends
    assert_matches_eager(work / "python-ewchain_xnnpack.npy", model / "expected_0.npy")


def corrupted(pte, work, name, patch):
    """A copy of the program whose EWC1 blob `patch(blob, offset)` changed in place."""
    data = bytearray(pte.read_bytes())
    offset = data.find(b"EWC1")
    assert offset >= 0 and data.find(b"EWC1", offset + 1) < 0, "expected exactly one EWC1 blob"
    patch(data, offset)
    path = work / f"corrupt-{name}.pte"
    path.write_bytes(bytes(data))
    return path


CORRUPTIONS = {
    "magic": (lambda d, o: d.__setitem__(slice(o, o + 4), b"EWC9"), "does not start with magic EWC1"),
    "opcode": (lambda d, o: d.__setitem__(o + 24, 99), "instruction 0: unknown opcode 99"),
    "operand": (lambda d, o: d.__setitem__(slice(o + 28, o + 30), struct.pack("<H", 60)),
                "instruction 0: reads a value not computed before it"),
    "length": (lambda d, o: d.__setitem__(slice(o + 20, o + 24), struct.pack("<I", 1 << 30)), "values for"),
}


def test_a_corrupt_blob_is_refused_at_method_load_and_the_process_stays_usable(prefix, venv, built, exported, work):
    model = exported / "ewchain_only"
    cases = {name: (str(corrupted(model / "model.pte", work, name, patch)), expected)
             for name, (patch, expected) in CORRUPTIONS.items()}
    probe = f"""
import json, numpy as np, etrt
etrt.load_plugin({str(built / 'ewchain.json')!r})
messages = {{}}
for name, (path, expected) in {cases!r}.items():
    program = etrt.Runtime.get().load_program(path)   # the program itself is valid
    try:
        program.load_method("forward")
        messages[name] = "loaded"
    except etrt.Error as error:
        messages[name] = str(error)
good = etrt.Runtime.get().load_program({str(model / 'model.pte')!r}).load_method("forward")
out = good.execute([np.load({str(model / 'input_0.npy')!r}), np.load({str(model / 'input_1.npy')!r})])[0]
np.save({str(work / 'after-corrupt.npy')!r}, np.asarray(out))
print(json.dumps(messages))
"""
    python, _ = venv
    messages = json.loads(run([python, "-c", probe], cwd=work).stdout.splitlines()[-1])
    for name, (_, expected) in cases.items():
        assert f"{BACKEND}: corrupt delegate blob" in messages[name] and expected in messages[name], (name, messages)
    assert_matches_eager(work / "after-corrupt.npy", model / "expected_0.npy")

    result = run([prefix / "bin" / "etrt", "run", cases["opcode"][0], *inputs_of(model)],
                 env={"ETRT_PLUGIN_PATH": str(built)}, check=False)
    assert result.returncode == 1, (result.returncode, result.stderr)  # an error, not a crash
    assert "corrupt delegate blob: instruction 0: unknown opcode 99" in result.stderr, result.stderr
