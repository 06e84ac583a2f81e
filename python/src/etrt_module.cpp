// etrt._etrt: binding glue over libetrt's C API (through the header-only
// etrt.hpp). Nothing here computes: no kernels, no registry, no thread pool.
// The executorch.runtime-shaped classes live in python/etrt/__init__.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "etrt/plugin.hpp"
#include "glue.h"
#include "text.h"

namespace py = pybind11;
using etrt::python::plugin_dict;
using etrt::python::registry_list;
using etrt::python::text_from_python;
using etrt::python::text_to_python;
using etrt::python::texts_to_python;

namespace {

[[noreturn]] void raise_error(int32_t code, const std::string& message) { throw etrt::Error(code, message); }

// NumPy dtype -> ExecuTorch ScalarType code (the et_dtype enum).
int32_t dtype_code(const py::dtype& dt, size_t input) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f') {
    if (size == 2) return ET_DTYPE_FLOAT16;
    if (size == 4) return ET_DTYPE_FLOAT32;
    if (size == 8) return ET_DTYPE_FLOAT64;
  } else if (kind == 'i') {
    if (size == 1) return ET_DTYPE_INT8;
    if (size == 2) return ET_DTYPE_INT16;
    if (size == 4) return ET_DTYPE_INT32;
    if (size == 8) return ET_DTYPE_INT64;
  } else if (kind == 'u' && size == 1) {
    return ET_DTYPE_UINT8;
  } else if (kind == 'b') {
    return ET_DTYPE_BOOL;
  }
  raise_error(ET_ERR_INVALID_ARGUMENT, "input " + std::to_string(input) + ": unsupported dtype " +
                                           py::str(py::object(dt)).cast<std::string>() +
                                           " (etrt takes bool, uint8, int8/16/32/64, float16/32/64)");
}

py::dtype numpy_dtype(int32_t code) {
  switch (code) {
    case ET_DTYPE_UINT8: return py::dtype("uint8");
    case ET_DTYPE_INT8: return py::dtype("int8");
    case ET_DTYPE_INT16: return py::dtype("int16");
    case ET_DTYPE_INT32: return py::dtype("int32");
    case ET_DTYPE_INT64: return py::dtype("int64");
    case ET_DTYPE_FLOAT16: return py::dtype("float16");
    case ET_DTYPE_FLOAT32: return py::dtype("float32");
    case ET_DTYPE_FLOAT64: return py::dtype("float64");
    case ET_DTYPE_BOOL: return py::dtype("bool");
    default: raise_error(ET_ERR_INVALID_ARGUMENT, "output dtype " + std::to_string(code) + " has no NumPy equivalent");
  }
}

py::dict value_info_dict(const et_value_info& info) {
  py::dict d;
  d["tag"] = info.tag;
  d["dtype"] = info.dtype;
  d["dynamism"] = info.dynamism;
  py::tuple sizes(info.tag == ET_VALUE_TENSOR ? info.rank : 0), order(info.tag == ET_VALUE_TENSOR ? info.rank : 0);
  for (int32_t i = 0; info.tag == ET_VALUE_TENSOR && i < info.rank; ++i) {
    sizes[i] = info.sizes[i];
    order[i] = info.dim_order[i];
  }
  d["sizes"] = sizes;
  d["dim_order"] = order;
  d["nbytes"] = info.nbytes;
  d["memory_id"] = info.memory_id;
  return d;
}

py::dict method_info_dict(const et_method_info& info) {
  py::dict d;
  d["num_inputs"] = info.num_inputs;
  d["num_outputs"] = info.num_outputs;
  d["num_operators"] = info.num_operators;
  d["num_delegates"] = info.num_delegates;
  d["num_instructions"] = info.num_instructions;
  d["num_planned_buffers"] = info.num_planned_buffers;
  d["planned_bytes"] = info.planned_bytes;
  return d;
}

// A Python int as the int64 an integer scalar is (ExecuTorch's Int), refused by name when it does not fit.
int64_t int64_input(py::handle item, size_t input) {
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
  if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0) {
    const auto bits = item.attr("bit_length")().cast<size_t>();
    // str() of a huge int is slow, and refused past sys.get_int_max_str_digits().
    const std::string shown = bits <= 1024 ? py::str(item).cast<std::string>()
                                           : "an integer of " + std::to_string(bits) + " bits";
    raise_error(ET_ERR_INVALID_ARGUMENT, "input " + std::to_string(input) + ": " + shown +
                                             " is out of range: integer inputs are int64 (-2**63 .. 2**63-1)");
  }
  return value;
}

// A loaded method; executions of one method are serialised, the GIL is
// released while the runtime computes (and while waiting for the method).
struct PyMethod {
  explicit PyMethod(etrt::Method m) : method(std::move(m)) {}
  etrt::Method method;
  std::mutex mutex;

  // `bfloat16_inputs`: indices whose 2-byte integer arrays carry bfloat16 bits (the
  // package passes torch.bfloat16 tensors that way: NumPy has no bfloat16).
  py::list execute(const py::sequence& inputs, const std::vector<size_t>& bfloat16_inputs) {
    const size_t count = py::len(inputs);
    if (count != method.num_inputs())
      raise_error(ET_ERR_INVALID_ARGUMENT, "method takes " + std::to_string(method.num_inputs()) + " inputs, got " +
                                               std::to_string(count));
    // Everything the C values point to lives here until execute returns
    // (inputs the program does not plan are aliased, not copied).
    std::vector<py::array> arrays(count);
    std::vector<std::vector<int64_t>> sizes(count), strides(count);
    std::vector<et_tensor> tensors(count);
    std::vector<et_value> values(count);
    for (size_t i = 0; i < count; ++i) {
      py::handle item = inputs[i];
      et_value& v = values[i];
      std::memset(&v, 0, sizeof v);
      v.struct_size = sizeof v;
      if (py::isinstance<py::bool_>(item)) {
        v.tag = ET_VALUE_BOOL;
        v.as_int = item.cast<bool>() ? 1 : 0;
      } else if (py::isinstance<py::int_>(item)) {
        v.tag = ET_VALUE_INT;
        v.as_int = int64_input(item, i);
      } else if (py::isinstance<py::float_>(item)) {
        v.tag = ET_VALUE_DOUBLE;
        v.as_double = item.cast<double>();
      } else if (item.is_none()) {
        v.tag = ET_VALUE_NULL;
      } else {
        // Buffer protocol / __array__: a C-contiguous array (copied only if needed).
        py::array a = py::array::ensure(item, py::array::c_style);
        if (!a) {
          PyErr_Clear();
          raise_error(ET_ERR_INVALID_ARGUMENT, "input " + std::to_string(i) + ": expected an array, a number or None, got " +
                                                   std::string(Py_TYPE(item.ptr())->tp_name));
        }
        // Big-endian (non-native) data, e.g. x.astype('>f4'): the kernels read native order, so convert.
        if (!a.dtype().attr("isnative").cast<bool>())
          a = py::array::ensure(a.attr("astype")(a.dtype().attr("newbyteorder")("=")), py::array::c_style);
        const auto rank = a.ndim();
        if (rank > ET_MAX_RANK) raise_error(ET_ERR_INVALID_ARGUMENT, "input " + std::to_string(i) + ": rank too large");
        arrays[i] = a;
        sizes[i].assign(a.shape(), a.shape() + rank);
        strides[i].resize(rank);
        for (py::ssize_t d = 0; d < rank; ++d) strides[i][d] = a.strides(d) / a.itemsize();
        et_tensor& t = tensors[i];
        std::memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        const bool bfloat16 = std::find(bfloat16_inputs.begin(), bfloat16_inputs.end(), i) != bfloat16_inputs.end();
        if (bfloat16 && (a.dtype().kind() != 'i' && a.dtype().kind() != 'u'))
          raise_error(ET_ERR_INVALID_ARGUMENT, "input " + std::to_string(i) + ": bfloat16 bits must come as a 2-byte integer array");
        t.dtype = bfloat16 && a.itemsize() == 2 ? ET_DTYPE_BFLOAT16 : dtype_code(a.dtype(), i);
        t.rank = static_cast<int32_t>(rank);
        t.sizes = sizes[i].data();
        t.strides = strides[i].data();
        t.data = const_cast<void*>(a.data());
        t.nbytes = static_cast<size_t>(a.nbytes());
        t.capacity_bytes = t.nbytes;
        v.tag = ET_VALUE_TENSOR;
        v.tensor = &t;
      }
    }
    // Lock order: the method's mutex, then the GIL. Waiting for the mutex while
    // holding the GIL would deadlock with a thread that holds the mutex and
    // needs the GIL to copy its outputs out.
    py::list out;
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t i = 0; i < count; ++i) method.set_input(i, values[i]);
    method.execute();
    py::gil_scoped_acquire acquire;  // outputs are copied before another run may overwrite them
    for (size_t i = 0; i < method.num_outputs(); ++i) out.append(output(method.output(i)));
    return out;
  }

  // A copy (no base object: NumPy copies, so the result outlives the next execute).
  // bfloat16 has no NumPy dtype: its bits come out as uint16 (the package views them as
  // torch.bfloat16, or widens them to float32).
  static py::object tensor_output(const et_tensor* tensor) {
    if (tensor == nullptr) return py::none();
    const et_tensor& t = *tensor;
    py::dtype dt = t.dtype == ET_DTYPE_BFLOAT16 ? py::dtype("uint16") : numpy_dtype(t.dtype);
    const size_t item = etrt::plugin::element_size(t.dtype);
    std::vector<py::ssize_t> shape(t.sizes, t.sizes + t.rank), strides(t.rank);
    for (int32_t d = 0; d < t.rank; ++d) strides[d] = static_cast<py::ssize_t>(t.strides[d] * item);
    if (t.nbytes == 0 || t.data == nullptr) return py::array(dt, shape);
    return py::array(dt, shape, strides, t.data);
  }

  static py::object output(const et_value& v) {
    switch (v.tag) {
      case ET_VALUE_NULL: return py::none();
      case ET_VALUE_INT: return py::int_(v.as_int);
      case ET_VALUE_BOOL: return py::bool_(v.as_int != 0);
      case ET_VALUE_DOUBLE: return py::float_(v.as_double);
      case ET_VALUE_STRING: return text_to_python(std::string_view(static_cast<const char*>(v.items), v.count));
      case ET_VALUE_TENSOR: return tensor_output(v.tensor);
      case ET_VALUE_INT_LIST: {
        py::list items;
        for (size_t i = 0; i < v.count; ++i) items.append(py::int_(static_cast<const int64_t*>(v.items)[i]));
        return items;
      }
      case ET_VALUE_DOUBLE_LIST: {
        py::list items;
        for (size_t i = 0; i < v.count; ++i) items.append(py::float_(static_cast<const double*>(v.items)[i]));
        return items;
      }
      case ET_VALUE_BOOL_LIST: {
        py::list items;
        for (size_t i = 0; i < v.count; ++i) items.append(py::bool_(static_cast<const uint8_t*>(v.items)[i] != 0));
        return items;
      }
      case ET_VALUE_TENSOR_LIST:
      case ET_VALUE_OPTIONAL_TENSOR_LIST: {
        py::list items;
        for (size_t i = 0; i < v.count; ++i) items.append(tensor_output(static_cast<et_tensor* const*>(v.items)[i]));
        return items;
      }
      default:
        raise_error(ET_ERR_INVALID_ARGUMENT, "output of value tag " + std::to_string(v.tag) + " has no Python form");
    }
  }
};

}  // namespace

PYBIND11_MODULE(_etrt, m) {
  m.doc() = "etrt binding glue over libetrt (use the `etrt` package, not this module)";

  etrt::python::register_error_type(m);

  py::class_<etrt::TraceSession>(m, "TraceSession")
      .def(py::init([](const std::string& tracer, size_t debug_buffer_size, const std::string& label) {
             py::gil_scoped_release release;  // may load the tracer's plugin
             return etrt::TraceSession(tracer, debug_buffer_size, label);
           }),
           py::arg("tracer"), py::arg("debug_buffer_size") = 0, py::arg("label") = "")
      .def("result", [](const etrt::TraceSession& self, const std::string& what) {
        std::string bytes;
        {
          py::gil_scoped_release release;  // waits for a traced run in progress
          bytes = self.result(what);
        }
        return py::bytes(bytes);
      });

  py::class_<PyMethod>(m, "Method")
      .def("execute", &PyMethod::execute, py::arg("inputs"), py::arg("bfloat16_inputs") = std::vector<size_t>{})
      .def("set_trace_session", [](PyMethod& self, const etrt::TraceSession* session) {
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(self.mutex);  // not while it runs
        self.method.set_trace_session(session);
      }, py::arg("session").none(true))
      .def_property_readonly("num_inputs", [](PyMethod& self) { return self.method.num_inputs(); })
      .def_property_readonly("num_outputs", [](PyMethod& self) { return self.method.num_outputs(); });

  py::class_<etrt::Program>(m, "Program")
      .def_static("load_file", &etrt::Program::load, py::arg("path"), py::call_guard<py::gil_scoped_release>())
      .def_static(
          "load_bytes",
          [](py::buffer data, const std::string& origin) {
            py::buffer_info info = data.request();  // any contiguous bytes-like object
            if (info.ndim > 1 && info.strides.back() != info.itemsize)
              raise_error(ET_ERR_INVALID_ARGUMENT, "program bytes must be contiguous");
            const size_t size = static_cast<size_t>(info.size * info.itemsize);
            py::gil_scoped_release release;  // the buffer stays held by `info`
            return etrt::Program::load_bytes(info.ptr, size, origin);
          },
          py::arg("data"), py::arg("origin") = "(program bytes)")
      .def("add_data_file", &etrt::Program::add_data_file, py::arg("path"), py::call_guard<py::gil_scoped_release>())
      .def(
          "add_data_bytes",
          [](etrt::Program& self, py::buffer data, const std::string& origin) {
            py::buffer_info info = data.request();
            if (info.ndim > 1 && info.strides.back() != info.itemsize)
              raise_error(ET_ERR_INVALID_ARGUMENT, "data bytes must be contiguous");
            const size_t size = static_cast<size_t>(info.size * info.itemsize);
            py::gil_scoped_release release;
            self.add_data_bytes(info.ptr, size, origin);
          },
          py::arg("data"), py::arg("origin") = "(data bytes)")
      // Method, operator and delegate names: see text.h (surrogateescape both ways).
      .def_property_readonly("method_names", [](const etrt::Program& p) { return texts_to_python(p.method_names()); })
      .def("method_info", [](const etrt::Program& p, py::handle name) {
        return method_info_dict(p.method_info(text_from_python(name, "method name")));
      })
      .def("io_info", [](const etrt::Program& p, py::handle name, bool output, size_t index) {
        return value_info_dict(p.io_info(text_from_python(name, "method name"), output, index));
      })
      .def("operators", [](const etrt::Program& p, py::handle name) {
        return texts_to_python(p.operators(text_from_python(name, "method name")));
      })
      .def("delegates", [](const etrt::Program& p, py::handle name) {
        return texts_to_python(p.delegates(text_from_python(name, "method name")));
      })
      .def("load_method", [](const etrt::Program& p, py::handle method_name) {
        const std::string name = text_from_python(method_name, "method name");
        etrt::Method method = [&] {
          py::gil_scoped_release release;  // may load plugins and initialise delegates
          return p.load_method(name);
        }();
        return std::make_unique<PyMethod>(std::move(method));
      });

  etrt::python::define_runtime_functions(m);
}
