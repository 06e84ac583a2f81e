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
import json
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Set, Tuple, Union

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
    source, priority, negotiated ABI, the CPU level of the library chosen among its
    manifest's variants ('cpu_level', 'cpu_level_reason') and the reason of any failure."""
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

# ExecuTorch's ScalarType names (executorch/runtime/core/portable_type/scalar_type.h), by code: what its
# TensorInfo prints as dtype.
_SCALAR_TYPE_NAMES = {
    0: "Byte", 1: "Char", 2: "Short", 3: "Int", 4: "Long", 5: "Half", 6: "Float", 7: "Double",
    8: "ComplexHalf", 9: "ComplexFloat", 10: "ComplexDouble", 11: "Bool", 12: "QInt8", 13: "QUInt8",
    14: "QInt32", 15: "BFloat16", 16: "QUInt4x2", 17: "QUInt2x4", 18: "Bits1x8", 19: "Bits2x4", 20: "Bits4x2",
    21: "Bits8", 22: "Bits16", 23: "Float8_e5m2", 24: "Float8_e4m3fn", 25: "Float8_e5m2fnuz",
    26: "Float8_e4m3fnuz", 27: "UInt16", 28: "UInt32", 29: "UInt64",
}

# et_value_tag: the kind of a method's input or output.
_TAG_TENSOR = 5
_VALUE_KINDS = {0: "None", 1: "int", 2: "bool", 3: "float", 4: "str", 5: "Tensor"}

# et_shape_dynamism, as the program declares each tensor's shape.
_SHAPE_DYNAMISM = {0: "static", 1: "dynamic_bound", 2: "dynamic_unbound"}


class TensorInfo:
    """Shape and type of one tensor input or output (as in executorch), plus whether its shape is
    dynamic. Prints as executorch's: TensorInfo(sizes=[3, 5], dtype=Float, is_memory_planned=True,
    nbytes=60); a dynamic shape adds shape_dynamism=..."""

    def __init__(self, info: Dict[str, Any]) -> None:
        self._info = info

    def sizes(self) -> Tuple[int, ...]:
        """Sizes (the upper bound for dynamic shapes)."""
        return tuple(self._info["sizes"])

    def dtype(self) -> int:
        """ExecuTorch ScalarType code (6 = Float, ...); dtype_name() gives its name."""
        return self._info["dtype"]

    def dtype_name(self) -> str:
        """The ScalarType's name, as executorch prints it ("Float", "Long", "BFloat16", ...)."""
        return _SCALAR_TYPE_NAMES.get(self.dtype(), f"ScalarType({self.dtype()})")

    def nbytes(self) -> int:
        """Bytes of the tensor (at the upper bound for dynamic shapes)."""
        return self._info["nbytes"]

    def dim_order(self) -> Tuple[int, ...]:
        return tuple(self._info["dim_order"])

    def shape_dynamism(self) -> str:
        """How the program declares the shape: "static", "dynamic_bound" (sizes() is the upper bound)
        or "dynamic_unbound"."""
        return _SHAPE_DYNAMISM.get(self._info["dynamism"], "static")

    def is_dynamic(self) -> bool:
        """True when the shape may change between runs (sizes() is then its upper bound)."""
        return self.shape_dynamism() != "static"

    def is_memory_planned(self) -> bool:
        """True when the program places this tensor in one of its planned buffers
        (inputs are then copied in); False when the caller provides its memory."""
        return self._info["memory_id"] > 0

    def __repr__(self) -> str:
        dynamism = f", shape_dynamism={self.shape_dynamism()}" if self.is_dynamic() else ""
        return (f"TensorInfo(sizes={list(self.sizes())}, dtype={self.dtype_name()}, "
                f"is_memory_planned={self.is_memory_planned()}, nbytes={self.nbytes()}{dynamism})")


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
        """Attribute tensors the method exposes: etrt's programs expose none."""
        return 0

    def num_memory_planned_buffers(self) -> int:
        return self._info["num_planned_buffers"]

    def _tensor(self, output: bool, index: int) -> TensorInfo:
        limit = self.num_outputs() if output else self.num_inputs()
        if not 0 <= index < limit:
            raise IndexError(f"{'output' if output else 'input'} index {index} out of range (0..{limit - 1})")
        info = self._program.io_info(self._name, output, index)
        if info["tag"] != _TAG_TENSOR:
            raise ValueError(f"{'output' if output else 'input'} {index} of {self._name!r} is not a tensor")
        return TensorInfo(info)

    def input_tensor_meta(self, index: int) -> TensorInfo:
        return self._tensor(False, index)

    def output_tensor_meta(self, index: int) -> TensorInfo:
        return self._tensor(True, index)

    def attribute_tensor_meta(self, index: int) -> TensorInfo:
        raise IndexError(f"attribute index {index} out of range: method {self._name!r} has no attribute tensors")

    def _io_texts(self, output: bool) -> List[str]:
        """Each input's or output's TensorInfo text; a value that is not a tensor by its kind."""
        texts = []
        for index in range(self.num_outputs() if output else self.num_inputs()):
            info = self._program.io_info(self._name, output, index)
            texts.append(repr(TensorInfo(info)) if info["tag"] == _TAG_TENSOR else _VALUE_KINDS.get(info["tag"], "None"))
        return texts

    def __repr__(self) -> str:
        return (f"MethodMeta(name={self._name!r}, num_inputs={self.num_inputs()}, "
                f"input_tensor_meta={self._io_texts(False)}, num_outputs={self.num_outputs()}, "
                f"output_tensor_meta={self._io_texts(True)})")


# ------------------------------------------------------------------ running

def _is_torch_tensor(x: Any) -> bool:
    # Never imports torch: a torch tensor can only exist if torch is loaded.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _torch_to_numpy(t: Any):
    import numpy as np
    # A lazily negated or conjugated view (x.conj().imag, x.conj()) keeps its bits in flags that DLPack
    # does not carry: np.from_dlpack would read -t as +t. Materialise them first (no-ops otherwise).
    t = t.detach().resolve_conj().resolve_neg()
    if t.device.type != "cpu":
        t = t.cpu()
    try:
        return np.from_dlpack(t)  # zero copy
    except (TypeError, RuntimeError, BufferError, AttributeError):
        return t.contiguous().numpy()


_DTYPE_BFLOAT16 = 15


def _bfloat16_output(bits: Any, as_torch: bool) -> Any:
    """A bfloat16 output arrives as its uint16 bits: a torch.bfloat16 tensor when torch is in use
    (imported), else float32 NumPy (every bfloat16 value is exactly a float32)."""
    if not hasattr(bits, "view"):
        return bits
    if as_torch or "torch" in sys.modules:
        import torch
        return torch.from_numpy(bits.view("int16")).view(torch.bfloat16)
    import numpy as np
    return (bits.astype(np.uint32) << 16).view(np.float32)


class Method:
    """A loaded method of a program (as in executorch.runtime)."""

    def __init__(self, method: "_etrt.Method", program: "Program", name: str) -> None:
        self._method = method
        self._program = program  # keeps metadata reachable; the C method keeps the program alive itself
        self._name = name
        self._bfloat16_output_indices: Optional[List[int]] = None

    def execute(self, inputs: Sequence[Any]) -> List[Any]:
        """Runs the method. Inputs: NumPy arrays (or anything with the buffer
        protocol / __array__), torch tensors, ints, floats, bools. Outputs are
        NumPy arrays, or torch tensors when any input was a torch tensor."""
        inputs = list(inputs)
        as_torch = False
        bfloat16_inputs = []
        for i, x in enumerate(inputs):
            if _is_torch_tensor(x):
                as_torch = True
                if str(x.dtype) == "torch.bfloat16":  # NumPy has no bfloat16: its bits cross as int16
                    import torch  # already imported by the caller
                    x = x.view(torch.int16)
                    bfloat16_inputs.append(i)
                inputs[i] = _torch_to_numpy(x)
        outputs = self._method.execute(inputs, bfloat16_inputs)
        for i in self._bfloat16_outputs():
            outputs[i] = _bfloat16_output(outputs[i], as_torch)
        if as_torch:
            import torch  # already imported by the caller
            outputs = [torch.from_numpy(o) if hasattr(o, "__array_interface__") else o for o in outputs]
        return outputs

    def _bfloat16_outputs(self) -> List[int]:
        if self._bfloat16_output_indices is None:
            infos = [self._program._program.io_info(self._name, True, i) for i in range(self._method.num_outputs)]
            self._bfloat16_output_indices = [i for i, info in enumerate(infos)
                                             if info["tag"] == _TAG_TENSOR and info["dtype"] == _DTYPE_BFLOAT16]
        return self._bfloat16_output_indices

    __call__ = execute

    @property
    def metadata(self) -> MethodMeta:
        return self._program.metadata(self._name)


def _method_name(name: Union[str, bytes]) -> str:
    """A method name as method_names spells it: bytes are decoded as the names are (surrogateescape)."""
    if isinstance(name, (bytes, bytearray)):
        return bytes(name).decode("utf-8", "surrogateescape")
    return name


class Program:
    """A loaded, verified .pte program (as in executorch.runtime)."""

    def __init__(self, program: "_etrt.Program", trace: Optional["_etrt.TraceSession"] = None,
                 debug_buffer_size: int = 0) -> None:
        self._program = program
        self._methods: Dict[str, Method] = {}
        self._trace = trace  # one ETDump session for every method, as executorch's ETDumpGen
        self._debug_buffer_size = debug_buffer_size

    @property
    def method_names(self) -> Set[str]:
        """The program's method names. A program may name a method with bytes that are not UTF-8: such a
        name comes decoded with surrogateescape (as os.fsdecode decodes file names), and every method
        takes that name back, as it is or as the original bytes."""
        return set(self._program.method_names)

    def load_method(self, name: Union[str, bytes]) -> Method:
        """Loads (once) and returns the method; loads the plugins it needs.
        A name the program lacks raises KeyError, as executorch does."""
        name = _method_name(name)
        method = self._methods.get(name)
        if method is None:
            if name not in self._program.method_names:
                raise KeyError(f"{name!r}: the program has no such method (it has "
                               f"{', '.join(repr(n) for n in sorted(self._program.method_names))})")
            loaded = self._program.load_method(name)
            if self._trace is not None:
                loaded.set_trace_session(self._trace)
            method = Method(loaded, self, name)
            self._methods[name] = method
        return method

    def write_etdump_result_to_file(self, etdump_path: Union[str, os.PathLike],
                                    debug_buffer_path: Optional[Union[str, os.PathLike]] = None) -> None:
        """Writes the ETDump of every run of this program's methods so far (and,
        when the program was loaded with debug_buffer_size > 0, the debug
        buffer the dump's tensors point into), for executorch.devtools.Inspector."""
        if self._trace is None:
            raise RuntimeError("ETDump is not enabled for this program: load it with "
                               "Runtime.get().load_program(..., enable_etdump=True)")
        if debug_buffer_path is not None and self._debug_buffer_size <= 0:
            raise ValueError("debug_buffer_path given, but the program was loaded with debug_buffer_size=0: "
                             "load it with debug_buffer_size=N to record intermediate outputs")
        etdump = self._trace.result("etdump")  # raises when the debug buffer was too small
        buffer = self._trace.result("debug_buffer") if debug_buffer_path is not None else None
        Path(os.fspath(etdump_path)).write_bytes(etdump)
        if buffer is not None:
            Path(os.fspath(debug_buffer_path)).write_bytes(buffer)

    def write_chrome_trace(self, path: Union[str, os.PathLike]) -> None:
        """Writes the traced runs as Chrome trace JSON (open it in Perfetto's UI)."""
        if self._trace is None:
            raise RuntimeError("tracing is not enabled for this program: load it with enable_etdump=True")
        Path(os.fspath(path)).write_bytes(self._trace.result("chrome_trace"))

    def metadata(self, method_name: Union[str, bytes]) -> MethodMeta:
        return MethodMeta(self._program, _method_name(method_name))

    def operators(self, method_name: str = "forward") -> List[str]:
        return self._program.operators(method_name)

    def delegates(self, method_name: str = "forward") -> List[str]:
        return self._program.delegates(method_name)


def _served_names(kind: str, entry_kind: int) -> Set[str]:
    """Names a lookup would serve: registered by a loaded plugin, or declared by the manifest of
    a plugin that has not failed (it would be loaded on first use). Maps nothing."""
    names = {e["name"] for e in _etrt.registry(entry_kind)}
    for plugin in json.loads(_etrt.report_json())["plugins"]:
        if plugin["state"] != "failed":
            names.update(plugin["declares"][kind])
    return names


class OperatorRegistry:
    """The operators etrt can serve: registered by loaded plugins or declared by installed
    manifests (answered without loading anything, as executorch.runtime answers before any run)."""

    @property
    def operator_names(self) -> Set[str]:
        return _served_names("operators", _etrt.ENTRY_OPERATOR)

    def entries(self) -> List[Dict[str, Any]]:
        """Every provider of every operator, winner first, with the reason for losers."""
        return _etrt.registry(_etrt.ENTRY_OPERATOR)


class BackendRegistry:
    """The backends etrt can serve: registered or declared by an installed manifest (nothing is loaded
    to answer)."""

    @property
    def registered_backend_names(self) -> List[str]:
        return sorted(_served_names("backends", _etrt.ENTRY_BACKEND))

    def is_available(self, backend_name: str) -> bool:
        """True when a plugin registers or declares the backend. Whether it runs on this machine is
        decided when a program first uses it (the plugin's own check, e.g. XNNPACK's CPU support)."""
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
                     data_path: Optional[Union[Path, str, bytes, bytearray, memoryview, BinaryIO,
                                                Sequence[Union[Path, str]]]] = None) -> Program:
        """Loads and verifies a program. `data_path` names the weights exported outside it
        (ExecuTorch's .ptd files): a path, several paths, or the file's bytes. `enable_etdump` traces
        every method of the program into one ETDump (with `debug_buffer_size` bytes for intermediate
        outputs); write it with Program.write_etdump_result_to_file."""
        if not isinstance(debug_buffer_size, int) or isinstance(debug_buffer_size, bool) or debug_buffer_size < 0:
            raise ValueError(f"debug_buffer_size must be a non-negative int, got {debug_buffer_size!r}")
        if debug_buffer_size > 0 and not enable_etdump:
            raise ValueError("debug_buffer_size needs enable_etdump=True")
        native, label = _load_native_program(data)
        for item in _data_sources(data_path):
            if isinstance(item, (str, os.PathLike)):
                native.add_data_file(os.fspath(item))
            elif isinstance(item, (bytes, bytearray, memoryview)):
                native.add_data_bytes(item)
            else:
                origin = getattr(item, "name", None)
                native.add_data_bytes(item.read(), str(origin) if isinstance(origin, str) else "(file object)")
        if not enable_etdump:
            return Program(native)
        return Program(native, _etrt.TraceSession("etdump", debug_buffer_size, label), debug_buffer_size)


def _load_native_program(data):
    """The native program and the label that names it (in errors and traces)."""
    if isinstance(data, (str, os.PathLike)):
        return _etrt.Program.load_file(os.fspath(data)), os.fspath(data)
    if isinstance(data, (bytes, bytearray, memoryview)):
        return _etrt.Program.load_bytes(data), "(program bytes)"
    if hasattr(data, "read"):
        origin = getattr(data, "name", None)
        label = str(origin) if isinstance(origin, str) else "(file object)"
        return _etrt.Program.load_bytes(data.read(), label), label
    raise TypeError("Expected data to be bytes, bytearray, a path to a .pte file, or a file-like object, "
                    f"but got {type(data).__name__}.")


def _data_sources(data_path) -> list:
    if data_path is None:
        return []
    if isinstance(data_path, (str, os.PathLike, bytes, bytearray, memoryview)) or hasattr(data_path, "read"):
        return [data_path]
    if isinstance(data_path, (list, tuple)):
        for item in data_path:
            if not (isinstance(item, (str, os.PathLike, bytes, bytearray, memoryview)) or hasattr(item, "read")):
                raise TypeError(f"data_path entries must be paths, bytes or file objects, got {type(item).__name__}")
        return list(data_path)
    raise TypeError(f"data_path must be a path, bytes, a file object or a list of them, got {type(data_path).__name__}")


# Plugins installed by pip (entry points of the group etrt.plugins, python/etrt/_entry_points.py):
# their manifests are registered, nothing is loaded.
from ._entry_points import plugin_packages, register_installed_plugins as _register_installed_plugins  # noqa: E402

_register_installed_plugins()
