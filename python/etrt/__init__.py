"""etrt: run ExecuTorch programs (.pte) with a small core and on-demand plugins.

Drop-in for ``executorch.runtime``::

    from etrt import Runtime          # instead of: from executorch.runtime import Runtime
    program = Runtime.get().load_program("model.pte")
    outputs = program.load_method("forward").execute([x])

``import etrt`` loads libetrt only: no plugin, no torch (and NumPy only when a
method first runs). Loading a method loads exactly the plugins its operators
and delegates need.
"""
from __future__ import annotations

import enum
import functools
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Set, Union

from . import _etrt
from ._etrt import Error

__all__ = ["Runtime", "Program", "Method", "MethodMeta", "TensorInfo", "Verification", "Error",
           "OperatorRegistry", "BackendRegistry", "load_plugin", "add_manifest", "plugins", "rejections",
           "set_num_threads", "num_threads", "report", "__version__"]

__version__ = _etrt.version()


class Verification(enum.IntEnum):
    """Accepted for executorch.runtime compatibility. etrt always verifies fully
    (flatbuffer verifier plus bounds checks), whichever level is asked for."""
    Minimal = 0
    InternalConsistency = 1


# --------------------------------------------------------------- plugins etc.

def load_plugin(path: Union[str, os.PathLike]) -> None:
    """Loads one plugin now: a .so (with or without manifest) or a manifest .json."""
    _etrt.load_plugin(os.fspath(path))


def add_manifest(path: Union[str, os.PathLike]) -> None:
    """Adds a manifest file or a directory of manifests to those consulted. Loads nothing."""
    _etrt.add_manifest(os.fspath(path))


def plugins() -> List[Dict[str, Any]]:
    """Every plugin the loader knows, with its state ('declared'/'loaded'/'failed'),
    source, priority, negotiated ABI and the reason of any failure."""
    return _etrt.plugins()


def rejections() -> List[tuple]:
    """(path, reason) for every file, manifest or plugin the loader turned down."""
    return _etrt.rejections()


def report() -> str:
    """The whole loader/registry state as JSON (what `etrt plugins --json` prints)."""
    return _etrt.report_json()


def set_num_threads(n: int) -> None:
    """Resizes the process' one thread pool (the calling thread counts as one)."""
    _etrt.set_num_threads(int(n))


def num_threads() -> int:
    return _etrt.num_threads()


# ----------------------------------------------------------------- metadata

class TensorInfo:
    """Shape and type of one tensor input or output (as in executorch)."""

    def __init__(self, info: Dict[str, Any]) -> None:
        self._info = info

    def sizes(self):
        """Sizes (the upper bound for dynamic shapes)."""
        return tuple(self._info["sizes"])

    def dtype(self) -> int:
        """ExecuTorch ScalarType code (6 = float32, ...)."""
        return self._info["dtype"]

    def nbytes(self) -> int:
        return self._info["nbytes"]

    def dim_order(self):
        return tuple(self._info["dim_order"])

    def is_memory_planned(self) -> bool:
        """True when the program places this tensor in one of its planned buffers
        (inputs are then copied in); False when the caller provides its memory."""
        return self._info["memory_id"] > 0

    def __repr__(self) -> str:
        return f"TensorInfo(sizes={list(self.sizes())}, dtype={self.dtype()}, nbytes={self.nbytes()})"


class MethodMeta:
    """What a method takes and returns, from the program alone (as in executorch)."""

    def __init__(self, program: "_etrt.Program", name: str) -> None:
        self._program = program
        self._name = name
        self._info = program.method_info(name)

    def name(self) -> str:
        return self._name

    def num_inputs(self) -> int:
        return self._info["num_inputs"]

    def num_outputs(self) -> int:
        return self._info["num_outputs"]

    def num_attributes(self) -> int:
        return 0

    def num_memory_planned_buffers(self) -> int:
        return self._info["num_planned_buffers"]

    def _tensor(self, output: bool, index: int) -> TensorInfo:
        limit = self.num_outputs() if output else self.num_inputs()
        if not 0 <= index < limit:
            raise IndexError(f"{'output' if output else 'input'} index {index} out of range (0..{limit - 1})")
        info = self._program.io_info(self._name, output, index)
        if info["tag"] != 5:
            raise ValueError(f"{'output' if output else 'input'} {index} of {self._name!r} is not a tensor")
        return TensorInfo(info)

    def input_tensor_meta(self, index: int) -> TensorInfo:
        return self._tensor(False, index)

    def output_tensor_meta(self, index: int) -> TensorInfo:
        return self._tensor(True, index)

    def __repr__(self) -> str:
        return (f"MethodMeta(name={self._name!r}, num_inputs={self.num_inputs()}, "
                f"num_outputs={self.num_outputs()})")


# ------------------------------------------------------------------ running

def _is_torch_tensor(x: Any) -> bool:
    # Never imports torch: a torch tensor can only exist if torch is loaded.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _torch_to_numpy(t: Any):
    import numpy as np
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    try:
        return np.from_dlpack(t)  # zero copy
    except (TypeError, RuntimeError, BufferError, AttributeError):
        return t.contiguous().numpy()


class Method:
    """A loaded method of a program (as in executorch.runtime)."""

    def __init__(self, method: "_etrt.Method", program: "Program", name: str) -> None:
        self._method = method
        self._program = program  # keeps metadata reachable; the C method keeps the program alive itself
        self._name = name

    def execute(self, inputs: Sequence[Any]) -> List[Any]:
        """Runs the method. Inputs: NumPy arrays (or anything with the buffer
        protocol / __array__), torch tensors, ints, floats, bools. Outputs are
        NumPy arrays, or torch tensors when any input was a torch tensor."""
        inputs = list(inputs)
        as_torch = False
        for i, x in enumerate(inputs):
            if _is_torch_tensor(x):
                as_torch = True
                inputs[i] = _torch_to_numpy(x)
        outputs = self._method.execute(inputs)
        if as_torch:
            import torch  # already imported by the caller
            outputs = [torch.from_numpy(o) if hasattr(o, "__array_interface__") else o for o in outputs]
        return outputs

    __call__ = execute

    @property
    def metadata(self) -> MethodMeta:
        return self._program.metadata(self._name)


class Program:
    """A loaded, verified .pte program (as in executorch.runtime)."""

    def __init__(self, program: "_etrt.Program") -> None:
        self._program = program
        self._methods: Dict[str, Method] = {}

    @property
    def method_names(self) -> Set[str]:
        return set(self._program.method_names)

    def load_method(self, name: str) -> Optional[Method]:
        """Loads (once) and returns the method; loads the plugins it needs.
        Unknown names return None, as executorch does."""
        method = self._methods.get(name)
        if method is None:
            if name not in self._program.method_names:
                return None
            method = Method(self._program.load_method(name), self, name)
            self._methods[name] = method
        return method

    def metadata(self, method_name: str) -> MethodMeta:
        return MethodMeta(self._program, method_name)

    def operators(self, method_name: str = "forward") -> List[str]:
        return self._program.operators(method_name)

    def delegates(self, method_name: str = "forward") -> List[str]:
        return self._program.delegates(method_name)


class OperatorRegistry:
    """Operators registered by loaded plugins (plugins load on demand, so this grows)."""

    @property
    def operator_names(self) -> Set[str]:
        return {e["name"] for e in _etrt.registry(_etrt.ENTRY_OPERATOR)}

    def entries(self) -> List[Dict[str, Any]]:
        """Every provider of every operator, winner first, with the reason for losers."""
        return _etrt.registry(_etrt.ENTRY_OPERATOR)


class BackendRegistry:
    """Backends registered by loaded plugins."""

    @property
    def registered_backend_names(self) -> List[str]:
        return sorted({e["name"] for e in _etrt.registry(_etrt.ENTRY_BACKEND)})

    def is_available(self, backend_name: str) -> bool:
        return backend_name in self.registered_backend_names

    def entries(self) -> List[Dict[str, Any]]:
        return _etrt.registry(_etrt.ENTRY_BACKEND)


class Runtime:
    """The process' one etrt runtime (as in executorch.runtime)."""

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def get() -> "Runtime":
        return Runtime()

    def __init__(self) -> None:
        self.operator_registry = OperatorRegistry()
        self.backend_registry = BackendRegistry()

    def load_program(self, data: Union[bytes, bytearray, memoryview, BinaryIO, Path, str], *,
                     verification: Verification = Verification.InternalConsistency,
                     enable_etdump: bool = False, debug_buffer_size: int = 0,
                     data_path: Optional[Union[Path, str]] = None) -> Program:
        if enable_etdump or data_path is not None:
            raise NotImplementedError("enable_etdump and data_path are not supported by etrt yet")
        if isinstance(data, (str, os.PathLike)):
            return Program(_etrt.Program.load_file(os.fspath(data)))
        if isinstance(data, (bytes, bytearray, memoryview)):
            return Program(_etrt.Program.load_bytes(data))
        if hasattr(data, "read"):
            origin = getattr(data, "name", None)
            return Program(_etrt.Program.load_bytes(data.read(),
                                                    str(origin) if isinstance(origin, str) else "(file object)"))
        raise TypeError("Expected data to be bytes, bytearray, a path to a .pte file, or a file-like object, "
                        f"but got {type(data).__name__}.")
