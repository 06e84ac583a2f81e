"""`etrt run` on bundled programs (tools/bundled_command.cpp), with .bpte files made by ExecuTorch's
devtools.bundled_program (tests/extensions/bundled_program/make_bundled_programs.py)."""
import os
import subprocess
from pathlib import Path

BUILD = Path(os.environ["ETRT_BUILD_DIR"])
BUNDLED = Path(os.environ["ETRT_SOURCE_DIR"]) / "tests" / "extensions" / "bundled_program" / "generated"
GOOD, WRONG, PLAIN = BUNDLED / "linear_add.bpte", BUNDLED / "linear_add_wrong.bpte", BUNDLED / "linear_add.pte"


def etrt(*args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETRT_")}
    return subprocess.run([str(BUILD / "bin" / "etrt"), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)


def test_a_bundled_program_runs_and_verifies():
    result = etrt("run", GOOD)
    assert result.returncode == 0, result.stderr
    assert "encode (1 test case) forward (2 test cases)" in result.stdout
    assert "forward test case 1: passed (1 outputs)" in result.stdout
    assert "verification passed: 3 of 3 test cases match (rtol=1e-05, atol=1e-08)" in result.stdout


def test_a_wrong_expected_output_fails_with_a_report():
    result = etrt("run", WRONG, "--verify")
    assert result.returncode == 1
    assert ("forward test case 1: FAILED: output 0 1 of 6 elements differ beyond rtol=1e-05 atol=1e-08"
            in result.stdout), result.stdout
    assert "first at element 3" in result.stdout
    assert "verification FAILED: 2 of 3 test cases match" in result.stdout


def test_executor_runner_flags_choose_the_case_and_the_tolerance():
    one_case = etrt("run", "--model_path", WRONG, "--verify", "--method_name", "forward", "--testset_idx", "0")
    assert one_case.returncode == 0, one_case.stdout + one_case.stderr
    assert "verification passed: 1 of 1 test cases match" in one_case.stdout
    loose = etrt("run", WRONG, "--verify", "--bundleio_atol=0.6", "--bundleio_rtol", "0")
    assert loose.returncode == 0, loose.stdout
    assert "(rtol=0, atol=0.6)" in loose.stdout


def test_usage_errors_name_the_problem():
    plain = etrt("run", PLAIN, "--verify")
    assert plain.returncode == 2
    assert "is not a bundled program (.bpte): run a plain program without --verify" in plain.stderr
    bad = etrt("run", GOOD, "--bundleio_rtol", "abc")
    assert bad.returncode == 2 and "--bundleio_rtol takes a non-negative number, not 'abc'" in bad.stderr
    other = etrt("run", GOOD, "--iterations", "3")
    assert other.returncode == 2 and "option '--iterations' does not apply to a bundled program" in other.stderr
    missing = etrt("run", GOOD, "--verify", "--method_name", "decode")
    assert missing.returncode == 2 and "no test suite for method 'decode' (it has: encode, forward)" in missing.stderr
    out_of_range = etrt("run", GOOD, "--testset_idx", "5")
    assert out_of_range.returncode == 2 and "test case 5 of forward is out of range (2 cases)" in out_of_range.stderr


def test_a_plain_program_still_runs_as_before():
    result = etrt("run", PLAIN)
    assert result.returncode == 0, result.stderr
