"""ExecuTorch's own training tests, run on the installed etrt with `executorch.extension.training` swapped
for `etrt.training`. See upstream_suite.py for what a pass requires (among it: ExecuTorch's
_training_lib and _portable_lib never mapped into the process)."""

from upstream_suite import run_suite

SWAP = {"from executorch.extension.training import": "from etrt.training import"}


def test_executorch_training_pybindings_suite():
    # Exports a Linear + softmax + CrossEntropy module with _export_forward_backward, trains one SGD step
    # through etrt.training and checks that the parameters and the loss changed.
    run_suite("extension/training/pybindings/test/test.py", SWAP, min_passed=1)


def test_executorch_xor_example_export_suite():
    # The XOR example's export (exir only). Importing it from the executorch package would run
    # executorch.extension.training's __init__, which maps ExecuTorch's _training_lib; the example's two
    # files are copied beside the suite instead, so the process never maps ExecuTorch's runtime.
    run_suite("extension/training/examples/XOR/test/test_export.py",
              {"from executorch.extension.training.examples.XOR.export_model import": "from export_model import"},
              min_passed=1,
              extra_files=("extension/training/examples/XOR/export_model.py", "extension/training/examples/XOR/model.py"))
