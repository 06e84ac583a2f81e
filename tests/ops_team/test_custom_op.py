"""The ops team's path for a custom operator (issue 12), as a user walks it:
etrt installed into a temporary prefix (`cmake --install`) and as a wheel in a
new venv; examples/custom_op copied from the installed package into a
directory with no access to the source tree; its plugin built against each
installation; its program exported with ExecuTorch (cached by content in the
build directory); the program run through the CLI (ETRT_PLUGIN_PATH), a C++
host (et_add_manifest) and Python (etrt.load_plugin), each against eager
PyTorch. Nothing of etrt is rebuilt on the way."""
import hashlib
import json
import re
import shutil

import pytest
from conftest import assert_matches_eager, build_example, installed_example, run

OPERATOR = "my_ops::scaled_swish.out"


@pytest.fixture(scope="module")
def example(prefix, work):
    return installed_example(prefix, work, "custom_op")


@pytest.fixture(scope="module")
def exported(exported):
    """export.py's .pte with its input and eager output."""
    directory = exported["custom_op"]
    assert OPERATOR in (directory / "export.log").read_text()
    return directory


@pytest.fixture(scope="module")
def built(example, prefix, work):
    return build_example(example, prefix, work / "custom_op-build-prefix")


def test_the_example_builds_optimised_with_the_sdk_standard_and_a_valid_manifest(built):
    commands = run(["ninja", "-C", built, "-t", "commands", "etrt_plugin_scaled_swish"]).stdout
    compile_line = next(line for line in commands.splitlines() if "scaled_swish.cpp" in line)
    assert " -O2" in compile_line and "-DNDEBUG" in compile_line, compile_line
    assert re.search(r"-std=(c|gnu)\+\+(20|2a)", compile_line), compile_line  # from etrt::plugin_api's features
    plugin = built / "libetrt_scaled_swish.so.1"
    manifest = json.loads((built / "scaled_swish.json").read_text())
    assert manifest["provides"]["operators"] == [OPERATOR]
    assert manifest["sha256"] == hashlib.sha256(plugin.read_bytes()).hexdigest()
    symbols = run(["nm", "-D", "--defined-only", plugin]).stdout.split()
    assert "et_plugin_entry" in symbols and not any(s.startswith("_Z") for s in symbols)


def test_cli_runs_the_program_with_the_plugin_from_etrt_plugin_path(prefix, built, exported, work):
    out_dir = work / "cli-out"
    result = run([prefix / "bin" / "etrt", "run", exported / "swish_mlp.pte", "--input", exported / "input_0.npy",
                  "--output-dir", out_dir], env={"ETRT_PLUGIN_PATH": str(built)})
    assert "scaled_swish 1.0.0" in result.stdout, result.stdout
    assert_matches_eager(out_dir / "output_0.npy", exported / "expected_0.npy")


def test_cpp_host_runs_the_program_with_the_plugin_from_its_manifest(built, exported, work):
    output = work / "host-out.npy"
    result = run([built / "swish_host", built / "scaled_swish.json", exported / "swish_mlp.pte",
                  exported / "input_0.npy", output])
    assert "loaded: scaled_swish 1.0.0" in result.stdout, result.stdout
    assert_matches_eager(output, exported / "expected_0.npy")


def test_python_runs_the_program_with_load_plugin_on_the_pip_installed_package(venv, example, exported, work):
    python, package = venv
    built = build_example(example, package, work / "custom_op-build-wheel")  # against the wheel's SDK this time
    result = run([python, example / "run_etrt.py", built / "scaled_swish.json", exported / "swish_mlp.pte",
                  exported / "input_0.npy", exported / "expected_0.npy"], cwd=work)
    assert "scaled_swish" in result.stdout.split("loaded plugins:")[1], result.stdout
    difference = float(re.search(r"max \|etrt - eager\| = (\S+)", result.stdout).group(1))
    assert difference <= 1e-5, result.stdout


def test_without_the_plugin_method_load_names_the_operator_and_where_it_looked(prefix, venv, exported, work):
    result = run([prefix / "bin" / "etrt", "run", exported / "swish_mlp.pte", "--input", exported / "input_0.npy"],
                 check=False)
    assert result.returncode != 0, result.stdout
    assert OPERATOR in result.stderr, result.stderr
    assert str((prefix / "lib" / "etrt" / "manifests").resolve()) in result.stderr, result.stderr

    python, package = venv
    probe = ("import etrt, sys\n"
             f"program = etrt.Runtime.get().load_program({str(exported / 'swish_mlp.pte')!r})\n"
             "try:\n"
             "    program.load_method('forward')\n"
             "except etrt.Error as error:\n"
             "    print(error)\n"
             "    sys.exit(0)\n"
             "sys.exit('the method loaded without its operator')\n")
    message = run([python, "-c", probe], cwd=work).stdout
    assert OPERATOR in message and str(package / "lib" / "etrt" / "manifests") in message, message


def test_a_plugin_built_for_an_older_abi_minor_serves_the_program(example, prefix, exported, work):
    built = build_example(example, prefix, work / "custom_op-build-minor-1", "-DETRT_PLUGIN_ABI_MINOR=1")
    manifest = json.loads((built / "scaled_swish.json").read_text())
    assert manifest["abi"]["minor"] == 1, manifest
    commands = run(["ninja", "-C", built, "-t", "commands", "etrt_plugin_scaled_swish"]).stdout
    assert "-DET_ABI_TARGET_MINOR=1" in commands
    out_dir = work / "minor-1-out"
    env = {"ETRT_PLUGIN_PATH": str(built)}
    run([prefix / "bin" / "etrt", "run", exported / "swish_mlp.pte", "--input", exported / "input_0.npy",
         "--output-dir", out_dir], env=env)
    assert_matches_eager(out_dir / "output_0.npy", exported / "expected_0.npy")
    report = json.loads(run([prefix / "bin" / "etrt", "plugins", "--json", "--load-all"], env=env).stdout)
    plugin = next(p for p in report["plugins"] if p["name"] == "scaled_swish")
    assert plugin["state"] == "loaded" and not plugin["warnings"], plugin
    assert plugin["built_abi"] == "1.1" and plugin["abi"] == "1.1", plugin  # spoken at the plugin's minor


def write_consumer(directory, find_package_line):
    directory.mkdir()
    (directory / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.22)\nproject(consumer LANGUAGES CXX)\n{find_package_line}\n")
    return directory


def test_find_package_refuses_a_too_old_or_absent_etrt_clearly(prefix, work):
    newer = write_consumer(work / "wants-0.2", "find_package(etrt 0.2 REQUIRED)")
    result = run(["cmake", "-S", newer, "-B", newer / "build", f"-DCMAKE_PREFIX_PATH={prefix}"], check=False)
    assert result.returncode != 0
    text = " ".join(result.stderr.split())
    assert "requested version \"0.2\"" in text and "version: 0.1" in text, result.stderr

    absent = write_consumer(work / "no-etrt", "find_package(etrt 0.1 REQUIRED)")
    result = run(["cmake", "-S", absent, "-B", absent / "build", "-DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF"],
                 check=False)
    assert result.returncode != 0
    assert "etrtConfig.cmake" in result.stderr, result.stderr


def test_an_abi_minor_newer_than_the_sdk_is_refused_at_configure(example, prefix, work):
    result = run(["cmake", "-S", example, "-B", work / "custom_op-build-minor-9", "-G", "Ninja",
                  f"-DCMAKE_PREFIX_PATH={prefix}", "-DETRT_PLUGIN_ABI_MINOR=9"], check=False)
    assert result.returncode != 0
    header = (prefix / "include" / "etrt" / "plugin_api.h").read_text()
    minor = re.search(r"#define ET_ABI_MINOR (\d+)", header).group(1)
    assert f"ABI_MINOR 9 is not a minor of the ABI this SDK has (1.0 to 1.{minor})" in " ".join(result.stderr.split()), \
        result.stderr


def test_strip_needs_the_manifest_regenerated_as_the_guide_says(example, prefix, built, exported, work):
    stripped = work / "custom_op-stripped"
    shutil.copytree(built, stripped, ignore=shutil.ignore_patterns("CMakeFiles"))
    library = stripped / "libetrt_scaled_swish.so.1"
    run(["strip", "--strip-unneeded", library])
    cli = [prefix / "bin" / "etrt", "run", exported / "swish_mlp.pte", "--input", exported / "input_0.npy"]
    refused = run(cli, env={"ETRT_PLUGIN_PATH": str(stripped)}, check=False)
    assert refused.returncode != 0 and "SHA-256 mismatch" in refused.stderr, refused.stderr
    # The command of docs/PLUGIN_GUIDE.md section 5.
    run(["cmake", f"-DTEMPLATE={example / 'scaled_swish.json.in'}", f"-DOUTPUT={stripped / 'scaled_swish.json'}",
         f"-DLIBRARY={library}", "-DLIBRARY_REL=libetrt_scaled_swish.so.1", "-DABI_MAJOR=1", "-DABI_MINOR=2",
         "-DVERSION=1.0.0", f"-DOPERATOR_LIST={example / 'scaled_swish.def'}",
         "-P", prefix / "lib" / "cmake" / "etrt" / "write_manifest.cmake"])
    assert "scaled_swish 1.0.0" in run(cli, env={"ETRT_PLUGIN_PATH": str(stripped)}).stdout


def test_the_guide_ships_with_the_sdk_and_the_wheel(prefix, venv):
    for root in [prefix, venv[1]]:
        guide = root / "share" / "doc" / "etrt" / "PLUGIN_GUIDE.md"
        assert guide.is_file() and "ET_ABI_TARGET_MINOR" in guide.read_text(), guide


C_PLUGIN = """#include "etrt/plugin_api.h"
static et_error* init(const et_host_api* host, et_plugin_handle* self) { (void)host; (void)self; return NULL; }
static const et_plugin_info kInfo = {sizeof(et_plugin_info), ET_ABI_MAJOR, ET_ABI_TARGET_MINOR, "c_plugin", "1.0.0",
                                     "a plugin in C", init};
ET_PLUGIN_EXPORT int32_t et_plugin_entry(const et_abi_offer* offer, et_abi_answer* answer) {
  return et_plugin_answer_offer(offer, answer, &kInfo);
}
"""


def test_a_c_only_project_builds_a_plugin_without_the_cxx_features(prefix, work):
    project = write_consumer(work / "c-plugin", "find_package(etrt 0.1 REQUIRED)\n"
                             "etrt_add_plugin(NAME c_plugin SOURCES c_plugin.c NO_INSTALL)")
    (project / "CMakeLists.txt").write_text((project / "CMakeLists.txt").read_text().replace("LANGUAGES CXX",
                                                                                             "VERSION 1.0 LANGUAGES C"))
    (project / "c_plugin.c").write_text(C_PLUGIN)
    build_example(project, prefix, project / "build")
    assert (project / "build" / "libetrt_c_plugin.so.1").is_file()
