// etrt._training: the Python face of libetrt_training (use etrt.training). It links libetrt_training,
// which links the process's one libetrt: programs trained here use the registry, plugins and thread pool
// that etrt._etrt sees.
//
// Parameters and gradients reach Python as NumPy arrays over the method's own memory (no copies; the
// array keeps its module alive). An optimizer is built from such a dict: each array must be a view of a
// live module's parameter, which is how a parameter of another module, or a copy, is told apart.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "etrt/etrt.hpp"
#include "etrt/training/optimizer.h"
#include "etrt/training/training_module.h"
#include "glue.h"

namespace py = pybind11;
using etrt::training::NamedTensors;

namespace {

[[noreturn]] void fail(int32_t code, const std::string& message) { throw etrt::Error(code, message); }

py::dtype numpy_dtype_of(int32_t dtype) {
  switch (dtype) {
    case ET_DTYPE_FLOAT32: return py::dtype("float32");
    case ET_DTYPE_FLOAT64: return py::dtype("float64");
    case ET_DTYPE_INT64: return py::dtype("int64");
    case ET_DTYPE_INT32: return py::dtype("int32");
    case ET_DTYPE_BOOL: return py::dtype("bool");
    case ET_DTYPE_UINT8: return py::dtype("uint8");
    default: fail(ET_ERR_NOT_SUPPORTED, "tensor dtype " + std::to_string(dtype) + " has no NumPy counterpart here");
  }
}

int32_t dtype_of(const py::array& a) {
  const char kind = a.dtype().kind();
  const auto size = a.itemsize();
  if (kind == 'f' && size == 4) return ET_DTYPE_FLOAT32;
  if (kind == 'f' && size == 8) return ET_DTYPE_FLOAT64;
  if (kind == 'i' && size == 8) return ET_DTYPE_INT64;
  if (kind == 'i' && size == 4) return ET_DTYPE_INT32;
  if (kind == 'b') return ET_DTYPE_BOOL;
  if (kind == 'u' && size == 1) return ET_DTYPE_UINT8;
  fail(ET_ERR_INVALID_ARGUMENT, "unsupported array dtype " + py::str(py::object(a.dtype())).cast<std::string>());
}

// A C-contiguous array described as an et_tensor; the array keeps the data alive.
struct HeldTensor {
  py::array array;
  std::vector<int64_t> sizes, strides;
  std::vector<uint8_t> dim_order;
  et_tensor tensor{};

  explicit HeldTensor(py::handle value, const std::string& what) {
    array = py::array::ensure(value, py::array::c_style);
    if (!array) {
      PyErr_Clear();
      fail(ET_ERR_INVALID_ARGUMENT, what + ": expected a NumPy array or a CPU torch tensor, got " +
                                        std::string(Py_TYPE(value.ptr())->tp_name));
    }
    const auto rank = array.ndim();
    sizes.assign(array.shape(), array.shape() + rank);
    strides.assign(static_cast<size_t>(rank), 1);
    for (py::ssize_t d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * sizes[d];
    for (py::ssize_t d = 0; d < rank; ++d) dim_order.push_back(static_cast<uint8_t>(d));
    tensor.struct_size = sizeof tensor;
    tensor.dtype = dtype_of(array);
    tensor.rank = static_cast<int32_t>(rank);
    tensor.sizes = sizes.data();
    tensor.strides = strides.data();
    tensor.dim_order = dim_order.data();
    tensor.data = array.mutable_data();
    tensor.nbytes = tensor.capacity_bytes = static_cast<size_t>(array.nbytes());
  }
};

class PyTrainingModule;

// The live modules, so an optimizer can find the module whose memory an array views.
std::mutex live_mutex;
std::set<PyTrainingModule*> live_modules;

class PyTrainingModule {
 public:
  explicit PyTrainingModule(etrt::training::TrainingModule module) : module_(std::move(module)) {
    std::lock_guard<std::mutex> lock(live_mutex);
    live_modules.insert(this);
  }
  ~PyTrainingModule() {
    std::lock_guard<std::mutex> lock(live_mutex);
    live_modules.erase(this);
  }

  py::list forward_backward(const std::string& method, const py::sequence& inputs) {
    std::vector<std::unique_ptr<HeldTensor>> held;
    std::vector<et_value> values;
    for (size_t i = 0; i < py::len(inputs); ++i) {
      py::handle item = inputs[i];
      et_value v{};
      v.struct_size = sizeof v;
      if (py::isinstance<py::bool_>(item)) v.tag = ET_VALUE_BOOL, v.as_int = item.cast<bool>();
      else if (py::isinstance<py::int_>(item)) v.tag = ET_VALUE_INT, v.as_int = item.cast<int64_t>();
      else if (py::isinstance<py::float_>(item)) v.tag = ET_VALUE_DOUBLE, v.as_double = item.cast<double>();
      else {
        held.push_back(std::make_unique<HeldTensor>(item, "input " + std::to_string(i)));
        v.tag = ET_VALUE_TENSOR;
        v.tensor = &held.back()->tensor;
      }
      values.push_back(v);
    }
    std::vector<et_value> outputs;
    {
      py::gil_scoped_release release;
      outputs = module_.forward_backward(method, values);
    }
    py::list out;  // copies: the user outputs are overwritten by the next step
    for (const et_value& v : outputs) {
      if (v.tag == ET_VALUE_TENSOR) out.append(view(*v.tensor, py::none()).attr("copy")());
      else if (v.tag == ET_VALUE_INT) out.append(py::int_(v.as_int));
      else if (v.tag == ET_VALUE_DOUBLE) out.append(py::float_(v.as_double));
      else if (v.tag == ET_VALUE_BOOL) out.append(py::bool_(v.as_int != 0));
      else out.append(py::none());
    }
    return out;
  }

  // Views of the method's memory; each keeps `self` (the module) alive.
  py::dict named(const NamedTensors& tensors, py::object self) {
    py::dict out;
    for (const auto& [name, tensor] : tensors) out[py::str(name)] = view(*tensor, self);
    return out;
  }

  etrt::training::TrainingModule& module() { return module_; }

  // The module among the live ones whose parameters or gradients (of any method used so far) have their
  // memory at `data`: that tensor and its name in *found.
  static PyTrainingModule* owner_of(const void* data, bool gradients, std::pair<std::string, et_tensor*>* found,
                                    const void** owner_id) {
    std::lock_guard<std::mutex> lock(live_mutex);
    for (PyTrainingModule* m : live_modules)
      for (const std::string& method : m->loaded_methods_)
        try {
          const NamedTensors& t = gradients ? m->module_.named_gradients(method) : m->module_.named_parameters(method);
          for (const auto& [n, tensor] : t)
            if (tensor->data == data) {
              *found = {n, tensor};
              *owner_id = t.owner();
              return m;
            }
        } catch (const etrt::Error&) {  // no gradients yet
        }
    return nullptr;
  }

  void note_method(const std::string& method) {
    if (std::find(loaded_methods_.begin(), loaded_methods_.end(), method) == loaded_methods_.end())
      loaded_methods_.push_back(method);
  }

 private:
  static py::array view(const et_tensor& t, py::object base) {
    std::vector<py::ssize_t> shape(t.sizes, t.sizes + t.rank);
    std::vector<py::ssize_t> strides(static_cast<size_t>(t.rank));
    const py::dtype dt = numpy_dtype_of(t.dtype);
    for (int32_t d = 0; d < t.rank; ++d) strides[d] = static_cast<py::ssize_t>(t.strides[d]) * dt.itemsize();
    return py::array(dt, shape, strides, t.data, base);
  }

  etrt::training::TrainingModule module_;
  std::vector<std::string> loaded_methods_;
};

// An optimizer with the module it updates (kept alive).
struct PyOptimizer {
  std::unique_ptr<etrt::training::Optimizer> optimizer;
  py::object module_object;
  PyTrainingModule* module;

  void step(const py::dict& gradients) {
    std::vector<std::unique_ptr<HeldTensor>> held;
    std::vector<std::pair<std::string, et_tensor*>> entries;
    for (auto [key, value] : gradients) {
      const std::string name = key.cast<std::string>();
      held.push_back(std::make_unique<HeldTensor>(value, "gradient '" + name + "'"));
      std::pair<std::string, et_tensor*> found;
      const void* owner_id = nullptr;
      PyTrainingModule* owner = PyTrainingModule::owner_of(held.back()->tensor.data, true, &found, &owner_id);
      if (owner != nullptr && owner != module)
        fail(ET_ERR_INVALID_ARGUMENT, "gradient '" + name + "' belongs to another TrainingModule than the "
                                      "parameters this optimizer updates");
      entries.emplace_back(name, &held.back()->tensor);
    }
    NamedTensors named(optimizer->parameters().owner(), std::move(entries));
    py::gil_scoped_release release;
    optimizer->step(named);
  }
};

// The module a dict of parameter views belongs to, and those parameters as the module's own tensors;
// refuses copies and a mix of modules.
std::pair<PyTrainingModule*, NamedTensors> resolve_parameters(const py::dict& parameters) {
  PyTrainingModule* module = nullptr;
  const void* owner_id = nullptr;
  std::vector<std::pair<std::string, et_tensor*>> entries;
  for (auto [key, value] : parameters) {
    const std::string name = key.cast<std::string>();
    HeldTensor given(value, "parameter '" + name + "'");
    std::pair<std::string, et_tensor*> found;
    PyTrainingModule* owner = PyTrainingModule::owner_of(given.tensor.data, false, &found, &owner_id);
    if (owner == nullptr)
      fail(ET_ERR_INVALID_ARGUMENT, "parameter '" + name + "' is not a view of a TrainingModule's parameter (a copy?): "
                                    "pass named_parameters() itself");
    if (module != nullptr && owner != module)
      fail(ET_ERR_INVALID_ARGUMENT, "parameter '" + name + "' belongs to another TrainingModule than the others");
    if (found.first != name)
      fail(ET_ERR_INVALID_ARGUMENT, "parameter '" + name + "' is the module's parameter '" + found.first + "'");
    module = owner;
    entries.push_back(found);
  }
  if (module == nullptr) fail(ET_ERR_INVALID_ARGUMENT, "no parameters given");
  return {module, NamedTensors(owner_id, std::move(entries))};
}

}  // namespace

PYBIND11_MODULE(_training, m) {
  m.doc() = "libetrt_training's TrainingModule and optimizers (use etrt.training)";
  py::module_::import("etrt._etrt");  // the package's Error type
  etrt::python::translate_errors();

  py::class_<PyTrainingModule>(m, "TrainingModule")
      .def_static("load",
                  [](const std::string& path, const std::string& data_path) {
                    return std::make_unique<PyTrainingModule>(etrt::training::TrainingModule::load(path, data_path));
                  },
                  py::arg("path"), py::arg("data_path") = "")
      .def_static("load_bytes",
                  [](py::buffer program, py::object data) {
                    py::buffer_info info = program.request();
                    if (data.is_none())
                      return std::make_unique<PyTrainingModule>(
                          etrt::training::TrainingModule::load_bytes(info.ptr, static_cast<size_t>(info.size * info.itemsize)));
                    py::buffer_info data_info = data.cast<py::buffer>().request();
                    return std::make_unique<PyTrainingModule>(etrt::training::TrainingModule::load_bytes(
                        info.ptr, static_cast<size_t>(info.size * info.itemsize), data_info.ptr,
                        static_cast<size_t>(data_info.size * data_info.itemsize)));
                  },
                  py::arg("program"), py::arg("data") = py::none())
      .def("forward_backward",
           [](PyTrainingModule& self, const std::string& method, const py::sequence& inputs) {
             py::list out = self.forward_backward(method, inputs);
             self.note_method(method);
             return out;
           })
      .def("named_parameters",
           [](py::object self, const std::string& method) {
             auto& m = self.cast<PyTrainingModule&>();
             py::dict out = m.named(m.module().named_parameters(method), self);
             m.note_method(method);
             return out;
           },
           py::arg("method") = "forward")
      .def("save_parameters",
           [](PyTrainingModule& self, const std::string& path, const std::string& method) {
             py::gil_scoped_release release;
             self.module().save_parameters(path, method);
           },
           py::arg("path"), py::arg("method") = "forward")
      .def("named_gradients",
           [](py::object self, const std::string& method) {
             auto& m = self.cast<PyTrainingModule&>();
             return m.named(m.module().named_gradients(method), self);
           },
           py::arg("method") = "forward");

  py::class_<PyOptimizer>(m, "Optimizer")
      .def("step", &PyOptimizer::step, py::arg("named_gradients"));

  m.def("get_sgd_optimizer",
        [](const py::dict& named_parameters, double lr, double momentum, double dampening, double weight_decay,
           bool nesterov) {
          auto [module, parameters] = resolve_parameters(named_parameters);
          auto optimizer = std::make_unique<etrt::training::SGD>(
              std::move(parameters), etrt::training::SGDOptions{lr, momentum, dampening, weight_decay, nesterov});
          return PyOptimizer{std::move(optimizer), py::cast(module, py::return_value_policy::reference), module};
        },
        py::arg("named_parameters"), py::arg("lr"), py::arg("momentum") = 0.0, py::arg("dampening") = 0.0,
        py::arg("weight_decay") = 0.0, py::arg("nesterov") = false);
  m.def("get_adam_optimizer",
        [](const py::dict& named_parameters, double lr, double beta1, double beta2, double eps, double weight_decay,
           bool decoupled_weight_decay) {
          auto [module, parameters] = resolve_parameters(named_parameters);
          auto optimizer = std::make_unique<etrt::training::Adam>(
              std::move(parameters), etrt::training::AdamOptions{lr, beta1, beta2, eps, weight_decay},
              decoupled_weight_decay);
          return PyOptimizer{std::move(optimizer), py::cast(module, py::return_value_policy::reference), module};
        },
        py::arg("named_parameters"), py::arg("lr") = 1e-3, py::arg("beta1") = 0.9, py::arg("beta2") = 0.999,
        py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.0, py::arg("decoupled_weight_decay") = false);
}
