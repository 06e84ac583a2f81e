// Glue shared by the package's extension modules (etrt._etrt, etrt._devtools).
// Each module links libetrt itself; both reach the one registry and thread pool
// that libetrt owns, so these functions give the same answers from either.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

#include "etrt/etrt.hpp"
#include "text.h"

namespace etrt::python {

namespace py = pybind11;

// The package's exception type: etrt._etrt.Error (a RuntimeError) carrying
// .code, .status and .plugin. Created once by etrt._etrt; other modules reuse it.
inline py::object error_type() {
  return py::module_::import("etrt._etrt").attr("Error");
}

inline void translate_errors() {
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const etrt::Error& e) {
      py::object type = error_type();
      py::object exc = type(message_to_python(e.what()));  // may quote a program's non-UTF-8 name
      exc.attr("code") = e.code();
      exc.attr("status") = et_status_name(e.code());
      exc.attr("plugin") = text_to_python(e.plugin());
      PyErr_SetObject(type.ptr(), exc.ptr());
    }
  });
}

inline void register_error_type(py::module_& m) {
  PyObject* type = PyErr_NewExceptionWithDoc("etrt._etrt.Error", "An error reported by the etrt runtime.",
                                             PyExc_RuntimeError, nullptr);
  m.add_object("Error", py::handle(type));
  translate_errors();
}

// Names and paths as text_to_python decodes them, messages as message_to_python does (text.h):
// plugins and file names are not bound to UTF-8 either.

// et_plugin_state as the Python side spells it.
inline const char* plugin_state_name(int32_t state) {
  static const char* states[] = {"declared", "loaded", "failed"};
  return (state >= 0 && state < 3) ? states[state] : "unknown";
}

inline py::dict plugin_dict(const etrt::PluginInfo& p) {
  static const char* sources[] = {"explicit", "host_manifest", "env", "default"};
  py::dict d;
  d["name"] = text_to_python(p.name);
  d["version"] = text_to_python(p.version);
  d["description"] = message_to_python(p.description);
  d["library_path"] = text_to_python(p.library_path);
  d["manifest_path"] = text_to_python(p.manifest_path);
  d["state"] = plugin_state_name(p.state);
  d["source"] = (p.source >= 0 && p.source < 4) ? sources[p.source] : "unknown";
  d["priority"] = p.priority;
  d["abi"] = py::make_tuple(p.abi_major, p.abi_minor);
  d["built_abi"] = py::make_tuple(p.built_abi_major, p.built_abi_minor);
  d["load_count"] = p.load_count;
  d["failure"] = message_to_python(p.failure);
  d["warnings"] = message_to_python(p.warnings);
  d["cpu_level"] = text_to_python(p.cpu_level);
  d["cpu_level_reason"] = message_to_python(p.cpu_level_reason);
  return d;
}

inline py::list registry_list(int32_t kind) {
  py::list out;
  for (const auto& e : etrt::Runtime::get().entries(kind)) {
    py::dict d;
    d["name"] = text_to_python(e.name);
    d["variant"] = text_to_python(e.variant);
    d["plugin"] = text_to_python(e.plugin);
    d["plugin_path"] = text_to_python(e.plugin_path);
    d["priority"] = e.priority;
    d["is_winner"] = e.is_winner;
    d["reason"] = message_to_python(e.reason);
    out.append(d);
  }
  return out;
}

// Registry, loader and thread-pool functions every extension module offers.
inline void define_runtime_functions(py::module_& m) {
  m.def("load_plugin", [](const std::string& path) { etrt::Runtime::get().load_plugin(path); }, py::arg("path"),
        py::call_guard<py::gil_scoped_release>());
  m.def("add_manifest", [](const std::string& path) { etrt::Runtime::get().add_manifest(path); }, py::arg("path"));
  m.def("load_all_plugins", [] { return message_to_python(etrt::Runtime::get().load_all_plugins()); });
  m.def("plugins", [] {
    py::list out;
    for (const auto& p : etrt::Runtime::get().plugins()) out.append(plugin_dict(p));
    return out;
  });
  m.def("rejections", [] {
    py::list out;
    for (const auto& r : etrt::Runtime::get().rejections())
      out.append(py::make_tuple(text_to_python(r.path), message_to_python(r.reason)));
    return out;
  });
  m.def("manifests", [] { return texts_to_python(etrt::Runtime::get().manifests()); });
  m.def("registry", &registry_list, py::arg("kind"));
  m.def("operator_is_builtin", [](const std::string& name) { return et_operator_is_builtin(name.c_str()) != 0; });
  m.def("report_json", [] { return text_to_python(etrt::Runtime::get().report_json()); });  // json.loads takes surrogates
  m.def("num_threads", [] { return etrt::Runtime::get().num_threads(); });
  m.def("set_num_threads", [](size_t n) { etrt::Runtime::get().set_num_threads(n); }, py::arg("n"));
  m.def("registry_identity", [] { return reinterpret_cast<uintptr_t>(et_registry_identity()); });
  m.def("threadpool_identity", [] { return reinterpret_cast<uintptr_t>(et_threadpool_identity()); });
  m.def("version", [] { return std::string(et_version()); });
  m.attr("ENTRY_OPERATOR") = static_cast<int>(ET_ENTRY_OPERATOR);
  m.attr("ENTRY_BACKEND") = static_cast<int>(ET_ENTRY_BACKEND);
  m.attr("ENTRY_TRACER") = static_cast<int>(ET_ENTRY_TRACER);
}

}  // namespace etrt::python
