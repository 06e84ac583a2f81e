"""ExecuTorch's own pybindings tests (executorch/extension/pybindings/test), run on the installed
etrt with `executorch.extension.pybindings.portable_lib` swapped for `etrt.portable_lib`. See
upstream_suite.py for what a pass requires; every test left out says why."""

from upstream_suite import run_suite

SWAP = {
    "from executorch.extension.pybindings import portable_lib as runtime":
        "from etrt import portable_lib as runtime",
    # The aten build is ExecuTorch's other kernel library; etrt has one runtime, so the fallback goes too.
    "from executorch.extension.pybindings import (  # noqa: F811\n                    aten_lib as runtime,\n"
    "                )": "raise ImportError('etrt has no aten build')",
}

_CHANNELS_LAST = ("the program declares a channels-last input (dim order 0,2,3,1); etrt's Python input "
                  "conversion (python/src/etrt_module.cpp) hands libetrt row-major data only, so the input is "
                  "refused ('data must be dense in the input's dim order') instead of being converted")
_UNPLANNED_OUTPUT = ("outputs not memory-planned (alloc_graph_output=False) need memory from the caller; libetrt's "
                     "C API has no call to give a method output memory (ExecuTorch's set_output_data_ptr)")
_ATTRIBUTES = "method attributes (emit_mutable_buffer_names) are not exposed by libetrt's C API"
_QUANTIZED = ("exporting it needs ExecuTorch's quantized out-variants registered in torch, which importing "
              "ExecuTorch's runtime (_portable_lib) does; the swapped suite must not load that runtime")
LEFT_OUT = {
    "test_channels_last": _CHANNELS_LAST,
    "test_channels_last_in_default_out": _CHANNELS_LAST,
    "test_method_channels_last": _CHANNELS_LAST,
    "test_method_channels_last_in_default_out": _CHANNELS_LAST,
    "test_constant_output_not_memory_planned": _UNPLANNED_OUTPUT,
    "test_method_constant_output_not_memory_planned": _UNPLANNED_OUTPUT,
    "test_method_attribute": _ATTRIBUTES,
    "test_program_method_meta": _ATTRIBUTES + " (it expects num_attributes() == 1)",
    "test_quantized_ops": _QUANTIZED,
    "test_method_quantized_ops": _QUANTIZED,
    "test_program_data_separation": ("etrt verifies a .ptd when it is given: an invalid data buffer raises in "
                                     "_load_for_executorch_from_buffer, where the test expects the error at forward"),
    "test_program_loads_when_one_method_is_device_planned": ("a device-planned method needs ExecuTorch's test "
                                                             "backend BackendWithCompilerDemo and its et_copy "
                                                             "operators, which no etrt plugin provides"),
    "test_device_planned_method_allocates_on_the_device": "CUDA: etrt runs on the CPU (the test skips without CUDA)",
}


def test_executorch_pybindings_suite():
    run_suite("extension/pybindings/test/test_pybindings.py", SWAP, left_out=LEFT_OUT, min_passed=28)


def test_executorch_backend_pybinding_suite():
    run_suite("extension/pybindings/test/test_backend_pybinding.py", {"from executorch.runtime import": "from etrt import"},
              min_passed=2)
