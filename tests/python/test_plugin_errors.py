"""A Python process survives a plugin that throws from everything it implements
(tests/plugins/throwing_plugin.cpp: its entry point, its init, its kernel, its
backend's init and execute, its tracer): each exception reaches Python as
etrt.Error naming the plugin, the call and what(); a plugin that failed to load
stays failed with the reason; the process goes on running programs.

Runs against the package as users get it: ETRT_PYTHON_PACKAGE_DIR (a directory
from which `import etrt` works), else the wheel in ETRT_WHEEL_DIST installed
with pip --target. The test plugins come from ETRT_TEST_THROWING_MANIFEST_DIR."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "tests" / "models" / "generated"

# Every step in one fresh interpreter: a step that ends the process ends the test.
SCRIPT = r"""
import json, os, sys
import numpy as np
import etrt
from etrt import _etrt

throwing, models = os.environ["THROWING"], os.environ["MODELS"]
outcome = {}

def attempt(step, action):
    try:
        result = action()
        outcome[step] = {"raised": None, "result": result}
    except BaseException as error:  # noqa: B902 -- what reaches Python is the point
        outcome[step] = {"raised": type(error).__module__ + "." + type(error).__qualname__,
                         "etrt_error": type(error) is etrt.Error, "message": str(error),
                         "plugin": getattr(error, "plugin", None)}

def first_input(model):
    meta = json.load(open(os.path.join(models, model, "meta.json")))
    spec = meta["methods"]["forward"]["inputs"]
    return [np.full(s["shape"], 1.5, dtype=np.float32) for s in spec]

def run(model, pte="portable.pte", program=None):
    program = program or etrt.Runtime.get().load_program(os.path.join(models, model, pte))
    return [np.asarray(o).tolist() for o in program.load_method("forward").execute(first_input(model))]

def state(name):
    return next(({"state": p["state"], "failure": p["failure"], "warnings": p["warnings"]}
                 for p in etrt.plugins() if p["name"] == name), None)

for kind in ("entry", "init"):
    manifest = os.path.join(throwing, kind, f"test_throws_in_{kind}.json")
    attempt(f"load_{kind}", lambda: etrt.load_plugin(manifest))
    attempt(f"load_{kind}_again", lambda: etrt.load_plugin(manifest))
    outcome[f"state_{kind}"] = state(f"test_throws_in_{kind}")
    etrt.add_manifest(os.path.join(throwing, kind))
attempt("relu_served_by_others", lambda: run("op_relu"))

etrt.add_manifest(os.path.join(throwing, "run"))
attempt("kernel", lambda: run("op_relu"))
attempt("kernel_again", lambda: run("op_relu"))
os.environ["ETRT_TEST_THROW_BACKEND"] = "init"
attempt("backend_init", lambda: run("mlp", "xnnpack.pte"))
del os.environ["ETRT_TEST_THROW_BACKEND"]
attempt("backend_execute", lambda: run("mlp", "xnnpack.pte"))
os.environ["ETRT_TEST_THROW_TRACER"] = "create"
attempt("tracer_create", lambda: _etrt.TraceSession("test_throwing_tracer", 0, "x"))
del os.environ["ETRT_TEST_THROW_TRACER"]

def traced_run():
    session = _etrt.TraceSession("test_throwing_tracer", 0, "add")
    program = etrt.Program(_etrt.Program.load_file(os.path.join(models, "op_add", "portable.pte")), session)
    outputs = run("op_add", program=program)
    attempt("tracer_result", lambda: session.result("etdump"))
    return outputs
attempt("tracer_run", traced_run)
outcome["state_run"] = state("test_throws_at_run")
attempt("still_usable", lambda: run("op_add"))
print(json.dumps(outcome))
"""


@pytest.fixture(scope="module")
def package_dir(tmp_path_factory):
    given = os.environ.get("ETRT_PYTHON_PACKAGE_DIR")
    if given:
        return Path(given)
    dist = Path(os.environ["ETRT_WHEEL_DIST"])
    wheels = sorted(dist.glob("etrt-*.whl"))
    assert wheels, f"no etrt wheel in {dist} (ctest's wheel_build makes it)"
    target = tmp_path_factory.mktemp("etrt_package")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target",
                    str(target), str(wheels[-1])], check=True)
    return target


@pytest.fixture(scope="module")
def outcome(package_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETRT_")}
    env.update(PYTHONPATH=str(package_dir), THROWING=os.environ["ETRT_TEST_THROWING_MANIFEST_DIR"],
               MODELS=str(MODELS), ETRT_PLUGIN_PATH="")
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, f"the process did not survive (exit {result.returncode}):\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def assert_etrt_error(step, *parts, plugin=None):
    assert step["raised"] == "etrt._etrt.Error" and step["etrt_error"], step
    for part in parts:
        assert part in step["message"], (part, step["message"])
    if plugin is not None:
        assert step["plugin"] == plugin, step


def test_an_entry_point_that_throws_fails_its_load_once(outcome):
    assert_etrt_error(outcome["load_entry"], "et_plugin_entry threw std::runtime_error: entry boom")
    assert outcome["load_entry_again"]["message"] == outcome["load_entry"]["message"]
    assert outcome["state_entry"]["state"] == "failed"
    assert "entry boom" in outcome["state_entry"]["failure"]


def test_an_init_that_throws_fails_its_load_once(outcome):
    assert_etrt_error(outcome["load_init"], "init threw std::logic_error: init boom")
    assert outcome["load_init_again"]["message"] == outcome["load_init"]["message"]
    assert outcome["state_init"]["state"] == "failed"


def test_the_failed_plugins_leave_their_operator_to_the_next_provider(outcome):
    step = outcome["relu_served_by_others"]
    assert step["raised"] is None, step
    assert set(np.ravel(step["result"])) == {1.5}  # relu of 1.5 everywhere, by kernels_optimized


def test_a_kernel_that_throws_fails_the_run(outcome):
    for step in ("kernel", "kernel_again"):
        assert_etrt_error(outcome[step], "kernel 'aten::relu.out' of plugin 'test_throws_at_run' threw "
                                         "std::runtime_error: kernel boom", plugin="test_throws_at_run")
    assert outcome["state_run"]["state"] == "loaded"
    assert "broke the ABI at run time" in outcome["state_run"]["warnings"]


def test_a_backend_that_throws_fails_the_load_or_the_run(outcome):
    assert_etrt_error(outcome["backend_init"], "backend 'XnnpackBackend' init of plugin 'test_throws_at_run' "
                                               "threw std::invalid_argument: backend init boom")
    assert_etrt_error(outcome["backend_execute"], "backend 'XnnpackBackend' execute of plugin 'test_throws_at_run' "
                                                  "threw std::out_of_range: backend execute boom")


def test_a_tracer_that_throws_stops_recording_not_the_run(outcome):
    assert_etrt_error(outcome["tracer_create"], "session_create boom")
    assert outcome["tracer_run"]["raised"] is None, outcome["tracer_run"]
    assert_etrt_error(outcome["tracer_result"], "the session stopped recording", "tracer boom",
                      plugin="test_throws_at_run")


def test_the_process_goes_on(outcome):
    assert outcome["still_usable"]["raised"] is None, outcome["still_usable"]
