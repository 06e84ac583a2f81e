"""ExecuTorch's own runtime tests (executorch/runtime/test), run on the installed etrt with
`executorch.runtime` swapped for `etrt`. See upstream_suite.py for what a pass requires."""

from upstream_suite import run_suite

SWAP = {"from executorch.runtime import": "from etrt import"}


def test_executorch_runtime_suite():
    run_suite("runtime/test/test_runtime.py", SWAP, min_passed=5)


def test_executorch_runtime_xnnpack_suite():
    run_suite("runtime/test/test_runtime_xnnpack.py", SWAP, min_passed=7)


def test_executorch_runtime_etdump_suite():
    run_suite("runtime/test/test_runtime_etdump_gen.py", SWAP, min_passed=2)
