"""A ctypes view of libetrt's C API, for tests and benchmarks that must run
etrt and ExecuTorch in one Python process. (The real `etrt` Python package is
a pybind11 module; this file only mirrors the C structs it needs.)"""
import ctypes
import os
from pathlib import Path

import numpy as np

MAX_RANK = 16
VALUE_TENSOR, VALUE_INT, VALUE_BOOL, VALUE_DOUBLE = 5, 1, 2, 3

NUMPY_TO_DTYPE = {np.dtype(np.uint8): 0, np.dtype(np.int8): 1, np.dtype(np.int16): 2, np.dtype(np.int32): 3,
                  np.dtype(np.int64): 4, np.dtype(np.float16): 5, np.dtype(np.float32): 6,
                  np.dtype(np.float64): 7, np.dtype(np.bool_): 11}
DTYPE_TO_NUMPY = {v: k for k, v in NUMPY_TO_DTYPE.items()}


class Tensor(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("sizes", ctypes.POINTER(ctypes.c_int64)), ("dim_order", ctypes.POINTER(ctypes.c_uint8)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p),
                ("nbytes", ctypes.c_size_t), ("capacity_bytes", ctypes.c_size_t),
                ("dynamism", ctypes.c_int32), ("is_const", ctypes.c_int32)]


class Value(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("tag", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("as_int", ctypes.c_int64), ("as_double", ctypes.c_double), ("tensor", ctypes.POINTER(Tensor)),
                ("items", ctypes.c_void_p), ("count", ctypes.c_size_t),
                ("value_indices", ctypes.POINTER(ctypes.c_int32))]


class ValueInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("tag", ctypes.c_int32), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("dynamism", ctypes.c_int32), ("sizes", ctypes.c_int64 * MAX_RANK),
                ("dim_order", ctypes.c_uint8 * MAX_RANK), ("nbytes", ctypes.c_size_t)]


class MethodInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("num_inputs", ctypes.c_size_t),
                ("num_outputs", ctypes.c_size_t), ("num_operators", ctypes.c_size_t),
                ("num_delegates", ctypes.c_size_t), ("num_instructions", ctypes.c_size_t),
                ("num_planned_buffers", ctypes.c_size_t), ("planned_bytes", ctypes.c_uint64)]


class EtrtError(RuntimeError):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _library_path():
    build = Path(os.environ.get("ETRT_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
    return build / "lib" / "libetrt.so.1"


class Library:
    def __init__(self, path=None):
        # RTLD_LOCAL: etrt's symbols stay private even beside ExecuTorch's libraries.
        self.lib = ctypes.CDLL(str(path or _library_path()), mode=os.RTLD_LOCAL)
        L = self.lib
        p, pp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
        L.et_error_message.restype = ctypes.c_char_p
        L.et_error_message.argtypes = [p]
        L.et_error_destroy.argtypes = [p]
        L.et_program_load_file.argtypes = [ctypes.c_char_p, pp, pp]
        L.et_program_destroy.argtypes = [p]
        L.et_program_method_count.argtypes = [p]
        L.et_program_method_count.restype = ctypes.c_size_t
        L.et_program_method_name.argtypes = [p, ctypes.c_size_t]
        L.et_program_method_name.restype = ctypes.c_char_p
        L.et_program_method_info.argtypes = [p, ctypes.c_char_p, ctypes.POINTER(MethodInfo), pp]
        L.et_program_io_info.argtypes = [p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_size_t,
                                         ctypes.POINTER(ValueInfo), pp]
        L.et_method_load.argtypes = [p, ctypes.c_char_p, pp, pp]
        L.et_method_destroy.argtypes = [p]
        L.et_method_set_input.argtypes = [p, ctypes.c_size_t, ctypes.POINTER(Value), pp]
        L.et_method_execute.argtypes = [p, pp]
        L.et_method_output.argtypes = [p, ctypes.c_size_t]
        L.et_method_output.restype = ctypes.POINTER(Value)
        L.et_method_output_count.argtypes = [p]
        L.et_method_output_count.restype = ctypes.c_size_t
        L.et_threadpool_set_size.argtypes = [ctypes.c_size_t, pp]
        L.et_threadpool_size.restype = ctypes.c_size_t

    def check(self, status, error):
        if status != 0:
            message = self.lib.et_error_message(error).decode() if error.value else f"status {status}"
            self.lib.et_error_destroy(error)
            raise EtrtError(status, message)

    def set_num_threads(self, n):
        error = ctypes.c_void_p()
        self.check(self.lib.et_threadpool_set_size(n, ctypes.byref(error)), error)

    def load_program(self, path):
        return Program(self, str(path))


class Program:
    def __init__(self, library, path):
        self.library = library
        self.handle = ctypes.c_void_p()
        error = ctypes.c_void_p()
        library.check(library.lib.et_program_load_file(path.encode(), ctypes.byref(self.handle),
                                                       ctypes.byref(error)), error)

    def __del__(self):
        if getattr(self, "handle", None) and self.handle.value:
            self.library.lib.et_program_destroy(self.handle)

    @property
    def method_names(self):
        lib = self.library.lib
        return [lib.et_program_method_name(self.handle, i).decode()
                for i in range(lib.et_program_method_count(self.handle))]

    def io_info(self, method, output, index):
        info = ValueInfo(struct_size=ctypes.sizeof(ValueInfo))
        error = ctypes.c_void_p()
        self.library.check(self.library.lib.et_program_io_info(self.handle, method.encode(), int(output), index,
                                                               ctypes.byref(info), ctypes.byref(error)), error)
        return info

    def load_method(self, name="forward"):
        return Method(self, name)


class Method:
    def __init__(self, program, name):
        self.program = program  # keeps the program (and library) alive
        self.lib = program.library.lib
        self.handle = ctypes.c_void_p()
        error = ctypes.c_void_p()
        program.library.check(self.lib.et_method_load(program.handle, name.encode(), ctypes.byref(self.handle),
                                                      ctypes.byref(error)), error)
        self._keep = []

    def __del__(self):
        if getattr(self, "handle", None) and self.handle.value:
            self.lib.et_method_destroy(self.handle)

    def prepare_inputs(self, arrays):
        """C views of the arrays, built once; pass to set_inputs/execute_prepared."""
        prepared = []
        for array in arrays:
            array = np.require(array, requirements="C")  # keeps rank 0 (ascontiguousarray would not)
            sizes = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
            strides = (ctypes.c_int64 * max(array.ndim, 1))(*[s // array.itemsize for s in array.strides])
            tensor = Tensor(struct_size=ctypes.sizeof(Tensor), dtype=NUMPY_TO_DTYPE[array.dtype], rank=array.ndim,
                            sizes=sizes, strides=strides, data=array.ctypes.data, nbytes=array.nbytes,
                            capacity_bytes=array.nbytes)
            value = Value(struct_size=ctypes.sizeof(Value), tag=VALUE_TENSOR, tensor=ctypes.pointer(tensor))
            prepared.append((array, sizes, strides, tensor, value))
        return prepared

    def set_inputs(self, arrays):
        prepared = arrays if arrays and isinstance(arrays[0], tuple) else self.prepare_inputs(arrays)
        self._keep = prepared  # an input the program does not plan is aliased: keep it alive
        for index, entry in enumerate(prepared):
            error = ctypes.c_void_p()
            self.program.library.check(self.lib.et_method_set_input(self.handle, index, ctypes.byref(entry[4]),
                                                                    ctypes.byref(error)), error)

    def execute_prepared(self, prepared, read_outputs=True):
        """Sets prepared inputs and runs, as a caller must before every run."""
        lib, handle = self.lib, self.handle
        error = ctypes.c_void_p()
        for index, entry in enumerate(prepared):
            self.program.library.check(lib.et_method_set_input(handle, index, ctypes.byref(entry[4]),
                                                               ctypes.byref(error)), error)
        self.program.library.check(lib.et_method_execute(handle, ctypes.byref(error)), error)
        return self.outputs() if read_outputs else None

    def execute(self, arrays=None):
        if arrays is not None:
            self.set_inputs(arrays)
        error = ctypes.c_void_p()
        self.program.library.check(self.lib.et_method_execute(self.handle, ctypes.byref(error)), error)
        return self.outputs()

    def outputs(self):
        results = []
        for i in range(self.lib.et_method_output_count(self.handle)):
            value = self.lib.et_method_output(self.handle, i).contents
            if value.tag != VALUE_TENSOR:
                results.append(value.as_double if value.tag == VALUE_DOUBLE else value.as_int)
                continue
            t = value.tensor.contents
            shape = tuple(t.sizes[d] for d in range(t.rank))
            dtype = DTYPE_TO_NUMPY[t.dtype]
            count = int(np.prod(shape)) if shape else 1
            if count == 0:
                results.append(np.zeros(shape, dtype))
                continue
            buffer = (ctypes.c_uint8 * (count * dtype.itemsize)).from_address(t.data)
            results.append(np.frombuffer(buffer, dtype=dtype).reshape(shape).copy())
        return results
