// etrt._bundled: binding glue over libetrt_bundled_program (extensions/bundled_program) for
// etrt.portable_lib's bundled programs: the test cases' values as NumPy arrays and Python scalars,
// and the check of a run's outputs against the expected ones (the C++ library's compare_value).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "etrt/bundled_program.h"
#include "etrt/etrt.hpp"
#include "etrt/plugin.hpp"
#include "glue.h"

namespace py = pybind11;
using etrt::bundled::BundledProgram;
using etrt::bundled::TestValue;

namespace {

// NumPy spells these dtypes as etrt does; bfloat16 it lacks.
const char* numpy_name(int32_t dtype) {
  return dtype != ET_DTYPE_BFLOAT16 && etrt::plugin::element_size(dtype) != 0 ? etrt::plugin::dtype_name(dtype) : nullptr;
}

int32_t dtype_of(const py::dtype& dt, size_t index) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f' && size == 2) return ET_DTYPE_FLOAT16;
  if (kind == 'f' && size == 4) return ET_DTYPE_FLOAT32;
  if (kind == 'f' && size == 8) return ET_DTYPE_FLOAT64;
  if (kind == 'i' && size == 1) return ET_DTYPE_INT8;
  if (kind == 'i' && size == 2) return ET_DTYPE_INT16;
  if (kind == 'i' && size == 4) return ET_DTYPE_INT32;
  if (kind == 'i' && size == 8) return ET_DTYPE_INT64;
  if (kind == 'u' && size == 1) return ET_DTYPE_UINT8;
  if (kind == 'b') return ET_DTYPE_BOOL;
  throw etrt::Error(ET_ERR_INVALID_ARGUMENT, "output " + std::to_string(index) + " has dtype " +
                                                 py::str(py::object(dt)).cast<std::string>() +
                                                 ", which a bundled program cannot expect");
}

py::object to_python(const TestValue& value) {
  switch (value.tag) {
    case ET_VALUE_INT: return py::int_(value.as_int);
    case ET_VALUE_BOOL: return py::bool_(value.as_int != 0);
    case ET_VALUE_DOUBLE: return py::float_(value.as_double);
    default: break;
  }
  const char* name = numpy_name(value.dtype);
  if (name == nullptr)
    throw etrt::Error(ET_ERR_NOT_SUPPORTED, "a bundled tensor of dtype " + std::to_string(value.dtype) +
                                                " has no NumPy equivalent");
  // A copy: the array outlives the bundle if it must.
  py::array out(py::dtype(name), std::vector<py::ssize_t>(value.sizes.begin(), value.sizes.end()));
  if (value.nbytes > 0) std::memcpy(out.mutable_data(), value.data, value.nbytes);
  return out;
}

py::list to_python(const std::vector<TestValue>& values) {
  py::list out;
  for (const TestValue& value : values) out.append(to_python(value));
  return out;
}

// A run's output (NumPy array or scalar) as a TestValue borrowing the array's data; `keep` holds the
// contiguous copy alive.
TestValue from_python(py::handle item, size_t index, std::vector<py::array>* keep) {
  TestValue value;
  if (py::isinstance<py::bool_>(item)) {
    value.tag = ET_VALUE_BOOL;
    value.as_int = item.cast<bool>() ? 1 : 0;
  } else if (py::isinstance<py::int_>(item)) {
    value.tag = ET_VALUE_INT;
    value.as_int = item.cast<int64_t>();
  } else if (py::isinstance<py::float_>(item)) {
    value.tag = ET_VALUE_DOUBLE;
    value.as_double = item.cast<double>();
  } else {
    py::array array = py::array::ensure(item, py::array::c_style | py::array::forcecast);
    if (!array) throw etrt::Error(ET_ERR_INVALID_ARGUMENT, "output " + std::to_string(index) + " is not a tensor or scalar");
    keep->push_back(array);
    value.tag = ET_VALUE_TENSOR;
    value.dtype = dtype_of(array.dtype(), index);
    for (py::ssize_t d = 0; d < array.ndim(); ++d) value.sizes.push_back(array.shape(d));
    value.data = array.data();
    value.nbytes = static_cast<size_t>(array.nbytes());
  }
  return value;
}

}  // namespace

PYBIND11_MODULE(_bundled, m) {
  m.doc() = "Bundled programs (.bpte) for etrt.portable_lib: glue over libetrt_bundled_program.";
  py::module_::import("etrt._etrt");  // the package's Error type
  etrt::python::translate_errors();

  m.def("is_bundled_program", [](py::buffer data) {
    py::buffer_info info = data.request();
    return etrt::bundled::is_bundled_program(info.ptr, static_cast<size_t>(info.size * info.itemsize));
  });

  py::class_<BundledProgram>(m, "BundledProgram")
      .def_static(
          "load_bytes",
          [](py::buffer data, const std::string& origin) {
            py::buffer_info info = data.request();
            return BundledProgram::load_bytes(info.ptr, static_cast<size_t>(info.size * info.itemsize), origin);
          },
          py::arg("data"), py::arg("origin") = "(bundled program bytes)")
      .def("program_bytes",
           [](const BundledProgram& self) {
             return py::bytes(reinterpret_cast<const char*>(self.program_data()), self.program_size());
           })
      .def("method_names",
           [](const BundledProgram& self) {
             std::vector<std::string> names;
             for (const auto& suite : self.test_suites()) names.push_back(suite.method_name);
             return names;
           })
      .def("num_test_cases", [](const BundledProgram& self, const std::string& method) {
        return self.suite(method).cases.size();
      })
      .def("inputs", [](const BundledProgram& self, const std::string& method, size_t index) {
        return to_python(self.test_case(method, index).inputs);
      })
      .def("expected_outputs", [](const BundledProgram& self, const std::string& method, size_t index) {
        return to_python(self.test_case(method, index).expected_outputs);
      })
      // {"passed": bool, "report": text naming every output that differs}
      .def(
          "check",
          [](const BundledProgram& self, const std::string& method, size_t index, py::sequence outputs, double rtol,
             double atol) {
            const auto& expected = self.test_case(method, index).expected_outputs;
            etrt::bundled::CaseReport report;
            report.method_name = method;
            report.case_index = index;
            if (py::len(outputs) != expected.size()) {
              report.error = "the run gave " + std::to_string(py::len(outputs)) + " outputs; the test case expects " +
                             std::to_string(expected.size());
            } else {
              report.passed = true;
              std::vector<py::array> keep;
              for (size_t i = 0; i < expected.size(); ++i) {
                TestValue actual = from_python(outputs[i], i, &keep);
                report.outputs.push_back(etrt::bundled::compare_value(actual, expected[i], i, rtol, atol));
                report.passed = report.passed && report.outputs.back().passed;
              }
            }
            py::dict out;
            out["passed"] = report.passed;
            out["report"] = report.describe();
            return out;
          },
          py::arg("method"), py::arg("index"), py::arg("outputs"), py::arg("rtol"), py::arg("atol"));
}
