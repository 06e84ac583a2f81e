"""Plugins installed by pip (python/etrt/_entry_points.py): a distribution holding a plugin
(tests/plugins/package_relu_plugin.cpp: aten::relu.out above kernels_optimized) and naming it with
an `etrt.plugins` entry point is built into a wheel and pip-installed into a fresh venv beside the
etrt wheel. `import etrt` registers it without loading it or importing the distribution's Python;
a program that needs relu loads it; a package whose plugin breaks the trust rules is refused with
the rule named, and a broken entry point is reported without stopping the others.

etrt comes from ETRT_PYTHON_PACKAGE_DIR (a directory from which `import etrt` works) when set, else
from the wheel in ETRT_WHEEL_DIST. The plugin comes from ETRT_TEST_PACKAGE_RELU_MANIFEST."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("ETRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MODELS = SOURCE / "tests" / "models" / "generated"
MANIFEST = Path(os.environ["ETRT_TEST_PACKAGE_RELU_MANIFEST"])

# Importing a plugin package's Python would run its code at `import etrt`: each one refuses.
PACKAGE_INIT = "raise ImportError('the plugin package was imported')\n"


def make_venv(root):
    """A fresh venv (system site-packages: NumPy, pytest) holding etrt as users install it."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(root)], check=True)
    python = root / "bin" / "python"
    package_dir = os.environ.get("ETRT_PYTHON_PACKAGE_DIR")
    if package_dir:
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        Path(site, "etrt_dev.pth").write_text(package_dir + "\n")
    else:
        wheels = sorted(Path(os.environ["ETRT_WHEEL_DIST"]).glob("etrt-*.whl"))
        assert wheels, "no etrt wheel in ETRT_WHEEL_DIST"
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheels[0])],
                       check=True)
    return python


def build_plugin_wheel(work, distribution, package, entry_value):
    """A wheel of `distribution`: package `package` holding the relu plugin and its manifest, and the
    entry point `etrt.plugins` = entry_value."""
    project = work / distribution
    package_dir = project / package
    package_dir.mkdir(parents=True)
    (package_dir / "__init__.py").write_text(PACKAGE_INIT)
    manifest = json.loads(MANIFEST.read_text())
    library = (MANIFEST.parent / manifest["library"]).resolve()
    shutil.copy(library, package_dir / library.name)
    manifest["library"] = library.name  # beside the manifest
    (package_dir / "relu.json").write_text(json.dumps(manifest, indent=2))
    (project / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{distribution}"
        version = "1.0"

        [project.entry-points."etrt.plugins"]
        relu = "{entry_value}"

        [tool.setuptools]
        packages = ["{package}"]

        [tool.setuptools.package-data]
        "{package}" = ["*.json", "*.so.1"]
        """))
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
                    "-w", str(dist), str(project)], check=True, capture_output=True)
    return next(dist.glob(f"{distribution.replace('-', '_')}-*.whl"))  # the file name normalises it


def pip_install(python, wheel):
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)], check=True)


def installed_package(python, package):
    """The installed directory of `package` (found without importing it)."""
    code = f"import importlib.machinery as m; print(m.PathFinder.find_spec({package!r}).submodule_search_locations[0])"
    return Path(subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip())


# Runs in the venv; prints one JSON object.
PROBE = r"""
import json, os, sys, warnings
import numpy as np
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import etrt
from etrt import _entry_points
outcome = {"warnings": [str(w.message) for w in caught], "packages": etrt.plugin_packages(),
           "manifest_files": _entry_points.manifest_files()}

def state():
    return {p["name"]: {"state": p["state"], "failure": p["failure"], "source": p["source"]} for p in etrt.plugins()}

def mapped(name):
    return any(name in line for line in open("/proc/self/maps"))

outcome["after_import"] = state()
outcome["library_mapped_after_import"] = mapped("libetrt_test_package_relu")
outcome["package_modules_imported"] = sorted(m for m in sys.modules if m.startswith("vendor_"))
x = np.linspace(-2, 2, 21, dtype=np.float32).reshape(3, 7)  # op_relu takes [3, 7]
try:
    program = etrt.Runtime.get().load_program(os.path.join(os.environ["MODELS"], "op_relu", "portable.pte"))
    (y,) = program.load_method("forward").execute([x])
    outcome["relu_correct"] = bool(np.array_equal(np.asarray(y), np.maximum(x, 0)))
    outcome["run_error"] = None
except etrt.Error as error:
    outcome["run_error"] = str(error)
outcome["after_run"] = state()
outcome["library_mapped_after_run"] = mapped("libetrt_test_package_relu")
outcome["rejections"] = [list(r) for r in etrt.rejections()]
print(json.dumps(outcome))
"""


def probe(python, tmp_path, **env):
    full_env = {**os.environ, "MODELS": str(MODELS), "ETRT_PLUGIN_PATH": "", **env}
    result = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, cwd=tmp_path, env=full_env)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return json.loads(result.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("plugin_packages")


@pytest.fixture(scope="module")
def relu_wheel(work):
    return build_plugin_wheel(work / "good", "vendor-relu", "vendor_relu", "vendor_relu")


def test_an_installed_plugin_package_is_registered_at_import_and_loaded_when_a_program_needs_it(work, relu_wheel):
    python = make_venv(work / "venv_good")
    pip_install(python, relu_wheel)
    outcome = probe(python, work)
    assert outcome["warnings"] == []
    (entry,) = outcome["packages"]
    assert entry["distribution"] == "vendor-relu" and entry["name"] == "relu" and entry["error"] is None
    assert entry["path"] == str(installed_package(python, "vendor_relu"))
    assert outcome["manifest_files"] == [str(installed_package(python, "vendor_relu") / "relu.json")]
    # Registered, nothing loaded, the package's Python never imported.
    assert outcome["after_import"]["test_package_relu"]["state"] == "declared"
    assert not outcome["library_mapped_after_import"]
    assert outcome["package_modules_imported"] == []
    # A program calling relu loads it: priority 500 is above kernels_optimized.
    assert outcome["run_error"] is None and outcome["relu_correct"]
    assert outcome["after_run"]["test_package_relu"]["state"] == "loaded"
    assert outcome["library_mapped_after_run"]

    # ETRT_PLUGIN_PACKAGES=0: no discovery.
    off = probe(python, work, ETRT_PLUGIN_PACKAGES="0")
    assert off["packages"] == [] and "test_package_relu" not in off["after_run"]
    assert off["run_error"] is None and off["relu_correct"]  # kernels_optimized serves relu


def test_plugin_packages_that_break_the_trust_rules_are_refused_naming_the_rule(work):
    python = make_venv(work / "venv_refused")
    # The library writable by every user: refused when a program needs it, relu served by kernels_optimized.
    pip_install(python, build_plugin_wheel(work / "open_library", "vendor-open-library", "vendor_open_library",
                                           "vendor_open_library"))
    library = next(installed_package(python, "vendor_open_library").glob("*.so.1"))
    library.chmod(0o666)
    # The manifest writable by every user: not registered, said at import.
    pip_install(python, build_plugin_wheel(work / "open_manifest", "vendor-open-manifest", "vendor_open_manifest",
                                           "vendor_open_manifest:relu"))
    manifest = installed_package(python, "vendor_open_manifest") / "relu.json"
    manifest.chmod(0o666)
    # An entry point naming no installed package.
    pip_install(python, build_plugin_wheel(work / "missing", "vendor-missing", "vendor_missing", "vendor_nowhere"))
    # A distribution whose entry_points.txt cannot be parsed: said, and the others still count.
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    broken = Path(site, "vendor_broken-1.0.dist-info")
    broken.mkdir()
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: vendor-broken\nVersion: 1.0\n")
    (broken / "entry_points.txt").write_text("[etrt.plugins]\nno equals sign here\n")

    outcome = probe(python, work)
    by_distribution = {entry["distribution"]: entry for entry in outcome["packages"]}
    assert sorted(by_distribution) == ["vendor-missing", "vendor-open-library", "vendor-open-manifest"]
    assert by_distribution["vendor-open-library"]["error"] is None  # its manifest is fine: registered
    assert outcome["manifest_files"] == [str(installed_package(python, "vendor_open_library") / "relu.json")]
    assert "writable by every user" in by_distribution["vendor-open-manifest"]["error"]
    assert str(manifest) in by_distribution["vendor-open-manifest"]["error"]
    assert by_distribution["vendor-missing"]["error"] == "no package 'vendor_nowhere' on sys.path"
    warned = "\n".join(outcome["warnings"])
    assert "plugin package 'vendor-open-manifest'" in warned and "writable by every user" in warned
    assert "plugin package 'vendor-missing'" in warned and "vendor_nowhere" in warned
    assert f"cannot read the entry points of {broken}" in warned
    assert outcome["package_modules_imported"] == []

    assert outcome["run_error"] is None and outcome["relu_correct"]
    refused = outcome["after_run"]["test_package_relu"]
    assert refused["state"] == "failed"
    assert "writable by every user" in refused["failure"] and str(library.parent) in refused["failure"]
    assert not outcome["library_mapped_after_run"]
