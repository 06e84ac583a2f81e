"""Every operator of ExecuTorch's portable kernel library (functions.yaml) and of
its quantized library (quantized.yaml), read from the installed wheel, is either
provided by a shipped plugin manifest or listed with a reason in
excluded_operators.txt (or, while the work is under way, in
not_yet_implemented.txt, which is meant to shrink to nothing)."""
import importlib.util
import json
import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("ETRT_BUILD_DIR", HERE.parents[1] / "build"))
MANIFESTS = BUILD / "lib" / "etrt" / "manifests"


def executorch_dir():
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("executorch is not installed: the coverage test needs its functions.yaml and quantized.yaml")
    return Path(list(spec.submodule_search_locations)[0])


def operator_names(yaml_path):
    """'aten::add.out' for `- op: add.out`, the namespace of `- func: ns::name(...)` kept."""
    import yaml
    names = []
    for entry in yaml.safe_load(yaml_path.read_text()):
        name = entry["op"] if "op" in entry else entry["func"].split("(")[0]
        names.append(name if "::" in name else "aten::" + name)
    return names


def listed(path):
    """{operator: reason} of a list file: `operator  # reason`, blank lines and comment lines skipped."""
    entries = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, _, reason = line.partition("#")
        name, reason = name.strip(), reason.strip()
        assert " " not in name, f"{path.name}:{number}: one operator per line, got {name!r}"
        assert reason, f"{path.name}:{number}: {name} needs a reason after '#'"
        assert name not in entries, f"{path.name}:{number}: {name} is listed twice"
        entries[name] = reason
    return entries


def provided():
    manifests = sorted(MANIFESTS.glob("*.json"))
    assert manifests, f"no manifests in {MANIFESTS} (build the plugins first)"
    names = set()
    for manifest in manifests:
        names |= set(json.loads(manifest.read_text()).get("provides", {}).get("operators", []))
    return names


@pytest.fixture(scope="module")
def required():
    root = executorch_dir()
    files = [root / "kernels" / "portable" / "functions.yaml", root / "kernels" / "quantized" / "quantized.yaml"]
    for f in files:
        assert f.is_file(), f"{f} is missing from the installed executorch"
    names = [n for f in files for n in operator_names(f)]
    assert len(names) > 200, f"only {len(names)} operators read from {files}: the yaml format changed?"
    return set(names)


def test_every_executorch_operator_is_provided_or_excluded(required):
    have = provided()
    excluded = listed(HERE / "excluded_operators.txt")
    not_yet = listed(HERE / "not_yet_implemented.txt")
    missing = sorted(required - have - set(excluded) - set(not_yet))
    assert not missing, (f"{len(missing)} operators of ExecuTorch's kernel libraries are neither provided by a "
                         f"manifest in {MANIFESTS} nor listed in tests/coverage: " + ", ".join(missing))


def test_the_lists_hold_no_stale_entries(required):
    """An entry that is provided, or that ExecuTorch no longer has, must leave the lists."""
    have = provided()
    for file in ("excluded_operators.txt", "not_yet_implemented.txt"):
        entries = listed(HERE / file)
        stale = sorted(n for n in entries if n in have or n not in required)
        assert not stale, f"{file} lists operators that are provided or not in ExecuTorch's yaml: {stale}"


def test_the_exclusion_file_stays_short():
    assert len(listed(HERE / "excluded_operators.txt")) <= 8
