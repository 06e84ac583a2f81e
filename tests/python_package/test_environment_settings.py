"""One rule for ETRT_* settings the process cannot use: a warning naming the variable, the value and
what it expects, then the default, and the program still runs (core/src/logging.cpp for ETRT_LOG_LEVEL,
threadpool for ETRT_NUM_THREADS, resource limits for the byte sizes)."""
import pytest

from conftest import run_python

RUN_MLP = """
import numpy as np, etrt
program = etrt.Runtime.get().load_program({path!r})
inputs = np.load({inputs!r})
print(program.load_method('forward').execute([inputs[k] for k in sorted(inputs.files)])[0].shape, etrt.num_threads() > 0)
"""


@pytest.mark.parametrize("name, value, warning", [
    ("ETRT_LOG_LEVEL", "bogus", "ignoring ETRT_LOG_LEVEL='bogus': expected trace, debug, info, warn, error, critical "
                                "or off; using the default (warn)"),
    ("ETRT_LOG_LEVEL", "verbose", "ignoring ETRT_LOG_LEVEL='verbose'"),
    ("ETRT_NUM_THREADS", "abc", "ignoring ETRT_NUM_THREADS='abc': expected an integer between 1 and 1024"),
    ("ETRT_MAX_FILE_SIZE", "lots", "ETRT_MAX_FILE_SIZE='lots' is not a byte size (e.g. 512M, 8G); using the default"),
])
def test_a_bad_setting_warns_naming_the_variable_and_the_default_applies(models_dir, tmp_path, name, value, warning):
    code = RUN_MLP.format(path=str(models_dir / "mlp" / "portable.pte"), inputs=str(models_dir / "mlp" / "inputs.npz"))
    result = run_python(code, cwd=tmp_path, env={name: value})
    assert result.stdout.strip() == "(4, 10) True"
    assert warning in result.stderr, result.stderr
    assert result.stderr.count(f"{name}=") == 1, result.stderr  # said once


def test_a_known_log_level_is_used_without_a_warning(models_dir, tmp_path):
    code = RUN_MLP.format(path=str(models_dir / "mlp" / "portable.pte"), inputs=str(models_dir / "mlp" / "inputs.npz"))
    quiet = run_python(code, cwd=tmp_path, env={"ETRT_LOG_LEVEL": "error"})
    assert "ETRT_LOG_LEVEL" not in quiet.stderr
    loud = run_python(code, cwd=tmp_path, env={"ETRT_LOG_LEVEL": "info"})
    assert "ETRT_LOG_LEVEL" not in loud.stderr and "loaded plugin" in loud.stderr, loud.stderr
