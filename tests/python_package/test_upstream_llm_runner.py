"""ExecuTorch's own LLM runner tests (executorch/extension/llm/runner/test), run on the installed
etrt with `executorch.extension.llm.runner` swapped for `etrt.llm`. See upstream_suite.py for what a
pass requires.

etrt.llm runs text-only programs: it has no MultimodalRunner (ExecuTorch's runner over a program's
vision/audio encoder and text decoder methods). The suite's import names it, so that one name is
dropped from the import, and the one test that constructs it is left out below. Its data
containers (Image, MultimodalInput, make_image_input) are there, and their tests run."""

from upstream_suite import run_suite

SWAP = {
    "from executorch.extension.llm.runner import (": "from etrt.llm import (",
    "    MultimodalRunner,\n)": ")",
}

LEFT_OUT = {
    "TestMultimodalRunner::test_initialization_failure":
        "constructs a MultimodalRunner, which etrt.llm does not have: it runs text-only programs "
        "(no vision or audio encoder methods)",
}


def test_executorch_llm_runner_suite():
    run_suite("extension/llm/runner/test/test_runner_pybindings.py", SWAP, left_out=LEFT_OUT, min_passed=12)
