"""Runs one of ExecuTorch's own test files against etrt, with its imports swapped.

ExecuTorch's wheel ships its Python test suites (runtime/test, extension/pybindings/test,
extension/llm/runner/test, extension/training/...). A suite is copied out of the installed
`executorch` package, each import of ExecuTorch's runtime is rewritten to etrt's module of the
same shape, and pytest runs the copy in a child process. The suite passes only when:
  - every rewrite matched the file at least once (a rewrite that matches nothing would run the
    test against ExecuTorch's runtime and prove nothing);
  - no test failed or errored, and at least `min_passed` passed;
  - the tests left out are exactly the ones named, each with its reason (printed);
  - none of ExecuTorch's runtime modules (executorch.runtime, its pybindings _C / portable_lib,
    _llm_runner, _training_lib) was imported or mapped into the child process: the tests ran on etrt
    alone. (ExecuTorch's export-time operator libraries may be mapped: they need libexecutorch.so and
    _C's file, but run nothing of a program.) A suite whose own imports pull a runtime module in
    names it in `allowed_runtime_modules`, with the reason.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# ExecuTorch's runtime, as Python modules and as the shared objects only those modules load.
EXECUTORCH_RUNTIME_MODULES = (
    "executorch.runtime",
    "executorch.extension.pybindings._C",
    "executorch.extension.pybindings.portable_lib",
    "executorch.extension.pybindings._portable_lib",
    "executorch.extension.llm.runner._llm_runner",
    "executorch.extension.training.pybindings._training_lib",
)
EXECUTORCH_RUNTIME_OBJECTS = re.compile(r"/_portable_lib\.|/_llm_runner\.|/_training_lib\.")

# Written into the suite's directory: records, at the end of the session, which ExecuTorch
# runtime objects the process mapped, and every test's outcome.
_CONFTEST = r'''
import json, os, re
_outcomes = {}

def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        previous = _outcomes.get(report.nodeid)
        if previous in (None, "passed"):
            _outcomes[report.nodeid] = report.outcome

def pytest_sessionfinish(session, exitstatus):
    import sys
    pattern = re.compile(os.environ["UPSTREAM_FORBIDDEN"])
    with open("/proc/self/maps") as maps:
        mapped = sorted({line.split()[-1] for line in maps if pattern.search(line)})
    imported = sorted(set(os.environ["UPSTREAM_FORBIDDEN_MODULES"].split(",")) & set(sys.modules))
    with open(os.environ["UPSTREAM_REPORT"], "w") as out:
        json.dump({"mapped": mapped, "imported": imported, "outcomes": _outcomes}, out)
'''


def executorch_root() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the executorch package is not installed: its test suites cannot be read")
    return Path(list(spec.submodule_search_locations)[0])


def run_suite(
    relative_path: str,
    rewrites: dict[str, str],
    left_out: dict[str, str] | None = None,
    min_passed: int = 1,
    timeout: float = 1800,
    extra_files: tuple[str, ...] = (),
    allowed_runtime_modules: dict[str, str] | None = None,
) -> dict[str, str]:
    """Runs executorch/<relative_path> with `rewrites` applied; returns {test id: outcome}.

    left_out maps a test's name (the function name, or Class::function) to the reason it cannot
    run on etrt; each must name a test of the file. extra_files are other files of the executorch
    package the suite reads by relative path (copied beside it, rewritten the same way)."""
    left_out = dict(left_out or {})
    source_file = executorch_root() / relative_path
    text = source_file.read_text()
    for old, new in rewrites.items():
        if old not in text:
            raise AssertionError(f"{relative_path}: the rewrite {old!r} matches nothing: the suite changed")
        text = text.replace(old, new)
    for name in left_out:
        function = name.split("::")[-1]
        if not re.search(rf"def {re.escape(function)}\(", text):
            raise AssertionError(f"{relative_path}: the left-out test {name!r} does not exist")

    with tempfile.TemporaryDirectory(prefix="etrt-upstream-") as tmp:
        work = Path(tmp)
        target = work / ("test_" + source_file.name.removeprefix("test_"))
        target.write_text(text)
        for extra in extra_files:
            extra_text = (executorch_root() / extra).read_text()
            for old, new in rewrites.items():
                extra_text = extra_text.replace(old, new)
            (work / Path(extra).name).write_text(extra_text)
        (work / "conftest.py").write_text(_CONFTEST)
        report = work / "report.json"
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", str(target)]
        if left_out:
            command += ["-k", " and ".join(f"not {name.split('::')[-1]}" for name in left_out)]
        env = dict(os.environ, UPSTREAM_FORBIDDEN=EXECUTORCH_RUNTIME_OBJECTS.pattern,
                   UPSTREAM_FORBIDDEN_MODULES=",".join(EXECUTORCH_RUNTIME_MODULES), UPSTREAM_REPORT=str(report))
        print(f"upstream suite {relative_path}: left out {len(left_out)} test(s)")
        for name, reason in left_out.items():
            print(f"  left out {name}: {reason}")
        result = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
        print(result.stdout[-20000:])
        print(result.stderr[-5000:], file=sys.stderr)
        assert report.exists(), f"{relative_path}: pytest ended before its session finished (exit {result.returncode})"
        recorded = json.loads(report.read_text())

    allowed = dict(allowed_runtime_modules or {})
    for module, reason in allowed.items():
        print(f"  allowed ExecuTorch runtime module {module}: {reason}")
    imported = [m for m in recorded["imported"] if m not in allowed]
    assert not imported, f"{relative_path}: ExecuTorch's runtime was imported: {imported}"
    if not allowed:
        assert not recorded["mapped"], f"{relative_path}: ExecuTorch's runtime was loaded: {recorded['mapped']}"
    outcomes = recorded["outcomes"]
    failed = {test: outcome for test, outcome in outcomes.items() if outcome != "passed"}
    assert not failed, f"{relative_path}: {len(failed)} test(s) did not pass: {failed}"
    passed = sum(1 for outcome in outcomes.values() if outcome == "passed")
    assert passed >= min_passed, f"{relative_path}: {passed} test(s) passed, at least {min_passed} expected"
    assert result.returncode == 0, f"{relative_path}: pytest exited {result.returncode}"
    return outcomes
