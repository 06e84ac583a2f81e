// etrt._devtools: the package's second extension module, for tooling: it
// explains which plugin would serve each operator and delegate of a program
// without loading anything. It links libetrt on its own, so it sees the same
// registry and thread pool as etrt._etrt (the package tests that).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "etrt/etrt.hpp"
#include "glue.h"
#include "text.h"

namespace py = pybind11;
using etrt::python::text_to_python;

namespace {

// {"name", "kind", "builtin", "plugin", "library_path", "state"}; plugin is None when nothing would serve it.
py::dict provider_of(int32_t kind, const std::string& name) {
  py::dict d;
  d["name"] = text_to_python(name);  // a program's name: see text.h
  d["kind"] = kind == ET_ENTRY_BACKEND ? "backend" : "operator";
  int32_t builtin = 0;
  et_plugin_record record{};
  record.struct_size = sizeof record;
  const int32_t status = et_planned_server(kind, name.c_str(), &builtin, &record);
  d["builtin"] = builtin != 0;
  d["plugin"] = py::none();
  d["library_path"] = py::none();
  d["state"] = py::none();
  if (status != ET_OK || builtin) return d;
  d["plugin"] = text_to_python(record.name);
  d["library_path"] = text_to_python(record.library_path);
  d["state"] = etrt::python::plugin_state_name(record.state);
  return d;
}

// Per method of a loaded program: each operator and delegate with its planned provider.
py::dict program_plan(const etrt::Program& program) {
  py::dict plan;
  for (const std::string& method : program.method_names()) {
    py::list entries;
    for (const std::string& op : program.operators(method)) entries.append(provider_of(ET_ENTRY_OPERATOR, op));
    for (const std::string& id : program.delegates(method)) entries.append(provider_of(ET_ENTRY_BACKEND, id));
    plan[text_to_python(method)] = entries;
  }
  return plan;
}

}  // namespace

PYBIND11_MODULE(_devtools, m) {
  m.doc() = "etrt developer tools over libetrt (use etrt.devtools)";
  etrt::python::translate_errors();
  m.def("provider_of", [](py::handle name, const std::string& kind) {
    if (kind != "operator" && kind != "backend")
      throw etrt::Error(ET_ERR_INVALID_ARGUMENT, "kind must be 'operator' or 'backend', got '" + kind + "'");
    return provider_of(kind == "backend" ? ET_ENTRY_BACKEND : ET_ENTRY_OPERATOR,
                       etrt::python::text_from_python(name, kind == "backend" ? "backend name" : "operator name"));
  }, py::arg("name"), py::arg("kind") = "operator");
  m.def("program_plan_file", [](const std::string& path) {
    etrt::Program program = [&] {
      py::gil_scoped_release release;
      return etrt::Program::load(path);
    }();
    return program_plan(program);
  }, py::arg("path"));
  m.def("program_plan_bytes", [](py::bytes data) {
    std::string bytes = data;
    etrt::Program program = etrt::Program::load_bytes(bytes.data(), bytes.size());
    return program_plan(program);
  }, py::arg("data"));
  etrt::python::define_runtime_functions(m);
}
