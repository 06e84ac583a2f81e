"""The SDK's deprecations warn and fail nothing (docs/PLUGIN_GUIDE.md, "SDK stability").

A plugin source written against SDK 1.1 is compiled the way its author would compile it against today's
headers: it compiles, and every deprecated helper it calls draws a warning that names the replacement.
Every deprecated helper of the SDK is called by one of tests/sdk's sources, so each is built and run.
"""

import os
import pathlib
import re
import subprocess

HERE = pathlib.Path(__file__).parent
SDK_INCLUDE = pathlib.Path(os.environ["ETRT_SDK_INCLUDE"])
CXX = os.environ["ETRT_CXX"]


def compile_source(source, *flags):
    command = [CXX, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Wno-unused-parameter", f"-I{SDK_INCLUDE}",
               '-DSDK_PLUGIN_NAME="sdk_test"', *flags, str(source)]
    # LC_ALL=C: the compiler quotes names with ASCII quotes.
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})


def deprecated_helpers():
    """{name: message} of every [[deprecated("...")]] function in the SDK's headers."""
    found = {}
    for header in sorted((SDK_INCLUDE / "etrt").glob("*.hpp")):
        text = header.read_text()
        for match in re.finditer(r'\[\[deprecated\("([^"]+)"\)\]\]\s*inline\s+[^(]*?\b(\w+)\s*\(', text):
            found[match.group(2)] = match.group(1)
    return found


def test_the_sdk_declares_its_deprecations():
    helpers = deprecated_helpers()
    assert {"expect_args", "expect_tensor"} <= set(helpers), helpers
    for name, message in helpers.items():
        assert message.startswith("use "), f"{name}: the warning must name the replacement: {message!r}"


def test_an_sdk_1_1_plugin_compiles_and_each_deprecated_call_warns_naming_the_replacement():
    result = compile_source(HERE / "sdk_1_1_plugin.cpp")
    assert result.returncode == 0, result.stderr
    for name in ("expect_args", "expect_tensor"):
        message = deprecated_helpers()[name]
        assert re.search(rf"'[^']*\b{name}\b[^']*' is deprecated: {re.escape(message)}", result.stderr), \
            result.stderr
    assert "error:" not in result.stderr


def test_a_deprecation_is_a_warning_only():
    # -Werror would make it fail: the SDK's own builds keep deprecations warnings (tests/sdk/CMakeLists.txt).
    strict = compile_source(HERE / "sdk_1_1_plugin.cpp", "-Werror")
    assert strict.returncode != 0 and "deprecated" in strict.stderr
    allowed = compile_source(HERE / "sdk_1_1_plugin.cpp", "-Werror", "-Wno-error=deprecated-declarations")
    assert allowed.returncode == 0, allowed.stderr


def test_every_deprecated_helper_is_called_by_an_earlier_sdk_source():
    sources = "".join(path.read_text() for path in sorted(HERE.glob("sdk_*_plugin.cpp")))
    for name in deprecated_helpers():
        assert re.search(rf"\b{name}\s*\(", sources), f"{name} is deprecated but no tests/sdk source calls it"
