// Strings between libetrt and Python. A program's names (methods, operators, delegates) and the
// loader's paths are bytes chosen by whoever made the file: nothing makes them UTF-8. They cross as
// os.fsdecode carries file names: decoded with surrogateescape, so every byte survives, and encoded
// back the same way, so a name Python was given is accepted back and names the same method.
// Messages (exceptions, failure reasons) are decoded with backslashreplace: they are read, never
// passed back.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

#include "etrt/etrt.hpp"

namespace etrt::python {

namespace py = pybind11;

inline py::str text_to_python(std::string_view bytes) {
  PyObject* text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "surrogateescape");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

inline py::list texts_to_python(const std::vector<std::string>& names) {
  py::list out;
  for (const std::string& name : names) out.append(text_to_python(name));
  return out;
}

inline py::str message_to_python(std::string_view bytes) {
  PyObject* text = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "backslashreplace");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

// A name given by Python: a str (encoded back with surrogateescape) or bytes. `what` says what it names,
// for the error. The C API takes names as C strings, so a NUL cannot be part of one.
inline std::string text_from_python(py::handle name, const char* what) {
  std::string bytes;
  if (PyBytes_Check(name.ptr())) {
    bytes.assign(PyBytes_AS_STRING(name.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(name.ptr())));
  } else if (PyUnicode_Check(name.ptr())) {
    PyObject* encoded = PyUnicode_AsEncodedString(name.ptr(), "utf-8", "surrogateescape");
    if (encoded == nullptr) {  // a surrogate that no byte decodes to (outside U+DC80..U+DCFF)
      PyErr_Clear();
      throw etrt::Error(ET_ERR_INVALID_ARGUMENT,
                        std::string(what) + " " + py::repr(name).cast<std::string>() + " is not valid text: it has a lone surrogate");
    }
    bytes.assign(PyBytes_AS_STRING(encoded), static_cast<size_t>(PyBytes_GET_SIZE(encoded)));
    Py_DECREF(encoded);
  } else {
    throw etrt::Error(ET_ERR_INVALID_ARGUMENT,
                      std::string(what) + " must be a str or bytes, got " + Py_TYPE(name.ptr())->tp_name);
  }
  if (bytes.find('\0') != std::string::npos)
    throw etrt::Error(ET_ERR_INVALID_ARGUMENT,
                      std::string(what) + " " + py::repr(name).cast<std::string>() + " contains a NUL character, which no name can hold");
  return bytes;
}

}  // namespace etrt::python
