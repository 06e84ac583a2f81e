"""etrt.portable_lib: the names of ExecuTorch's executorch.extension.pybindings.portable_lib, on etrt.

Code written for ExecuTorch's pybindings runs with one import changed::

    from executorch.extension.pybindings import portable_lib   ->   from etrt import portable_lib

Programs load through etrt's runtime (every plugin and its registry, one thread pool); bundled
programs (.bpte) are read by libetrt_bundled_program (etrt._bundled). Outputs are torch tensors,
as ExecuTorch's are (torch is imported on first run). Differences, each raising with the reason:
ExecuTorchMethod.get_attribute (etrt's C API does not expose method attributes), and the profiling
hooks of ExecuTorch's own profiler build (_create_profile_block etc.: use enable_etdump).
"""

from __future__ import annotations

import os
from typing import Any, List, Optional, Sequence, Union

from . import MethodMeta, Program, Runtime, TensorInfo, Verification, _bundled, num_threads, set_num_threads

__all__ = [
    "BundledModule", "ExecuTorchMethod", "ExecuTorchModule", "ExecuTorchProgram", "MethodMeta", "TensorInfo",
    "Verification", "_get_operator_names", "_get_registered_backend_names", "_is_available",
    "_load_bundled_program_from_buffer", "_load_for_executorch", "_load_for_executorch_from_buffer",
    "_load_for_executorch_from_bundled_program", "_load_program", "_load_program_from_buffer",
    "_threadpool_get_thread_count", "_unsafe_reset_threadpool",
]

_DEFAULT_RTOL = 1e-5
_DEFAULT_ATOL = 1e-8


def _as_inputs(inputs: Any) -> List[Any]:
    """ExecuTorch's calling convention: a sequence of inputs, or a single tensor/scalar."""
    if isinstance(inputs, (list, tuple)):
        for i, item in enumerate(inputs):
            if isinstance(item, (list, tuple, dict)):
                raise RuntimeError(f"input {i} is a {type(item).__name__}: inputs are tensors and scalars")
        return list(inputs)
    return [inputs]


def _converted_inputs(inputs: List[Any]) -> List[Any]:
    """Torch tensors as the method can take them, as ExecuTorch's portable build converts them: on the
    CPU (a CUDA tensor is copied), other devices refused naming the input."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return inputs
    out = list(inputs)
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.device.type != "cpu":
            if x.device.type != "cuda":
                raise RuntimeError(f"input {i} is on device {x.device}: only CPU and CUDA tensors can be given "
                                   "(a CUDA tensor is copied to the CPU)")
            out[i] = x.cpu()
    return out


def _as_torch(outputs: List[Any]) -> List[Any]:
    import torch

    return [torch.from_numpy(o) if hasattr(o, "__array_interface__") else o for o in outputs]


def _runtime_error(error: BaseException) -> RuntimeError:
    """ExecuTorch raises RuntimeError for every runtime failure; etrt's Error already is one."""
    if isinstance(error, RuntimeError):
        return error
    return RuntimeError(str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error))


class ExecuTorchMethod:
    """One loaded method (executorch's ExecuTorchMethod)."""

    def __init__(self, program: Program, name: str) -> None:
        try:
            self._method = program.load_method(name)
        except KeyError as error:
            raise _runtime_error(error) from None
        self._program = program
        self._name = name
        self._inputs: Optional[List[Any]] = None
        self._outputs: Optional[List[Any]] = None

    def set_inputs(self, inputs: Sequence[Any]) -> None:
        self._inputs = _converted_inputs(_as_inputs(inputs))

    def execute(self) -> None:
        if self._inputs is None:
            raise RuntimeError(f"{self._name}: set_inputs before execute")
        self._outputs = self._method.execute(self._inputs)

    def get_outputs(self, clone_outputs: bool = True) -> List[Any]:
        """The last run's outputs (copies already: clone_outputs changes nothing)."""
        if self._outputs is None:
            raise RuntimeError(f"{self._name} has not run yet")
        return _as_torch(self._outputs)

    def call(self, inputs: Any = (), clone_outputs: bool = True) -> List[Any]:
        self.set_inputs(inputs)
        self.execute()
        return self.get_outputs(clone_outputs)

    __call__ = call

    def method_meta(self) -> MethodMeta:
        return self._program.metadata(self._name)

    def get_attribute(self, name: str) -> Any:
        raise NotImplementedError(f"get_attribute({name!r}): etrt's runtime does not expose method attributes")


class ExecuTorchProgram:
    """A loaded program whose methods are loaded one by one (executorch's ExecuTorchProgram)."""

    def __init__(self, program: Program) -> None:
        self._program = program
        # ExecuTorch numbers methods in the program's order; etrt keeps that order in its native program.
        self._names = list(program._program.method_names)

    def num_methods(self) -> int:
        return len(self._names)

    def get_method_name(self, index: int) -> str:
        if not 0 <= index < len(self._names):
            raise RuntimeError(f"method index {index} is out of range: the program has {len(self._names)} methods")
        return self._names[index]

    def load_method(self, name: str) -> ExecuTorchMethod:
        return ExecuTorchMethod(self._program, name)

    def method_meta(self, name: str) -> MethodMeta:
        return self._program.metadata(name)

    def has_etdump(self) -> bool:
        return self._program._trace is not None

    def write_etdump_result_to_file(self, path: str, debug_buffer_path: Optional[str] = None) -> None:
        self._program.write_etdump_result_to_file(path, debug_buffer_path)


class ExecuTorchModule:
    """A program with its methods loaded on first use (executorch's ExecuTorchModule)."""

    def __init__(self, program: Program) -> None:
        self._program = program
        self._planned_inputs: dict = {}

    def run_method(self, method_name: str, inputs: Any = (), clone_outputs: bool = True) -> List[Any]:
        try:
            method = self._program.load_method(method_name)
        except KeyError as error:
            raise _runtime_error(error) from None
        return _as_torch(method.execute(_converted_inputs(_as_inputs(inputs))))

    def forward(self, inputs: Any = (), clone_outputs: bool = True) -> List[Any]:
        return self.run_method("forward", inputs, clone_outputs)

    __call__ = forward

    def plan_execute(self, method_name: str, clone_outputs: bool = True) -> List[Any]:
        """Runs the method on the inputs load_bundled_input gave it."""
        inputs = self._planned_inputs.get(method_name)
        if inputs is None:
            raise RuntimeError(f"{method_name}: no inputs were loaded (load_bundled_input)")
        return self.run_method(method_name, inputs, clone_outputs)

    def load_bundled_input(self, bundle: "BundledModule", method_name: str, testset_idx: int) -> None:
        self._planned_inputs[method_name] = bundle._inputs(method_name, testset_idx)

    def verify_result_with_bundled_expected_output(self, bundle: "BundledModule", method_name: str,
                                                   testset_idx: int, rtol: float = _DEFAULT_RTOL,
                                                   atol: float = _DEFAULT_ATOL) -> List[Any]:
        outputs = self.plan_execute(method_name)
        bundle._check(method_name, testset_idx, outputs, rtol, atol)
        return outputs

    def method_meta(self, method_name: str) -> MethodMeta:
        if method_name not in self._program.method_names:
            raise RuntimeError(f"{method_name!r}: the program has no such method")
        return self._program.metadata(method_name)

    def method_names(self) -> List[str]:
        return list(self._program._program.method_names)

    def has_etdump(self) -> bool:
        return self._program._trace is not None

    def write_etdump_result_to_file(self, path: str, debug_buffer_path: Optional[str] = None) -> None:
        self._program.write_etdump_result_to_file(path, debug_buffer_path)


class BundledModule:
    """A bundled program (.bpte): its program, and test cases of inputs and expected outputs."""

    def __init__(self, bundled: "_bundled.BundledProgram") -> None:
        self._bundled = bundled
        self._module: Optional[ExecuTorchModule] = None

    def _inputs(self, method_name: str, testset_idx: int) -> List[Any]:
        return self._bundled.inputs(method_name, testset_idx)

    def _check(self, method_name: str, testset_idx: int, outputs: Sequence[Any], rtol: float, atol: float) -> None:
        arrays = [o.detach().cpu().numpy() if hasattr(o, "detach") else o for o in outputs]
        result = self._bundled.check(method_name, testset_idx, arrays, rtol, atol)
        if not result["passed"]:
            raise RuntimeError(f"Result verification failed: {result['report']}")

    def verify_result_with_bundled_expected_output(self, method_name: str, testset_idx: int,
                                                   rtol: float = _DEFAULT_RTOL,
                                                   atol: float = _DEFAULT_ATOL) -> List[Any]:
        """Runs test case `testset_idx` of `method_name` and checks every output against the expected
        one (|actual - expected| <= atol + rtol * |expected|); returns the outputs, or raises
        RuntimeError naming each output that differs and by how much."""
        if self._module is None:
            self._module = _load_for_executorch_from_bundled_program(self)
        self._module.load_bundled_input(self, method_name, testset_idx)
        return self._module.verify_result_with_bundled_expected_output(self, method_name, testset_idx, rtol, atol)


def _program(data: Any, data_path: Any, enable_etdump: bool, debug_buffer_size: int) -> Program:
    if isinstance(data, (bytes, bytearray, memoryview)) and _bundled.is_bundled_program(data):
        raise RuntimeError("this is a bundled program (.bpte): load it with _load_bundled_program_from_buffer "
                           "and _load_for_executorch_from_bundled_program")
    if isinstance(data, (str, os.PathLike)):
        with open(data, "rb") as f:
            if _bundled.is_bundled_program(f.read(8)):
                raise RuntimeError(f"{os.fspath(data)} is a bundled program (.bpte): load it with "
                                   "_load_bundled_program_from_buffer and _load_for_executorch_from_bundled_program")
    return Runtime.get().load_program(data, enable_etdump=enable_etdump, debug_buffer_size=debug_buffer_size,
                                      data_path=data_path)


def _load_for_executorch(program_path: Union[str, os.PathLike], data_path: Optional[str] = None,
                         enable_etdump: bool = False, debug_buffer_size: int = 0,
                         program_verification: Verification = Verification.InternalConsistency) -> ExecuTorchModule:
    """Loads a .pte (and its .ptd, data_path). etrt verifies every program fully, whatever
    program_verification says."""
    return ExecuTorchModule(_program(program_path, data_path, enable_etdump, debug_buffer_size))


def _load_for_executorch_from_buffer(buffer: Union[bytes, bytearray, memoryview],
                                     data_map_buffer: Optional[bytes] = None, enable_etdump: bool = False,
                                     debug_buffer_size: int = 0,
                                     program_verification: Verification = Verification.InternalConsistency
                                     ) -> ExecuTorchModule:
    return ExecuTorchModule(_program(buffer, data_map_buffer, enable_etdump, debug_buffer_size))


def _load_program(path: Union[str, os.PathLike], enable_etdump: bool = False, debug_buffer_size: int = 0,
                  program_verification: Verification = Verification.Minimal,
                  data_path: Optional[str] = None) -> ExecuTorchProgram:
    return ExecuTorchProgram(_program(path, data_path, enable_etdump, debug_buffer_size))


def _load_program_from_buffer(buffer: Union[bytes, bytearray, memoryview], enable_etdump: bool = False,
                              debug_buffer_size: int = 0,
                              program_verification: Verification = Verification.Minimal,
                              data_path: Optional[str] = None) -> ExecuTorchProgram:
    return ExecuTorchProgram(_program(buffer, data_path, enable_etdump, debug_buffer_size))


def _load_bundled_program_from_buffer(buffer: Union[bytes, bytearray, memoryview],
                                      non_const_pool_size: int = 0) -> BundledModule:
    """Reads and verifies a bundled program (non_const_pool_size is ExecuTorch's arena size: etrt
    plans memory itself). A plain .pte is refused, naming the loader to use."""
    return BundledModule(_bundled.BundledProgram.load_bytes(buffer))


def _load_for_executorch_from_bundled_program(bundle: BundledModule, data_map_buffer: Any = None,
                                              enable_etdump: bool = False,
                                              debug_buffer_size: int = 0) -> ExecuTorchModule:
    if not isinstance(bundle, BundledModule):
        raise TypeError(f"expected a BundledModule (from _load_bundled_program_from_buffer), got "
                        f"{type(bundle).__name__}")
    return ExecuTorchModule(_program(bundle._bundled.program_bytes(), data_map_buffer, enable_etdump,
                                     debug_buffer_size))


def _get_operator_names() -> List[str]:
    """Every operator etrt can serve (registered, or declared by an installed plugin's manifest)."""
    return sorted(Runtime.get().operator_registry.operator_names)


def _get_registered_backend_names() -> List[str]:
    return Runtime.get().backend_registry.registered_backend_names


def _is_available(backend_name: str) -> bool:
    return Runtime.get().backend_registry.is_available(backend_name)


def _unsafe_reset_threadpool(num_threads: int) -> None:
    """Resizes etrt's one thread pool (safe in etrt: runs in flight finish on the old pool)."""
    set_num_threads(num_threads)


def _threadpool_get_thread_count() -> int:
    return num_threads()


def _profiling_unavailable(*args: Any, **kwargs: Any) -> None:
    raise NotImplementedError("ExecuTorch's profiler build hooks are not in etrt: load with enable_etdump=True")


_create_profile_block = _dump_profile_results = _reset_profile_results = _profiling_unavailable
